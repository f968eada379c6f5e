/**
 * `tools/call` to a 2025-era project service sent straight on its stdio transport, beside the official
 * client rather than through it: the request goes out under an id of our own (`scienceevolve-<n>`, a
 * string the client's numeric ids never take), and its answer is taken off the transport before the
 * client sees it. What the client would do for the call is done here, and nothing else: the request's
 * timeout and the caller's abort each send `notifications/cancelled` and fail the call as the client
 * fails it (`REQUEST_TIMEOUT`), a JSON-RPC error becomes the client's `ProtocolError`, the 2025 era's
 * result decoding (a stray `resultType` is dropped) is applied, and a closed connection fails every call
 * in flight (`CONNECTION_CLOSED`). What it saves per call is the client's protocol layer: its message
 * classification (four schema tests of every message), its request bookkeeping and the codec's promise
 * chain. Progress still reaches the client (progress is routed by our own tokens, see mcpCatalog.ts), and
 * so do a service's requests during a call (questions, see elicitation.ts).
 */
import {
  DEFAULT_REQUEST_TIMEOUT_MSEC,
  type JSONRPCMessage,
  ProtocolError,
  SdkError as McpSdkError,
  SdkErrorCode,
} from '@modelcontextprotocol/client';
import { type CallCancel, listenAbort } from './callCancel.js';
import { noteParsedFrom } from './sizeBound.js';

/** The prefix of our request ids. */
const ID_PREFIX = 'scienceevolve-';

/** A JSON-RPC response, as the transport checked it. */
export interface DirectResponse {
  id?: string | number;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

type Settle = (response: DirectResponse | Error, lineLength?: number) => void;

/** Options of one direct request: those of the official client's `request` that the sessions pass. */
export interface DirectRequestOptions {
  /** Milliseconds before the request is cancelled and fails `REQUEST_TIMEOUT`. Default: the official client's (60,000). */
  timeout?: number | undefined;
  /** Cancels the request at the service; the call fails with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** The same as `signal`, without an `AbortSignal` (sessions/callCancel.ts); taken instead of `signal` when given. */
  cancel?: CallCancel | undefined;
}

/** The 2025 era's decoding of a result (as the official client's codec): a `resultType` key is dropped. */
function decodeLegacyResult(raw: unknown, lineLength: number | undefined): unknown {
  let result = raw;
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && 'resultType' in raw) {
    const stripped: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
    delete stripped.resultType;
    result = stripped;
  }
  // The result's JSON text is no longer than the line allows (sessions/sizeBound.ts).
  if (lineLength !== undefined) noteParsedFrom(result, lineLength);
  return result;
}

/** The error a call cancelled for `reason` fails with (as the official client's). */
function cancelledError(reason: unknown): Error {
  return reason instanceof McpSdkError ? reason : new McpSdkError(SdkErrorCode.RequestTimeout, String(reason));
}

/** Requests sent on a transport beside its client; see the module comment. */
export class DirectRequests {
  private next = 0;
  private readonly pending = new Map<string, Settle>();
  private closed = false;
  private readonly send: (message: JSONRPCMessage) => Promise<void>;

  /** @param send - writes one message on the transport (its `send`). */
  constructor(send: (message: JSONRPCMessage) => Promise<void>) {
    this.send = send;
  }

  /**
   * Takes `message` when it answers one of our requests (the transport calls this for every response
   * before its client sees it). A late answer to one of ours that was already settled (cancelled, timed
   * out) is taken too, and dropped. `lineLength`: the UTF-16 length of the line it was parsed from.
   */
  take(message: DirectResponse, lineLength?: number): boolean {
    const id = message.id;
    if (typeof id !== 'string' || !id.startsWith(ID_PREFIX)) return false;
    const settle = this.pending.get(id);
    if (settle !== undefined) {
      this.pending.delete(id);
      settle(message, lineLength);
    }
    return true;
  }

  /** Fails every request in flight: the connection closed. Later requests fail `NOT_CONNECTED`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const error = new McpSdkError(SdkErrorCode.ConnectionClosed, 'Connection closed');
    const settles = [...this.pending.values()];
    this.pending.clear();
    for (const settle of settles) settle(error);
  }

  /** Requests in flight. */
  get inFlight(): number {
    return this.pending.size;
  }

  /**
   * Sends `method` with `params` and resolves with the decoded result (not checked against any schema:
   * the caller checks what it relies on). Rejects as the official client's `request` does.
   */
  request(method: string, params: Record<string, unknown>, options: DirectRequestOptions = {}): Promise<unknown> {
    const signal = options.cancel ?? options.signal;
    if (signal?.aborted) return Promise.reject(cancelledError(signal.reason));
    if (this.closed) return Promise.reject(new McpSdkError(SdkErrorCode.NotConnected, 'Not connected'));
    const id = `${ID_PREFIX}${++this.next}`;
    const timeout = options.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC;
    return new Promise<unknown>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let unlisten: (() => void) | undefined;
      const finish = () => {
        clearTimeout(timer);
        unlisten?.();
        this.pending.delete(id);
      };
      const cancel = (reason: unknown) => {
        if (!this.pending.has(id)) return;
        finish();
        this.send({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: id, reason: String(reason) },
        }).catch(() => {
          // The service is gone: nothing to cancel there.
        });
        reject(cancelledError(reason));
      };
      const onAbort = () => cancel(signal?.reason);
      this.pending.set(id, (response, lineLength) => {
        finish();
        if (response instanceof Error) reject(response);
        else if (response.error !== undefined) {
          reject(ProtocolError.fromError(response.error.code, response.error.message, response.error.data));
        } else resolve(decodeLegacyResult(response.result, lineLength));
      });
      unlisten = listenAbort(signal, onAbort);
      timer = setTimeout(
        () => cancel(new McpSdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout })),
        timeout,
      );
      this.send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage).catch((error: unknown) => {
        if (!this.pending.has(id)) return;
        finish();
        reject(error);
      });
    });
  }
}
