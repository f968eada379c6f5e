/**
 * The stdio face's short way for `tools/call` on a 2025-era connection: once the connection's
 * `initialize` has been answered (which pins it to the 2025 era), a well-formed `tools/call` is answered
 * here, from the surface, without passing through the SDK's stdio entry and protocol layer, which check
 * every message and result against their zod schemas again. The answer is what the SDK would send: the
 * same handler ({@link answerToolCall}), the same projection of the result by the connection's own server,
 * the same JSON-RPC error for what the surface throws, nothing for a cancelled call. Everything else
 * (other requests, a `tools/call` the SDK must refuse as malformed, every 2026-07-28 connection) goes
 * through the SDK as before.
 */
import { continueTraceOfMeta } from '../events/telemetry.js';
import type { JSONRPCMessage, Server } from '@modelcontextprotocol/server';
import type { LineTransport } from './lineTransport.js';
import type { Surface } from '../surface/surface.js';
import { answerToolCall, toProtocolError } from './surfaceServer.js';
import { isPlainObject } from '../plainObject.js';

type RequestId = string | number;

/**
 * Takes over `tools/call` on `transport` once the connection is pinned to the 2025 era. `legacyServer`
 * gives the server the SDK made for that era (its codec projects results).
 */
export function answerToolCallsDirectly(
  transport: LineTransport,
  surface: Surface,
  legacyServer: () => Server | undefined,
): void {
  const initializeIds = new Set<RequestId>();
  let pinned = false;
  const inFlight = new Map<RequestId, AbortController>();

  transport.onsend = (message) => {
    if (pinned || initializeIds.size === 0) return;
    const m = message as { id?: unknown; result?: unknown };
    if ((typeof m.id === 'string' || typeof m.id === 'number') && initializeIds.delete(m.id)) {
      // A result (not an error) to `initialize` pins the connection to the 2025 era.
      if (isPlainObject(m.result)) pinned = true;
    }
  };

  const send = (message: unknown) =>
    transport.send(message as JSONRPCMessage).catch(() => {
      // The client went away: the answer has nowhere to go.
    });

  const answer = async (id: RequestId, params: Record<string, unknown>, server: Server) => {
    const abort = new AbortController();
    inFlight.set(id, abort);
    const meta = isPlainObject(params._meta) ? params._meta : undefined;
    const token = meta?.progressToken;
    try {
      const result = await answerToolCall(
        surface,
        server,
        params as { name: string; arguments?: Record<string, unknown> },
        {
          signal: abort.signal,
          progressToken: typeof token === 'string' || typeof token === 'number' ? token : undefined,
          notify: (notification) => transport.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage),
        },
      );
      if (!abort.signal.aborted) await send({ jsonrpc: '2.0', id, result });
    } catch (error) {
      if (abort.signal.aborted) return;
      const e = toProtocolError(error);
      // As the SDK answers a handler's error (-32002 goes out as -32602 in both eras).
      const code = e.code === -32002 ? -32602 : e.code;
      await send({
        jsonrpc: '2.0',
        id,
        error: { code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) },
      });
    } finally {
      inFlight.delete(id);
    }
  };

  transport.intercept = (message) => {
    const m = message as { id?: unknown; method?: unknown; params?: unknown };
    if (!pinned) {
      if (m.method === 'initialize' && (typeof m.id === 'string' || typeof m.id === 'number')) initializeIds.add(m.id);
      return false;
    }
    if (m.method === 'tools/call' && (typeof m.id === 'string' || typeof m.id === 'number')) {
      const { params } = m;
      // Malformed calls, and an id already in flight, are the SDK's to refuse as it does.
      if (!isPlainObject(params) || typeof params.name !== 'string') return false;
      if (params.arguments !== undefined && !isPlainObject(params.arguments)) return false;
      if (params._meta !== undefined && !isPlainObject(params._meta)) return false;
      // A call that asks for a task is the SDK server's: it answers with a face task (faces/faceTasks.ts).
      if (params.task !== undefined) return false;
      if (inFlight.has(m.id)) return false;
      const server = legacyServer();
      if (server === undefined) return false;
      // A client's traceparent in `_meta` is continued (events/telemetry.ts).
      void continueTraceOfMeta(params, () => answer(m.id as RequestId, params, server));
      return true;
    }
    if (m.method === 'notifications/cancelled' && isPlainObject(m.params)) {
      const { requestId } = m.params;
      const call = typeof requestId === 'string' || typeof requestId === 'number' ? inFlight.get(requestId) : undefined;
      if (call === undefined) return false;
      call.abort(typeof m.params.reason === 'string' ? m.params.reason : 'cancelled by the client');
      return true;
    }
    return false;
  };

  void transport.closed.then(() => {
    for (const call of inFlight.values()) call.abort('the connection closed');
  });
}
