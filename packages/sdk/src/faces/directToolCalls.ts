/**
 * The faces' short way for `tools/call` in the 2025 era: a well-formed `tools/call` is answered here,
 * from the surface, without passing through the SDK server's protocol layer, which checks every message
 * and result against its zod schemas again. The answer is what the SDK would send: the same handler
 * ({@link answerToolCall}), the same projection of the result by the era's server, the same JSON-RPC
 * error for what the surface throws, nothing for a cancelled call. Everything else (other requests, a
 * `tools/call` the SDK must refuse as malformed, every 2026-07-28 exchange) goes through the SDK.
 *
 * The stdio face takes over `tools/call` on its line transport once the connection's `initialize` has
 * been answered (which pins it to the 2025 era); the HTTP face answers a stateless 2025-era POST of a
 * `tools/call` with {@link answerDirectly} (httpFace.ts).
 */
import { continueTraceOfMeta } from '../events/telemetry.js';
import type { JSONRPCMessage, Server } from '@modelcontextprotocol/server';
import type { LineTransport } from './lineTransport.js';
import type { Surface } from '../surface/surface.js';
import { answerToolCall, toProtocolError, type ToolCallContext } from './surfaceServer.js';
import { isPlainObject } from '../plainObject.js';
import { CallCancel } from '../surface/callCancel.js';

type RequestId = string | number;

/** The params of a `tools/call` answered directly. */
export interface DirectCallParams extends Record<string, unknown> {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/**
 * The params of `message` when it is a `tools/call` the faces answer directly: a request with a string
 * or number id whose params are an object with a string `name`, an object `arguments` (or none) and an
 * object `_meta` (or none). Undefined for anything else: the SDK's to answer, or to refuse as it does.
 */
export function directCallParams(message: unknown): DirectCallParams | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: unknown };
  if (m.method !== 'tools/call' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return undefined;
  const { params } = m;
  if (!isPlainObject(params) || typeof params.name !== 'string') return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  if (params._meta !== undefined && !isPlainObject(params._meta)) return undefined;
  // A call that asks for a task is the SDK server's: it answers with a face task (faces/faceTasks.ts).
  if (params.task !== undefined) return undefined;
  return params as DirectCallParams;
}

/**
 * Answers one `tools/call` from `surface` as the SDK's handler would, `server` projecting the result for
 * its era: resolves with the JSON-RPC response to send under `id`, or undefined when the call was
 * cancelled (`signal` aborted: nothing is sent). Progress goes out through `notify`, all of it before the
 * answer. A client's traceparent in `_meta` is continued (events/telemetry.ts). Never rejects. `signal` is
 * a {@link CallCancel}, not an `AbortSignal` (Node 20 builds one in ~2.3 µs: see sessions/callCancel.ts).
 */
export function answerDirectly(
  surface: Surface,
  server: Server,
  id: RequestId,
  params: DirectCallParams,
  signal: CallCancel,
  notify: ToolCallContext['notify'],
): Promise<JSONRPCMessage | undefined> {
  const token = params._meta?.progressToken;
  return continueTraceOfMeta(params, () =>
    answerToolCall(surface, server, params, {
      signal,
      progressToken: typeof token === 'string' || typeof token === 'number' ? token : undefined,
      notify,
    }).then(
      (result): JSONRPCMessage | undefined => (signal.aborted ? undefined : { jsonrpc: '2.0', id, result }),
      (error: unknown): JSONRPCMessage | undefined => {
        if (signal.aborted) return undefined;
        const e = toProtocolError(error);
        // As the SDK answers a handler's error (-32002 goes out as -32602 in both eras).
        const code = e.code === -32002 ? -32602 : e.code;
        return {
          jsonrpc: '2.0',
          id,
          error: { code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) },
        };
      },
    ),
  );
}

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
  const inFlight = new Map<RequestId, CallCancel>();

  transport.onsend = (message) => {
    if (pinned || initializeIds.size === 0) return;
    const m = message as { id?: unknown; result?: unknown };
    if ((typeof m.id === 'string' || typeof m.id === 'number') && initializeIds.delete(m.id)) {
      // A result (not an error) to `initialize` pins the connection to the 2025 era.
      if (isPlainObject(m.result)) {
        pinned = true;
        // Nothing more to watch for: every later message goes out unseen.
        transport.onsend = undefined;
      }
    }
  };

  const ignore = () => {
    // The client went away: the answer has nowhere to go.
  };
  const notify: ToolCallContext['notify'] = (notification) =>
    transport.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage);

  const answer = (id: RequestId, params: DirectCallParams, server: Server) => {
    const cancel = new CallCancel();
    inFlight.set(id, cancel);
    void answerDirectly(surface, server, id, params, cancel, notify)
      .then((response) => {
        inFlight.delete(id);
        return response === undefined ? undefined : transport.send(response);
      })
      .catch(ignore);
  };

  transport.intercept = (message) => {
    const m = message as { id?: unknown; method?: unknown; params?: unknown };
    if (!pinned) {
      if (m.method === 'initialize' && (typeof m.id === 'string' || typeof m.id === 'number')) initializeIds.add(m.id);
      return false;
    }
    if (m.method === 'tools/call') {
      // Malformed calls, and an id already in flight, are the SDK's to refuse as it does.
      const params = directCallParams(message);
      if (params === undefined || inFlight.has(m.id as RequestId)) return false;
      const server = legacyServer();
      if (server === undefined) return false;
      answer(m.id as RequestId, params, server);
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
