/**
 * The HTTP face's 2025-era path: one surface server for the face's whole life, answering every stateless
 * 2025 request (each POST a self-contained exchange, no sessions) through an {@link ExchangeTransport}
 * that routes each response back to the HTTP response it belongs to. The SDK's own stateless fallback
 * builds a fresh server and a fresh transport for every request, and always answers in SSE; here the
 * server, its handlers and its codec are built once, and an answer is one JSON body unless the request
 * can be answered with notifications first (a `tools/call` that asked for progress), which gets an SSE
 * stream.
 */
import type {
  JSONRPCMessage,
  JSONRPCRequest,
  Server,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server';

/** Where the messages of one exchange go. */
export interface ExchangeSink {
  /** A notification related to the request (progress), before its answer. */
  notify(message: JSONRPCMessage): void;
  /** The answer (a JSON-RPC result or error response), under the client's own request id. */
  answer(message: JSONRPCMessage): void;
}

interface Exchange {
  clientId: string | number;
  sink: ExchangeSink;
}

/**
 * A server transport that multiplexes independent request/answer exchanges over one long-lived server:
 * each request gets an id of its own inside the server (clients' ids may collide), and the server's answer
 * and its related notifications go to that exchange's sink. Messages the server sends unrelated to any
 * exchange (list-change notifications) have no stream in stateless 2025 serving and are dropped.
 */
export class ExchangeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private nextId = 1;
  private readonly exchanges = new Map<number, Exchange>();
  private isClosed = false;

  async start(): Promise<void> {}

  /** Exchanges in flight. */
  get inFlight(): number {
    return this.exchanges.size;
  }

  /**
   * Hands `request` to the server; its answer goes to `sink`. When `signal` aborts first (the client went
   * away), the server is told the request is cancelled and the exchange is forgotten.
   */
  exchange(request: JSONRPCRequest, sink: ExchangeSink, signal?: AbortSignal): void {
    if (this.isClosed) throw new Error('the HTTP face is closed');
    const id = this.nextId++;
    this.exchanges.set(id, { clientId: request.id, sink });
    if (signal !== undefined) {
      const onAbort = () => {
        if (!this.exchanges.delete(id)) return;
        this.onmessage?.({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: id, reason: 'the HTTP client closed the connection' },
        });
      };
      if (signal.aborted) {
        queueMicrotask(onAbort);
      } else {
        signal.addEventListener('abort', onAbort, { once: true });
        // Forget the listener once answered, so a long-lived signal does not collect them.
        const { answer } = sink;
        sink.answer = (message) => {
          signal.removeEventListener('abort', onAbort);
          answer(message);
        };
      }
    }
    this.onmessage?.({ ...request, id });
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const m = message as { id?: unknown; method?: unknown };
    if (m.method === undefined && (typeof m.id === 'number' || typeof m.id === 'string')) {
      const id = Number(m.id);
      const exchange = this.exchanges.get(id);
      if (exchange === undefined) return;
      this.exchanges.delete(id);
      exchange.sink.answer({ ...message, id: exchange.clientId } as JSONRPCMessage);
      return;
    }
    const related = options?.relatedRequestId;
    if (m.method !== undefined && m.id === undefined && related !== undefined) {
      this.exchanges.get(Number(related))?.sink.notify(message);
    }
    // Anything else (a list change, a server request) has no stream to go to in stateless serving.
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.exchanges.clear();
    this.onclose?.();
  }
}

/** One server and its exchange transport, connected. */
export interface LegacyExchanges {
  transport: ExchangeTransport;
  server: Server;
  close(): Promise<void>;
}

/** Connects `server` to a fresh {@link ExchangeTransport}. */
export async function connectLegacyExchanges(server: Server): Promise<LegacyExchanges> {
  const transport = new ExchangeTransport();
  await server.connect(transport);
  return {
    transport,
    server,
    async close() {
      await server.close();
    },
  };
}
