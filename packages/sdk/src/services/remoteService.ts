/**
 * A remote service (SPEC §8): a Streamable HTTP MCP endpoint, connected with the official client (protocol
 * era negotiated automatically: the 2026 revision where the server speaks it, else the 2025 `initialize`),
 * listed like a project service, and never started or collected by us: closing only closes our client.
 */
import { Client, type RequestOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { isSdkError, SdkError } from '../errors.js';
import { DEFAULT_FORWARD_TIMEOUT_MS, mcpCode } from './forwarding.js';
import { CLIENT_INFO, listCatalog } from './mcpCatalog.js';
import { formatMs } from './serviceDiagnostics.js';
import {
  emitSafely,
  type ServiceEvent,
  type ServiceEventBase,
  type ServiceEventListener,
  type ServiceState,
} from './serviceEvents.js';
import type { ForwardOptions, ServiceCatalog, ServiceSession } from './serviceSession.js';
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
  /** Default milliseconds a forwarded call may take. Default 60,000. */
  forwardTimeoutMs?: number;
}

/** Options of {@link connectRemoteService}. */
export interface ConnectRemoteOptions {
  /** Absolute end of the startup budget in epoch milliseconds. Default: 35,000 ms from the call. */
  deadline?: number;
  /** Aborts the connect (reported as `startup_timeout`). */
  signal?: AbortSignal;
  /** Receives every state transition and the service events. */
  onEvent?: ServiceEventListener;
}

/** A connected and listed remote service. */
export interface RemoteServiceSession extends ServiceSession {
  readonly kind: 'remote';
  readonly state: ServiceState;
  /** The endpoint without credentials or query string. */
  readonly url: string;
}

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

class RemoteService implements RemoteServiceSession {
  readonly kind = 'remote' as const;
  readonly name: string;
  readonly aliases: readonly string[];
  readonly url: string;
  private readonly spec: RemoteServiceSpec;
  private readonly options: ConnectRemoteOptions;
  private readonly client = new Client(CLIENT_INFO, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  private current: ServiceState | undefined;
  private listed: ServiceCatalog | undefined;
  private closing: Promise<void> | undefined;

  constructor(spec: RemoteServiceSpec, options: ConnectRemoteOptions) {
    this.spec = spec;
    this.options = options;
    this.name = spec.name;
    this.aliases = spec.aliases && spec.aliases.length > 0 ? [...spec.aliases] : [spec.name];
    this.url = publicUrl(spec.url);
    this.client.onerror = () => {};
  }

  get state(): ServiceState {
    return this.current ?? 'initializing';
  }

  get catalog(): ServiceCatalog {
    return this.listed ?? { tools: [], resources: [], resourceTemplates: [], prompts: [] };
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
        throw this.error('remote_unreachable', `has an invalid URL`, error);
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
        this.listed = await listCatalog(this.client, { signal: budget.signal, timeoutMs: () => budget.remainingMs() });
      } catch (error) {
        throw this.classifyStartError(error, budget, 'listing');
      }
      this.transition('ready');
      const c = this.listed;
      this.emit({
        type: 'service.ready',
        startMs: Date.now() - startedAt,
        tools: c.tools.length,
        resources: c.resources.length,
        resourceTemplates: c.resourceTemplates.length,
        prompts: c.prompts.length,
        ...(c.protocolVersion === undefined ? {} : { protocolVersion: c.protocolVersion }),
      });
    } catch (error) {
      const failure = isSdkError(error) ? (error as SdkError) : this.error('remote_unreachable', 'failed', error);
      this.transition('failed');
      this.emit({ type: 'service.failed', error: { code: failure.code, message: failure.message } });
      await this.close();
      throw failure;
    } finally {
      budget.dispose();
    }
  }

  callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options?: ForwardOptions,
  ): ReturnType<ServiceSession['callTool']> {
    return this.forward(`tools/call "${name}"`, options, (o) =>
      this.client.callTool(args === undefined ? { name } : { name, arguments: args }, o),
    ) as ReturnType<ServiceSession['callTool']>;
  }

  readResource(uri: string, options?: ForwardOptions): ReturnType<ServiceSession['readResource']> {
    return this.forward(`resources/read "${uri}"`, options, (o) => this.client.readResource({ uri }, o));
  }

  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    options?: ForwardOptions,
  ): ReturnType<ServiceSession['getPrompt']> {
    return this.forward(`prompts/get "${name}"`, options, (o) =>
      this.client.getPrompt(args === undefined ? { name } : { name, arguments: args }, o),
    );
  }

  /** Closes our client (the remote service keeps running). Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const wasFailed = this.current === 'failed';
    this.transition('stopping');
    await runEach([() => this.client.close()]);
    this.transition('exited');
    if (!wasFailed || this.listed !== undefined) {
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

  private async forward<T>(
    what: string,
    options: ForwardOptions | undefined,
    run: (requestOptions: RequestOptions) => Promise<T>,
  ): Promise<T> {
    if (this.current !== 'ready') {
      throw this.error('remote_unreachable', `is ${this.state}; ${what} failed`);
    }
    const timeoutMs = options?.timeoutMs ?? this.spec.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
    const signal = options?.signal;
    try {
      return await run({ timeout: timeoutMs, ...(signal === undefined ? {} : { signal }) });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const code = mcpCode(error);
      if (code === 'REQUEST_TIMEOUT') {
        throw this.error(
          'forward_timeout',
          `did not answer ${what} within ${formatMs(timeoutMs)}; the request was cancelled`,
          error,
          { timeoutMs, request: what },
        );
      }
      if (isNetworkError(error) || code === 'CONNECTION_CLOSED' || code === 'NOT_CONNECTED') {
        throw this.error('remote_unreachable', `could not be reached for ${what}: ${messageOf(error)}`, error);
      }
      throw error;
    }
  }

  private classifyStartError(error: unknown, budget: StartBudget, phase: 'connect' | 'listing'): SdkError {
    if (budget.signal.aborted || mcpCode(error) === 'REQUEST_TIMEOUT') {
      const cancelled = budget.reason === 'cancelled';
      return this.error(
        'startup_timeout',
        cancelled
          ? `connect was cancelled during ${phase}`
          : `did not finish ${phase} within ${formatMs(budget.totalMs)}`,
        error,
        { budgetMs: budget.totalMs, phase, cancelled },
      );
    }
    if (phase === 'connect') {
      return this.error('remote_unreachable', `could not be reached: ${messageOf(error)}`, error);
    }
    return this.error('initialize_failed', `failed to list what it offers: ${messageOf(error)}`, error);
  }

  private error(code: SdkError['code'], what: string, cause?: unknown, extra: Record<string, unknown> = {}): SdkError {
    const remedy =
      code === 'remote_unreachable'
        ? 'Check that the remote service is running and that its URL (a Streamable HTTP endpoint, e.g. …/mcp) is right.'
        : code === 'forward_timeout'
          ? 'Make the call finish sooner, or raise the forwarding timeout.'
          : 'Check the remote service: it must answer initialize and its list requests.';
    return new SdkError(code, `remote service "${this.name}" ${what} (${this.url})`, {
      remedy,
      data: { service: this.name, url: this.url, ...extra },
      cause,
    });
  }

  private transition(to: ServiceState): void {
    const from = this.current;
    if (from === to) return;
    this.current = to;
    this.emit({ type: 'service.state', from, to });
  }

  private emit(event: DistributiveOmit<ServiceEvent, keyof ServiceEventBase>): void {
    const base: ServiceEventBase = {
      time: new Date().toISOString(),
      service: this.name,
      kind: 'remote',
      url: this.url,
    };
    emitSafely(this.options.onEvent, { ...base, ...event } as ServiceEvent);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

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
