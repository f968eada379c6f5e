/**
 * The HTTP face's 2025-era serving (stateless, one POST a self-contained exchange): a `tools/call` is
 * answered from the surface without the SDK server (directToolCalls.ts), every other request by the face's
 * one long-lived server through its exchange transport (legacyExchange.ts); an answer is one JSON body, or
 * an SSE stream for a call that asked for progress. Also the faces' refusal of an HTTP request. Split from
 * httpFace.ts, which checks everything in front of it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  classifyInboundRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  type Server,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { Surface } from '../surface/surface.js';
import { CallCancel } from '../surface/callCancel.js';
import { answerDirectly, type DirectCallParams, directCallParams } from './directToolCalls.js';
import type { LegacyExchanges } from './legacyExchange.js';

/** Answers `res` with `status` and a JSON-RPC error body (`id` null unless the request had one). */
export function refuse(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  code = -32000,
  id: string | number | null = null,
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Whether a 2025-era request can be answered with notifications before its result (so needs a stream). */
function wantsStream(request: JSONRPCRequest): boolean {
  const meta = (request.params as { _meta?: { progressToken?: unknown } } | undefined)?._meta;
  return request.method === 'tools/call' && meta?.progressToken !== undefined;
}

function sseEvent(message: JSONRPCMessage): string {
  return `event: message\ndata: ${JSON.stringify(message)}\n\n`;
}

/**
 * Answers one 2025-era (stateless) POST through the face's long-lived server: a notification or a
 * response is acknowledged with 202; a request is answered with one JSON body, or with an SSE stream when
 * it asked for progress. A client that goes away mid-request cancels it.
 */
export function serveLegacy(
  req: IncomingMessage,
  res: ServerResponse,
  message: JSONRPCMessage,
  legacy: LegacyExchanges,
  surface: Surface,
): void {
  const version = req.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    refuse(
      res,
      400,
      `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    );
    return;
  }
  const m = message as { id?: unknown; method?: unknown };
  if (typeof m.method !== 'string' || m.id === undefined || m.id === null) {
    // Notifications and responses: stateless serving has no session for them to act on.
    res.writeHead(202);
    res.end();
    return;
  }
  const request = message as JSONRPCRequest;
  const call = directCallParams(request);
  if (call !== undefined) {
    // No AbortSignal for a direct call (sessions/callCancel.ts): a client that goes away cancels it.
    const cancel = new CallCancel();
    res.on('close', () => {
      if (!res.writableFinished) cancel.abort();
    });
    answerCallDirectly(res, request, call, legacy.server, surface, cancel);
    return;
  }
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const exchanges = legacy.transport;
  if (wantsStream(request)) {
    const open = () => {
      if (!res.headersSent) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      }
    };
    exchanges.exchange(
      request,
      {
        notify(notification) {
          if (res.destroyed) return;
          open();
          res.write(sseEvent(notification));
        },
        answer(answer) {
          if (res.destroyed) return;
          open();
          res.end(sseEvent(answer));
        },
      },
      abort.signal,
    );
    return;
  }
  exchanges.exchange(
    request,
    {
      notify() {
        // Only a request that asked for progress is answered with a stream; nothing else is sent before a result.
      },
      answer(answer) {
        if (res.destroyed) return;
        answerJson(res, answer);
      },
    },
    abort.signal,
  );
}

/** Writes `message` as the one JSON body of `res`. */
function answerJson(res: ServerResponse, message: JSONRPCMessage): void {
  const text = JSON.stringify(message);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * A 2025-era `tools/call` answered from the surface without the SDK server (directToolCalls.ts): one JSON
 * body, or an SSE stream when the call asked for progress (its progress first, then the answer). Nothing
 * is written for a call the client cancelled by going away.
 */
function answerCallDirectly(
  res: ServerResponse,
  request: JSONRPCRequest,
  params: DirectCallParams,
  server: Server,
  surface: Surface,
  signal: CallCancel,
): void {
  const streamed = wantsStream(request);
  const open = () => {
    if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  };
  const notify = async (notification: { method: string; params: Record<string, unknown> }) => {
    if (!streamed || res.destroyed) return;
    open();
    res.write(sseEvent({ jsonrpc: '2.0', ...notification } as JSONRPCMessage));
  };
  void answerDirectly(surface, server, request.id, params, signal, notify)
    .then((answer) => {
      if (answer === undefined || res.destroyed) return;
      if (!streamed) {
        answerJson(res, answer);
        return;
      }
      open();
      res.end(sseEvent(answer));
    })
    .catch(() => {
      // The answer could not be written (the connection broke while writing): nothing more to send.
      res.destroy();
    });
}

/**
 * Whether a checked POST body is a `tools/call` that {@link classifyInboundRequest} routes to the 2025 era
 * (no envelope claim in `_meta`, a 2025-era `MCP-Protocol-Version` or none), decided without the three
 * schema tests the classifier makes of every body. The verdict for each supported header value is the
 * classifier's own, asked once about a plain `tools/call` and kept.
 */
export function legacyToolCall(
  message: JSONRPCMessage,
  version: string | string[] | undefined,
  verdicts: Map<string, boolean>,
): boolean {
  const params = directCallParams(message);
  if (params === undefined) return false;
  if (params._meta !== undefined && Object.hasOwn(params._meta, PROTOCOL_VERSION_META_KEY)) return false;
  const key = version === undefined ? '' : typeof version === 'string' ? version : undefined;
  if (key === undefined) return false;
  let legacy = verdicts.get(key);
  if (legacy === undefined) {
    // Only a supported version (or none) is remembered: the map stays small whatever clients send.
    if (key !== '' && !SUPPORTED_PROTOCOL_VERSIONS.includes(key)) return false;
    legacy =
      classifyInboundRequest({
        httpMethod: 'POST',
        ...(version === undefined ? {} : { protocolVersionHeader: key }),
        body: { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'probe' } },
      }).kind === 'legacy';
    verdicts.set(key, legacy);
  }
  return legacy;
}
