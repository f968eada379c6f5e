/**
 * HTTP → stdio (`scienceevolve bridge http-to-stdio --url U [--header "K: V"]`): a stdio MCP server
 * that forwards every request it supports to one Streamable HTTP MCP server, for harnesses that can
 * only launch stdio servers. Both sides speak either era: the stdio side is served by the v2 SDK's
 * `serveStdio`; the HTTP side negotiates (`server/discover`, falling back to `initialize`).
 *
 * Unlike an agent's surface, the bridge renames nothing and checks no arguments (the server does): it
 * forwards `tools/list`, `tools/call`, `resources/list`, `resources/templates/list`, `resources/read`,
 * `prompts/list` and `prompts/get` with a timeout, lists live (so pages and changes pass through), and
 * refuses everything else, including sampling, elicitation and roots requests from the server.
 *
 * The HTTP session is kept honestly: closing ends it (`DELETE`, so a 2025-11-25 server frees it), a
 * session the server forgot (HTTP 404) is started anew once and the request retried, and a server that
 * cannot be reached answers `remote_unreachable` (JSON-RPC -32603 with that code in its data).
 */
import type { Readable, Writable } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import { SdkError } from '../errors.js';
import { headerValueProblem, networkMessage, redactUrl } from '../redact.js';
import { DEFAULT_FORWARD_TIMEOUT_MS } from '../sessions/forwarding.js';
import { endSession, isNetworkFailure, isSessionGone } from '../sessions/remoteHttp.js';
import { authFailure, type RemoteSignIn } from '../sessions/remoteAuth.js';
import { durationMs } from '../workflow/workflowSchema.js';
import { LineTransport, type LineLimits } from '../faces/lineTransport.js';
import { toProtocolError, unsupportedRequestMessage } from '../faces/surfaceServer.js';

/** Options of {@link httpToStdio}. @internal */
export interface HttpToStdioOptions extends Partial<LineLimits> {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`. */
  url: string;
  /** Extra HTTP headers sent with every request (e.g. `Authorization`). Never logged or shown in an error. */
  headers?: Record<string, string>;
  /** A stored OAuth sign-in (`storedSignIn`): its token goes with every request; a 401 is `remote_auth_required`. */
  signIn?: RemoteSignIn;
  /** Where requests come from. Default `process.stdin`. */
  input?: Readable;
  /** Where the protocol goes. Default `process.stdout`. */
  output?: Writable;
  /** Milliseconds to connect (and negotiate) with the HTTP server. Default 30,000 (30 s). */
  connectTimeoutMs?: number;
  /** Milliseconds before a forwarded request is cancelled. Default 60,000 (60 s). */
  timeoutMs?: number;
  /** Milliseconds the HTTP session's `DELETE` may take on close. Default 2,000 (2 s). */
  endSessionTimeoutMs?: number;
  /** Out-of-band errors (reporting only). */
  onError?: (error: Error) => void;
}

/** A running HTTP → stdio bridge. @internal */
export interface HttpToStdioBridge {
  /** The protocol version negotiated with the HTTP server. */
  readonly remoteProtocolVersion: string | undefined;
  /** Resolves when the stdio side ends (the harness closed stdin, or {@link HttpToStdioBridge.close}). */
  readonly closed: Promise<void>;
  /** Ends the stdio side and the HTTP client. Idempotent. */
  close(): Promise<void>;
}

/** `headers` as given, after refusing a value HTTP cannot carry; `invalid_header` names the header, never its value. */
function checkedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const checked: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const problem = headerValueProblem(name, value);
    if (problem !== undefined) {
      throw new SdkError('invalid_header', problem, {
        remedy: `give "${name}" its value on one line, without line breaks`,
        data: { header: name },
      });
    }
    Object.defineProperty(checked, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return checked;
}

/** Drops the reserved `io.modelcontextprotocol/*` keys (the 2026 per-request envelope) from `_meta`. */
function withoutEnvelope<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const meta = record._meta as Record<string, unknown> | undefined;
  const rest: Record<string, unknown> = { ...record };
  delete rest.ttlMs;
  delete rest.cacheScope;
  if (meta === undefined) return rest as T;
  const kept = Object.fromEntries(Object.entries(meta).filter(([key]) => !key.startsWith('io.modelcontextprotocol/')));
  if (Object.keys(kept).length === 0) delete rest._meta;
  else rest._meta = kept;
  return rest as T;
}

/**
 * Connects to the Streamable HTTP server at `url`, then serves it over stdio until the input ends.
 *
 * @throws SdkError `usage` for a duration that is not an integer up to 2^31 − 1 ms; `invalid_header` when a header value holds a line break or NUL (never quoting it);
 * `remote_unreachable` when the HTTP server cannot be connected to. No message shows a header value or the
 * URL's user information or query values.
 * @internal
 */
export async function httpToStdio(options: HttpToStdioOptions): Promise<HttpToStdioBridge> {
  const timeout = durationMs(options.timeoutMs, 'timeoutMs', DEFAULT_FORWARD_TIMEOUT_MS, 1);
  const connectTimeout = durationMs(options.connectTimeoutMs, 'connectTimeoutMs', 30_000, 1);
  const endSessionTimeout = durationMs(options.endSessionTimeoutMs, 'endSessionTimeoutMs', 2000);
  const shownUrl = redactUrl(options.url);
  const headers = checkedHeaders(options.headers ?? {});
  const secrets = { values: Object.values(headers) };
  const unreachable = (what: string, error: unknown) =>
    new SdkError(
      'remote_unreachable',
      `${what.replace('{url}', shownUrl)}: ${networkMessage(error, options.url, secrets)}`,
      {
        remedy:
          'Check that the server is running and speaks Streamable HTTP at that URL (not SSE), and its headers/token.',
        data: { url: shownUrl },
        cause: error,
      },
    );
  /** A 401 (or a refused sign-in) as `remote_auth_required` / `remote_auth_failed`. */
  const refusedAuth = (error: unknown) =>
    authFailure(error, {
      service: 'bridge',
      url: options.url,
      signIn: options.signIn,
      headerSources: Object.fromEntries(Object.keys(headers).map((name) => [name, `the value given for ${name}`])),
      loginCommand:
        'scienceevolve auth login --data-dir D --project P --service S (the entry of this URL), then pass --data-dir D --project P',
    });
  const connectNew = async (): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
    const client = new Client(
      { name: 'scienceevolve-http-to-stdio', version: '0.1.0' },
      { capabilities: {}, versionNegotiation: { mode: 'auto' } },
    );
    client.onerror = () => {};
    // The bridge declares no client capabilities; anything the server asks of it is refused plainly.
    client.fallbackRequestHandler = async (request) => {
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `"${request.method}" is refused: the ScienceEvolve http-to-stdio bridge does not support sampling, elicitation or roots`,
      );
    };
    const transport = new StreamableHTTPClientTransport(new URL(options.url), {
      requestInit: { headers },
      ...(options.signIn === undefined ? {} : { authProvider: options.signIn }),
    });
    try {
      await client.connect(transport, { timeout: connectTimeout });
    } catch (error) {
      await client.close().catch(() => {});
      throw refusedAuth(error) ?? unreachable('could not connect to the MCP server at {url}', error);
    }
    return { client, transport };
  };
  let current = await connectNew();
  let renewing: { from: Client; done: Promise<void> } | undefined;
  const client = current.client;
  const remote = client.getServerCapabilities() ?? {};
  const serverInfo = client.getServerVersion() ?? { name: 'remote', version: '0.0.0' };

  /** A new session in place of the one `from` held, started once for every request that met it gone. */
  const renew = (from: Client): Promise<void> => {
    if (current.client !== from) return renewing?.done ?? Promise.resolve();
    if (renewing?.from !== from) {
      const done = (async () => {
        let next: Awaited<ReturnType<typeof connectNew>>;
        try {
          next = await connectNew();
        } catch (error) {
          renewing = undefined; // not remembered: a later request that meets the gone session tries again
          throw error;
        }
        if (closing !== undefined) {
          await next.client.close().catch(() => {});
          return;
        }
        current = next;
        await from.close().catch(() => {});
      })();
      renewing = { from, done };
    }
    return renewing.done;
  };
  const once = async <T>(work: (client: Client, signal: AbortSignal) => Promise<T>, signal: AbortSignal) => {
    const { client: used, transport } = current;
    try {
      return { value: withoutEnvelope(await work(used, signal)) };
    } catch (error) {
      if (!signal.aborted && isSessionGone(error, transport.sessionId !== undefined)) return { gone: used, error };
      if (isNetworkFailure(error)) throw unreachable('the MCP server at {url} could not be reached', error);
      throw refusedAuth(error) ?? error;
    }
  };
  const forward = async <T>(work: (client: Client, signal: AbortSignal) => Promise<T>, signal: AbortSignal) => {
    try {
      let outcome = await once(work, signal);
      if ('gone' in outcome) {
        await renew(outcome.gone as Client);
        outcome = await once(work, signal);
        if ('gone' in outcome) throw unreachable('the MCP server at {url} forgot a new session at once', outcome.error);
      }
      return outcome.value as T;
    } catch (error) {
      throw toProtocolError(error);
    }
  };

  const factory = () => {
    const server = new Server(serverInfo, {
      capabilities: {
        ...(remote.tools ? { tools: {} } : {}),
        ...(remote.resources ? { resources: {} } : {}),
        ...(remote.prompts ? { prompts: {} } : {}),
      },
    });
    const opts = (signal: AbortSignal) => ({ signal, timeout, cacheMode: 'bypass' as const });
    const page = (params: { cursor?: string } | undefined) =>
      params?.cursor === undefined ? undefined : { cursor: params.cursor };
    if (remote.tools) {
      server.setRequestHandler('tools/list', (request, ctx) =>
        forward((c, signal) => c.listTools(page(request.params), opts(signal)), ctx.mcpReq.signal),
      );
      server.setRequestHandler('tools/call', (request, ctx) =>
        forward(
          (c, signal) =>
            c.callTool({ name: request.params.name, arguments: request.params.arguments }, { signal, timeout }),
          ctx.mcpReq.signal,
        ),
      );
    }
    if (remote.resources) {
      server.setRequestHandler('resources/list', (request, ctx) =>
        forward((c, signal) => c.listResources(page(request.params), opts(signal)), ctx.mcpReq.signal),
      );
      server.setRequestHandler('resources/templates/list', (request, ctx) =>
        forward((c, signal) => c.listResourceTemplates(page(request.params), opts(signal)), ctx.mcpReq.signal),
      );
      server.setRequestHandler('resources/read', (request, ctx) =>
        forward((c, signal) => c.readResource({ uri: request.params.uri }, opts(signal)), ctx.mcpReq.signal),
      );
    }
    if (remote.prompts) {
      server.setRequestHandler('prompts/list', (request, ctx) =>
        forward((c, signal) => c.listPrompts(page(request.params), opts(signal)), ctx.mcpReq.signal),
      );
      server.setRequestHandler('prompts/get', (request, ctx) =>
        forward(
          (c, signal) =>
            c.getPrompt({ name: request.params.name, arguments: request.params.arguments }, { signal, timeout }),
          ctx.mcpReq.signal,
        ),
      );
    }
    server.fallbackRequestHandler = async (request) => {
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, unsupportedRequestMessage(request.method), {
        code: 'unsupported_request',
        method: request.method,
      });
    };
    return server;
  };

  const lines = new LineTransport(options.input ?? process.stdin, options.output ?? process.stdout, {
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    ...(options.maxDepth === undefined ? {} : { maxDepth: options.maxDepth }),
  });
  const handle = sdkServeStdio(factory, {
    transport: lines,
    legacy: 'serve',
    onerror: (error) => options.onError?.(error),
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      try {
        await handle.close();
      } finally {
        try {
          await lines.close();
        } finally {
          await renewing?.done.catch(() => {});
          await endSession(current.transport, endSessionTimeout);
          await current.client.close();
        }
      }
    })();
    return closing;
  };
  // When the harness closes stdin, the HTTP client goes too.
  lines.closed
    .then(close)
    .catch((error: unknown) => options.onError?.(error instanceof Error ? error : new Error(String(error))));
  return {
    remoteProtocolVersion: client.getNegotiatedProtocolVersion(),
    closed: lines.closed.then(() => closing),
    close,
  };
}
