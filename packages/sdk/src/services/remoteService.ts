/**
 * A remote service (SPEC §8): a Streamable HTTP MCP endpoint, connected with the official client (protocol
 * era negotiated automatically: the 2026 revision where the server speaks it, else the 2025 `initialize`),
 * listed like a project service, and never started or collected by us: closing only closes our client.
 */
import { type Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type ErrorCode, isSdkError, SdkError } from '../errors.js';
import { BaseSession } from './baseSession.js';
import { mcpCode } from './forwarding.js';
import { newServiceClient } from './mcpCatalog.js';
import type { FailureFacts } from './serviceDiagnostics.js';
import type { ServiceEventBase } from './serviceEvents.js';
import type { RemoteServiceSession, SessionStartOptions } from './serviceSession.js';
import { StartBudget } from './startBudget.js';
import { runEach } from './teardown.js';

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
}

/** Options of {@link connectRemoteService}. */
export type ConnectRemoteOptions = SessionStartOptions;

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
  private readonly client = newServiceClient({ versionNegotiation: { mode: 'auto' } });

  constructor(spec: RemoteServiceSpec, options: ConnectRemoteOptions) {
    super(spec.name, spec.aliases, options.onEvent, options.listChangeDebounceMs);
    this.spec = spec;
    this.options = options;
    this.url = publicUrl(spec.url);
    this.client.onerror = () => {};
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
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { ...this.spec.headers } },
      });
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

  /** Closes our client (the remote service keeps running). */
  protected async shutdown(): Promise<void> {
    const wasFailed = this.state === 'failed';
    this.transition('stopping');
    await runEach([() => this.client.close()]);
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

  protected connectedClient(): Client {
    return this.client;
  }

  protected notReady(what: string): SdkError {
    return this.describe('remote_unreachable', `is ${this.state}; ${what} failed`);
  }

  protected callFailed(error: unknown, what: string): unknown {
    const code = mcpCode(error);
    if (isNetworkError(error) || code === 'CONNECTION_CLOSED' || code === 'NOT_CONNECTED') {
      return this.describe('remote_unreachable', `could not be reached for ${what}: ${messageOf(error)}`, {
        cause: error,
      });
    }
    return error;
  }

  private classifyStartError(error: unknown, budget: StartBudget, phase: 'connect' | 'listing'): SdkError {
    const timedOut = this.startTimeout(error, budget, phase);
    if (timedOut !== undefined) return timedOut;
    if (phase === 'connect') {
      return this.describe('remote_unreachable', `could not be reached: ${messageOf(error)}`, { cause: error });
    }
    return this.describe('initialize_failed', `failed to list what it offers: ${messageOf(error)}`, { cause: error });
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

/** The URL without user info and query string (which may hold credentials), for messages and events. */
function publicUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const causeCode = (cause as { code?: unknown } | undefined)?.code;
  return typeof causeCode === 'string' ? `${error.message} (${causeCode})` : error.message;
}

function isNetworkError(error: unknown): boolean {
  return error instanceof TypeError && /fetch failed/i.test(error.message);
}
