/**
 * What every client of a Streamable HTTP MCP server here does alike (remote services, `bridge
 * http-to-stdio`, the gateway's checks), written once: ending the session on close (`DELETE`, so a
 * 2025-11-25 server such as supergateway `--stateful` frees the session and the process behind it),
 * telling a forgotten session (HTTP 404 with our `Mcp-Session-Id`) and an unreachable server from other
 * failures, and dropping the server's identity stamp from results (the bridge's faces set their own).
 */
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { networkMessage as redactNetworkMessage, redactUrl } from '../redact.js';
import { raceDelay } from '../processes/teardown.js';

/** Milliseconds a session's `DELETE` may take on close before we stop waiting: 2,000 (2 s). */
export const END_SESSION_TIMEOUT_MS = 2000;

/** The result `_meta` key under which a 2026-07-28 server names itself. */
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';

/**
 * Ends the transport's session with an HTTP `DELETE` (a no-op when it has none, as in the 2026-07-28 era
 * or a stateless server), waiting at most `timeoutMs` (default {@link END_SESSION_TIMEOUT_MS}, 2 s).
 * Never rejects: a server that refuses or does not answer will drop the session at its own timeout.
 */
export function endSession(
  transport: StreamableHTTPClientTransport,
  timeoutMs: number = END_SESSION_TIMEOUT_MS,
): Promise<void> {
  return raceDelay(
    Promise.resolve().then(() => transport.terminateSession()),
    timeoutMs,
  );
}

function httpStatusOf(error: unknown): number | undefined {
  const data = (error as { data?: unknown } | null)?.data;
  const status = (data as { status?: unknown } | null | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * Whether `error` is the server's HTTP 404 to a request that carried a session id: the server forgot the
 * session (it restarted, or timed it out), and the transport rules ask the client to start a new one.
 */
export function isSessionGone(error: unknown, hadSession: boolean): boolean {
  return hadSession && httpStatusOf(error) === 404;
}

/** Whether `error` is a failure to reach the server at all (refused, reset, DNS, TLS): `fetch failed`. */
export function isNetworkFailure(error: unknown): boolean {
  return error instanceof TypeError && /fetch failed/i.test(error.message);
}

/**
 * `error`'s message with every spelling of `url` redacted (see `redact.ts`, the one redaction point).
 * Every message about a remote that quotes an underlying error goes through here.
 */
export const networkMessage = redactNetworkMessage;

/**
 * `result` without `_meta["io.modelcontextprotocol/serverInfo"]` (and without `_meta` when nothing else
 * was in it); every other key is kept as it came.
 */
export function withoutServerInfo<T>(result: T): T {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  const meta = (result as { _meta?: unknown })._meta;
  if (typeof meta !== 'object' || meta === null || !Object.hasOwn(meta, SERVER_INFO_META_KEY)) return result;
  const kept: Record<string, unknown> = { ...(meta as Record<string, unknown>) };
  delete kept[SERVER_INFO_META_KEY];
  const copy: Record<string, unknown> = { ...(result as Record<string, unknown>) };
  if (Object.keys(kept).length === 0) delete copy._meta;
  else copy._meta = kept;
  return copy as T;
}

/** A user-facing form of a URL: no user info or fragment, query values `REDACTED` (see `redact.ts`). */
export const publicUrl = redactUrl;
