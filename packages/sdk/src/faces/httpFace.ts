/**
 * The HTTP face: an agent's surface as a Streamable HTTP MCP endpoint at `/mcp` on 127.0.0.1, for one
 * invocation, behind a bearer token. Both protocol eras are served statelessly (no sessions): 2026-07-28
 * by the v2 SDK's `createMcpHandler` (a server per request, that era's design), 2025-11-25 by one
 * long-lived server through an exchange transport (see legacyExchange.ts); a 2025-11-25 client's GET opens
 * a notification stream that hears the surface's list changes. Everything in front of them is checked
 * here, in this order, each with its own status: Host or Origin not loopback → 403; a path other than
 * `/mcp` → 404; no or wrong token → 401; a method other than GET or POST → 405; a GET without Accept
 * `text/event-stream` → 406; a POST with an Accept without both `application/json` and `text/event-stream` →
 * 406; a Content-Type other than `application/json` → 415; a body over the limit → 413; a body the
 * faces' input limits refuse (nested too deep, a batch, not JSON, not JSON-RPC: {@link checkMessage}) →
 * 400 with the same JSON-RPC error the stdio face answers.
 */
import { continueTraceOfHeaders } from '../events/telemetry.js';
import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type Server as HttpServer, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyInboundRequest, createMcpHandler } from '@modelcontextprotocol/server';
import { SdkError } from '../errors.js';
import { PRIVATE_FILE_MODE } from '../fileModes.js';
import { writeFileAtomic } from '../store/atomicFile.js';
import { checkMessage, DEFAULT_INPUT_LIMITS } from './inputLimits.js';
import type { Surface } from '../surface/surface.js';
import { type HttpTimeouts, httpServerTimeouts } from './httpTimeouts.js';
import { connectLegacyExchanges } from './legacyExchange.js';
import { legacyToolCall, refuse, serveLegacy } from './httpLegacy.js';
import { createSurfaceServer } from './surfaceServer.js';
import { FaceTasks } from './faceTasks.js';
import { loopbackHostAllowed, loopbackOriginAllowed } from './loopbackRule.js';

/** The endpoint path. @internal */
export const HTTP_FACE_PATH = '/mcp';

/**
 * Options of {@link serveHttp}. The request timeouts ({@link HttpTimeouts}: headers 10 s, whole request
 * 30 s, keep-alive 5 s by default) bound how long a client may take to *send* a request; an answer streamed
 * for longer (a tool call's progress, the notification stream) is not cut.
 * @public
 */
export interface HttpFaceOptions extends HttpTimeouts {
  /** The bearer token clients must send (`Authorization: Bearer <token>`); at least 16 characters. See {@link createBridgeToken}. */
  token: string;
  /** TCP port; 0 picks a free one. Default 0. */
  port?: number;
  /** The address to listen on: only `127.0.0.1` is allowed. Default `127.0.0.1`. */
  host?: '127.0.0.1';
  /** Bytes of a request body above which it is refused with 413. Default 4,194,304 (4 MiB), as a stdio line. */
  maxBodyBytes?: number;
  /** Nesting of arrays and objects in one message, above which it is refused with 400. Default 64. */
  maxDepth?: number;
  /** Out-of-band errors (reporting only). */
  onError?: (error: Error) => void;
}

/** A running HTTP face. @public */
export interface HttpFace {
  /** The endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  /** The TCP port it listens on (on 127.0.0.1). */
  readonly port: number;
  /** Stops accepting, aborts requests in flight and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/** A fresh random token for an HTTP face: 32 random bytes, base64url (43 characters). @public */
export function createBridgeToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Writes an HTTP face's bearer token to `path` for its clients to read: mode 0600 (the owner only), written
 * atomically to a new file and renamed over the target, so an existing file's wider mode, or a symlink at
 * the path, never exposes it.
 *
 * @throws SdkError `io_error` when the file cannot be written.
 * @public
 */
export function writeBridgeTokenFile(path: string, token: string): Promise<void> {
  return writeFileAtomic(path, token, { mode: PRIVATE_FILE_MODE });
}

function digest(text: string): Buffer {
  // The one-shot hash (Node ≥ 20.12) makes no Hash object per request.
  return typeof crypto.hash === 'function'
    ? crypto.hash('sha256', text, 'buffer')
    : createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time token check: both sides are hashed first, so lengths leak nothing either. */
function tokenMatches(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  const given = digest(match?.[1] ?? '');
  return timingSafeEqual(given, expected) && match !== null;
}

function acceptsBoth(accept: string | undefined): boolean {
  const types = (accept ?? '').split(',').map((part) => part.split(';')[0]!.trim().toLowerCase());
  return types.includes('application/json') && types.includes('text/event-stream');
}

/**
 * Reads the body up to `limit` bytes; undefined when it is longer (the rest is not read). Rejects when
 * the request fails or is cut off before its end.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        done();
        // Stop reading: the rest of an oversized body is never buffered.
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const onClose = () => {
      done();
      reject(new Error('the request was closed before its body ended'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function optionalHeader<K extends string>(key: K, value: string | string[] | undefined): { [P in K]?: string } {
  return typeof value === 'string' ? ({ [key]: value } as { [P in K]?: string }) : {};
}

/**
 * Serves `surface` over Streamable HTTP at `http://127.0.0.1:<port>/mcp` until closed.
 *
 * @throws SdkError `usage` for a host other than 127.0.0.1, a token under 16 characters or a timeout out
 *   of range; `io_error` when the port cannot be bound.
 * @public
 */
export async function serveHttp(surface: Surface, options: HttpFaceOptions): Promise<HttpFace> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') {
    throw new SdkError('usage', `the HTTP face listens on 127.0.0.1 only, not on "${String(host)}"`, {
      remedy: 'Leave the host unset; reach other machines through your own authenticated proxy.',
    });
  }
  if (typeof options.token !== 'string' || options.token.length < 16) {
    throw new SdkError('usage', 'the HTTP face needs a bearer token of at least 16 characters', {
      remedy: 'Use createBridgeToken() (or `--token-file` with such a token).',
    });
  }
  const timeouts = httpServerTimeouts('the HTTP face', options);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_INPUT_LIMITS.maxMessageBytes;
  const limits = { maxMessageBytes: maxBodyBytes, maxDepth: options.maxDepth ?? DEFAULT_INPUT_LIMITS.maxDepth };
  const expected = digest(options.token);
  const reportError = (error: unknown) => options.onError?.(error instanceof Error ? error : new Error(String(error)));
  // 2026-07-28 requests: the SDK's per-request handler (that era's design). 2025-era requests never reach
  // it: they are answered by one long-lived server (see legacyExchange.ts).
  const tasks = new FaceTasks(surface, { listable: false }); // one set, not listed: a task is reached by the id its creator got
  const handler = createMcpHandler(() => createSurfaceServer(surface, { tasks, era: 'modern' }), {
    legacy: 'reject',
    maxRequestBodySize: maxBodyBytes,
    onerror: reportError,
  });
  const legacy = await connectLegacyExchanges(createSurfaceServer(surface, { tasks, era: 'legacy' }));
  // The classifier's verdict on a plain `tools/call`, by MCP-Protocol-Version header ('' for none).
  const eraVerdicts = new Map<string, boolean>();
  let port = 0;
  let allowedHost: string | undefined;

  // 2025-11-25 clients' notification streams (GET): the face keeps no session, so every open stream hears
  // every list change of the surface. 2026-07-28 clients use `subscriptions/listen` (the handler's notify).
  const streams = new Set<ServerResponse>();
  const openNotificationStream = (req: IncomingMessage, res: ServerResponse): void => {
    if (!/(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(req.headers.accept ?? '')) {
      refuse(res, 406, 'not acceptable: the notification stream (GET) needs Accept: text/event-stream');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.write(': scienceevolve notification stream\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
  };
  const announce = (method: string): void => {
    const frame = `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method })}\n\n`;
    for (const stream of streams) if (!stream.destroyed) stream.write(frame);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const host = req.headers.host;
    if (host === undefined || host !== allowedHost) {
      if (!loopbackHostAllowed(host, port))
        return refuse(res, 403, 'forbidden: the Host header is not this loopback endpoint');
      // The verdict depends on the header and the port alone: the last Host allowed is not parsed again.
      allowedHost = host;
    }
    if (!loopbackOriginAllowed(req.headers.origin))
      return refuse(res, 403, 'forbidden: requests from this Origin are not allowed');
    const path = (req.url ?? '').split('?')[0];
    if (path !== HTTP_FACE_PATH) return refuse(res, 404, `not found: the endpoint is ${HTTP_FACE_PATH}`);
    if (!tokenMatches(req.headers.authorization, expected)) {
      return refuse(res, 401, 'unauthorized: send the invocation token as "Authorization: Bearer <token>"', {
        'www-authenticate': 'Bearer',
      });
    }
    if (req.method === 'GET') return openNotificationStream(req, res);
    if (req.method !== 'POST') {
      return refuse(
        res,
        405,
        `method ${req.method} not allowed: this endpoint takes POST (and GET for the 2025-11-25 notification stream)`,
        { allow: 'GET, POST' },
      );
    }
    if (!acceptsBoth(req.headers.accept)) {
      return refuse(res, 406, 'not acceptable: Accept must list both application/json and text/event-stream');
    }
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (contentType !== 'application/json') return refuse(res, 415, 'unsupported media type: send application/json');
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    const tooLarge = `payload too large: the body limit is ${maxBodyBytes} bytes`;
    if (Number.isFinite(declared) && declared > maxBodyBytes)
      return refuse(res, 413, tooLarge, { connection: 'close' });
    const body = await readBody(req, maxBodyBytes);
    if (body === undefined) return refuse(res, 413, tooLarge, { connection: 'close' });
    const checked = checkMessage(body.toString('utf8'), limits);
    if ('refusal' in checked)
      return refuse(res, 400, checked.refusal.message, {}, checked.refusal.code, checked.refusal.id);
    if (legacyToolCall(checked.message, req.headers['mcp-protocol-version'], eraVerdicts)) {
      return serveLegacy(req, res, checked.message, legacy, surface);
    }
    const route = classifyInboundRequest({
      httpMethod: 'POST',
      ...optionalHeader('protocolVersionHeader', req.headers['mcp-protocol-version']),
      ...optionalHeader('mcpMethodHeader', req.headers['mcp-method']),
      ...optionalHeader('mcpNameHeader', req.headers['mcp-name']),
      body: checked.message,
    });
    if (route.kind === 'legacy') return serveLegacy(req, res, checked.message, legacy, surface);

    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    }
    const request = new Request(`http://127.0.0.1:${port}${req.url ?? HTTP_FACE_PATH}`, {
      method: 'POST',
      headers,
      body,
      signal: abort.signal,
    });
    const response = await handler.fetch(request, { parsedBody: checked.message });
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      responseHeaders[name] = value;
    });
    res.writeHead(response.status, responseHeaders);
    if (response.body === null) {
      res.end();
      return;
    }
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (res.destroyed) break;
        if (!res.write(value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
      }
    } finally {
      await reader.cancel().catch(() => {});
      res.end();
    }
  };

  const server: HttpServer = createServer(timeouts, (req, res) => {
    // A client's `traceparent` header is continued (events/telemetry.ts); `_meta` in the call wins.
    continueTraceOfHeaders(req.headers, () => handle(req, res)).catch((error: unknown) => {
      reportError(error);
      if (!res.headersSent) refuse(res, 500, 'internal error of the HTTP face');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      reject(
        new SdkError('io_error', `the HTTP face could not listen on ${host}:${options.port ?? 0}: ${error.message}`, {
          remedy: 'Pick another port, or leave it unset to get a free one.',
          cause: error,
        }),
      );
    };
    server.once('error', onError);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  // Modern (2026-07-28) clients hear list changes on their `subscriptions/listen` stream, 2025-11-25
  // clients on the GET notification stream they opened.
  const stopAnnouncing = surface.onListChanged((change) => {
    if (change.tools) handler.notify.toolsChanged();
    if (change.resources) handler.notify.resourcesChanged();
    if (change.prompts) handler.notify.promptsChanged();
    if (change.tools) announce('notifications/tools/list_changed');
    if (change.resources) announce('notifications/resources/list_changed');
    if (change.prompts) announce('notifications/prompts/list_changed');
  });
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}${HTTP_FACE_PATH}`,
    port,
    close() {
      closing ??= (async () => {
        stopAnnouncing();
        for (const stream of streams) stream.end();
        streams.clear();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        try {
          await tasks.close();
          await Promise.all([handler.close(), legacy.close()]);
        } finally {
          server.closeAllConnections();
          await stopped;
        }
      })();
      return closing;
    },
  };
}
