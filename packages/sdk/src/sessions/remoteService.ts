/**
 * A remote service (SPEC §8): a Streamable HTTP MCP endpoint, connected with the official client (protocol
 * era negotiated automatically: the 2026 revision where the server speaks it, else the 2025 `initialize`),
 * listed like a project service, and never started or collected by us. Closing ends our session (an HTTP
 * `DELETE` in the 2025 era, so the remote frees it) and closes our client; a session the remote forgot
 * (HTTP 404) is started anew once and the request retried; results lose the remote's
 * `_meta["io.modelcontextprotocol/serverInfo"]` (the faces name themselves).
 */
import { type Client, type RequestOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type ErrorCode, isSdkError, SdkError } from '../errors.js';
import { BaseSession } from './baseSession.js';
import { authFailure, isInsufficientScope, type RemoteSignIn } from './remoteAuth.js';
import { mcpCode } from './forwarding.js';
import { newServiceClient } from './mcpCatalog.js';
import {
  endSession,
  isNetworkFailure,
  isSessionGone,
  networkMessage,
  publicUrl,
  withoutServerInfo,
} from './remoteHttp.js';
import type { FailureFacts } from './serviceDiagnostics.js';
import type { ServiceEventBase } from './serviceEvents.js';
import type { ForwardOptions, RemoteServiceSession, SessionStartOptions } from './serviceSession.js';
import { StartBudget } from './startBudget.js';
import { runEach } from '../processes/teardown.js';
import { tracingFetch } from '../events/telemetry.js';

/** A remote entry of an agent's `mcpServers`. */
export interface RemoteServiceSpec {
  /** The service name the agent sees. */
  name: string;
  /** Every name the session serves under. Default `[name]`. */
  aliases?: readonly string[];
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`. */
  url: string;
  /** Extra HTTP headers sent with every request (e.g. `Authorization`); never reported in events or errors. */
  headers?: Readonly<Record<string, string>>;
  /** Header → the host variable its value came from (named when the server refuses it). */
  headerSources?: Readonly<Record<string, string>>;
  /**
   * The stored OAuth sign-in (see `remoteAuth.ts`): its token goes with every request, refreshed under a
   * cross-process lock. Without it, a 401 is `remote_auth_required` at once.
   */
  signIn?: RemoteSignIn;
  /** The command that signs in, named in `remote_auth_required`. Default `scienceevolve auth login …`. */
  loginCommand?: string;
  /**
   * The invocation's workspace (absolute path; in Git-on, the role's worktree), answered to `roots/list`
   * as the one `file://` root. Without it the client declares no `roots`.
   */
  workspace?: string;
}

/** Options of {@link connectRemoteService}. */
export interface ConnectRemoteOptions extends SessionStartOptions {
  /**
   * Milliseconds to start a new session when the remote answers 404 for ours (it forgot it). Default
   * 10,000 (10 s).
   */
  renewTimeoutMs?: number;
  /** Milliseconds the session's `DELETE` may take on close. Default 2,000 (2 s). */
  endSessionTimeoutMs?: number;
}

export type { RemoteServiceSession } from './serviceSession.js';

/**
 * Connects to a remote service and lists it. Rejects with an SdkError: `remote_unreachable` (connect or
 * handshake failed: refused, DNS, HTTP error), `startup_timeout` (budget ran out or was aborted),
 * `initialize_failed` (connected but the lists failed).
 */
export async function connectRemoteService(
  spec: RemoteServiceSpec,
  options: ConnectRemoteOptions = {},
): Promise<RemoteServiceSession> {
  const service = new RemoteService(spec, options);
  await service.connect();
  return service;
}

class RemoteService extends BaseSession implements RemoteServiceSession {
  readonly kind = 'remote' as const;
  protected readonly initialState = 'initializing' as const;
  readonly url: string;
  private readonly spec: RemoteServiceSpec;
  private readonly options: ConnectRemoteOptions;
  private client: Client;
  private transport: StreamableHTTPClientTransport | undefined;
  /** The renewal in progress, shared by every request that met the same forgotten session. */
  private renewing: { from: Client; done: Promise<void> } | undefined;

  constructor(spec: RemoteServiceSpec, options: ConnectRemoteOptions) {
    super(spec.name, spec.aliases, options.onEvent, options.listChangeDebounceMs, options.listTtlFloorMs);
    this.spec = spec;
    this.options = options;
    this.url = publicUrl(spec.url);
    this.client = this.newClient();
  }

  /** The one place a client of this service is made (at connect, and again when a session is renewed). */
  private newClient(): Client {
    const client = newServiceClient(
      { versionNegotiation: { mode: 'auto' } },
      this.spec.workspace === undefined ? {} : { workspace: this.spec.workspace },
    );
    client.onerror = () => {};
    return client;
  }

  private newTransport(url: URL): StreamableHTTPClientTransport {
    const traced = tracingFetch();
    return new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { ...this.spec.headers } },
      ...(this.spec.signIn === undefined ? {} : { authProvider: this.spec.signIn }),
      // With export on, each request carries the active trace context as headers (per call).
      ...(traced === undefined ? {} : { fetch: traced }),
    });
  }

  async connect(): Promise<void> {
    const startedAt = Date.now();
    const budget = new StartBudget({ deadline: this.options.deadline, signal: this.options.signal });
    try {
      this.transition('initializing');
      let url: URL;
      try {
        url = new URL(this.spec.url);
      } catch (error) {
        throw this.describe('remote_unreachable', 'has an invalid URL', { cause: error });
      }
      if (url.username !== '' || url.password !== '') {
        // fetch would refuse it with a message that repeats the URL, password included.
        throw this.describe('invalid_workflow', 'has a user name or password in its URL', {
          remedy: 'Remove the user information (user:password@) from the URL; no request can be made to such a URL.',
        });
      }
      const transport = this.newTransport(url);
      this.transport = transport;
      try {
        await this.client.connect(transport, { signal: budget.signal, timeout: budget.remainingMs() });
      } catch (error) {
        throw this.classifyStartError(error, budget, 'connect');
      }
      this.transition('listing');
      try {
        await this.listWithin(this.client, budget);
      } catch (error) {
        throw this.classifyStartError(error, budget, 'listing');
      }
      this.becomeReady(startedAt);
    } catch (error) {
      const failure = isSdkError(error)
        ? (error as SdkError)
        : this.describe('remote_unreachable', 'failed', { cause: error });
      this.transition('failed');
      this.emit({ type: 'service.failed', error: { code: failure.code, message: failure.message } });
      await this.close();
      throw failure;
    } finally {
      budget.dispose();
    }
  }

  /** Ends our session (`DELETE`, bounded) and closes our client; the remote service keeps running. */
  protected async shutdown(): Promise<void> {
    const wasFailed = this.state === 'failed';
    this.transition('stopping');
    await this.renewing?.done.catch(() => {});
    const transport = this.transport;
    await runEach([
      () => (transport === undefined ? undefined : endSession(transport, this.options.endSessionTimeoutMs)),
      () => this.client.close(),
    ]);
    this.transition('exited');
    if (!wasFailed || this.wasListed) {
      this.emit({
        type: 'service.exited',
        expected: true,
        exitCode: null,
        signal: null,
        forced: false,
        swept: [],
        survivors: [],
        pollutedLines: 0,
        invalidLines: 0,
      });
    }
  }

  protected override sessionIdForTrace(): string | undefined {
    return this.transport?.sessionId;
  }

  protected connectedClient(): Client {
    return this.client;
  }

  protected notReady(what: string): SdkError {
    return this.describe('remote_unreachable', `is ${this.state}; ${what} failed`);
  }

  /**
   * Forwards like every session, with two remote rules: results lose the remote's serverInfo stamp, and a
   * session the remote forgot (404) is started anew once, then the request is sent again (with a fresh
   * timeout). A second 404 in a row is `remote_unreachable`.
   */
  protected override async forward<T>(
    what: string,
    options: ForwardOptions | undefined,
    send: (client: Client, requestOptions: RequestOptions) => Promise<T>,
  ): Promise<T> {
    const client = this.client;
    const hadSession = this.transport?.sessionId !== undefined;
    try {
      return withoutServerInfo(await super.forward(what, options, send));
    } catch (error) {
      if (error instanceof StepUpNeeded && this.spec.signIn !== undefined) {
        // A 403 insufficient_scope: one re-authorization for the wider scope (a person only), then once more.
        await this.spec.signIn.stepUp(error.requiredScope);
        try {
          return withoutServerInfo(await super.forward(what, options, send));
        } catch (again) {
          if (again instanceof StepUpNeeded) throw this.authError(again.cause) ?? again;
          throw again;
        }
      }
      if (error instanceof StepUpNeeded) throw this.authError(error.cause) ?? error;
      if (!(error instanceof SessionGone)) throw error;
      if (!hadSession)
        throw this.describe('remote_unreachable', `answered HTTP 404 to ${what}`, { cause: error.cause });
      await this.renewSession(client, what);
      try {
        return withoutServerInfo(await super.forward(what, options, send));
      } catch (again) {
        if (!(again instanceof SessionGone)) throw again;
        throw this.describe('remote_unreachable', `forgot a new session at once, during ${what}`, {
          cause: again.cause,
          remedy: 'Check the remote service: it answers 404 for the session it has just started.',
        });
      }
    }
  }

  /**
   * Starts a new session in place of the one `from` held, once for every request that met it gone; the
   * client and its transport are swapped together. A failed renewal is not remembered: a later request
   * that meets the forgotten session tries again.
   */
  private async renewSession(from: Client, what: string): Promise<void> {
    if (this.client !== from) return this.renewing?.done;
    if (this.renewing?.from !== from) {
      const done = (async () => {
        if (this.isClosing) throw this.notReady(what);
        const client = this.newClient();
        const transport = this.newTransport(new URL(this.spec.url));
        try {
          await client.connect(transport, { timeout: this.options.renewTimeoutMs ?? 10_000 });
        } catch (error) {
          this.renewing = undefined;
          await client.close().catch(() => {});
          throw this.describe(
            'remote_unreachable',
            `forgot our session and a new one could not be started for ${what}: ${networkMessage(error, this.spec.url)}`,
            { cause: error },
          );
        }
        this.client = client;
        this.transport = transport;
        await from.close().catch(() => {});
      })();
      this.renewing = { from, done };
    }
    return this.renewing.done;
  }

  protected callFailed(error: unknown, what: string): unknown {
    // Whether the request carried a session is known where it was sent: see forward().
    if (isSessionGone(error, true)) return new SessionGone(error);
    if (isInsufficientScope(error)) return new StepUpNeeded(error);
    const refused = this.authError(error);
    if (refused !== undefined) return refused;
    const code = mcpCode(error);
    if (isNetworkFailure(error) || code === 'CONNECTION_CLOSED' || code === 'NOT_CONNECTED') {
      return this.describe(
        'remote_unreachable',
        `could not be reached for ${what}: ${networkMessage(error, this.spec.url)}`,
        { cause: error },
      );
    }
    const status = (error as { data?: { status?: unknown } } | null)?.data?.status;
    if (typeof status === 'number') {
      return this.describe('remote_unreachable', `answered HTTP ${status} to ${what}`, { cause: error });
    }
    return error;
  }

  private classifyStartError(error: unknown, budget: StartBudget, phase: 'connect' | 'listing'): SdkError {
    const timedOut = this.startTimeout(error, budget, phase);
    if (timedOut !== undefined) return timedOut;
    const refused = this.authError(error);
    if (refused !== undefined) return refused;
    // Our own listing errors (`list_too_long`, `list_cursor_repeated`) already name the service and list.
    if (isSdkError(error)) return error as SdkError;
    if (phase === 'connect') {
      return this.describe('remote_unreachable', `could not be reached: ${networkMessage(error, this.spec.url)}`, {
        cause: error,
      });
    }
    return this.describe(
      'initialize_failed',
      `failed to list what it offers: ${networkMessage(error, this.spec.url)}`,
      {
        cause: error,
      },
    );
  }

  /** `error` as `remote_auth_required` / `remote_auth_failed` when it is a refusal to authorize (see `remoteAuth.ts`). */
  private authError(error: unknown): SdkError | undefined {
    return authFailure(error, {
      service: this.name,
      url: this.spec.url,
      signIn: this.spec.signIn,
      headerSources: this.spec.headerSources,
      loginCommand:
        this.spec.loginCommand ??
        `scienceevolve auth login --data-dir <data dir> --project <project> --service ${this.name}`,
    });
  }

  protected describe(code: ErrorCode, what: string, facts: FailureFacts = {}): SdkError {
    const remedy =
      code === 'remote_unreachable'
        ? 'Check that the remote service is running and that its URL (a Streamable HTTP endpoint, e.g. …/mcp) is right.'
        : code === 'forward_timeout'
          ? 'Make the call finish sooner, or raise the forwarding timeout.'
          : 'Check the remote service: it must answer initialize and its list requests.';
    return new SdkError(code, `remote service "${this.name}" ${what} (${this.url})`, {
      remedy: facts.remedy ?? remedy,
      data: { service: this.name, url: this.url, ...facts.extra },
      cause: facts.cause,
    });
  }

  protected eventBase(): Omit<ServiceEventBase, 'time'> {
    return { service: this.name, kind: 'remote', url: this.url };
  }
}

/** The remote answered 404 (for our session, when the request carried one): a marker between {@link RemoteService.callFailed} and the retry. */
class SessionGone extends Error {
  constructor(cause: unknown) {
    super('the remote service forgot the session', { cause });
  }
}

/** The remote answered 403 `insufficient_scope`: a marker between {@link RemoteService.callFailed} and the step-up. */
class StepUpNeeded extends Error {
  readonly requiredScope: string | undefined;
  constructor(cause: Error & { requiredScope?: string }) {
    super('the remote service asks for a wider scope', { cause });
    this.requiredScope = cause.requiredScope;
  }
}
