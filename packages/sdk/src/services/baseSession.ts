/**
 * What a project service and a remote service do alike, written once: their names, the state machine
 * and its events, listing at start and the `service.ready` event, the forwarding wrappers (timeout,
 * caller abort, `forward_timeout`), the start budget's `startup_timeout`, and an idempotent close. Each
 * kind adds how it connects, how it describes a failure, and how it is collected.
 */
import type { Client, RequestOptions } from '@modelcontextprotocol/client';
import { type ErrorCode, isSdkError, type SdkError } from '../errors.js';
import { DEFAULT_FORWARD_TIMEOUT_MS, mcpCode } from './forwarding.js';
import { listCatalog } from './mcpCatalog.js';
import { type FailureFacts, formatMs } from './serviceDiagnostics.js';
import {
  emitSafely,
  type ServiceEvent,
  type ServiceEventBase,
  type ServiceEventListener,
  type ServiceState,
} from './serviceEvents.js';
import type { ForwardOptions, ServiceCatalog, ServiceSession } from './serviceSession.js';
import type { StartBudget } from './startBudget.js';

/** A service event without the fields the session fills in (`time` and the {@link ServiceEventBase}). */
export type ServiceEventBody = DistributiveOmit<ServiceEvent, keyof ServiceEventBase>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The phase a start failed in, for messages: `launch`/`connect`, `initialize`, `listing`. */
export type StartPhase = 'launch' | 'connect' | 'initialize' | 'listing';

/** The shared part of every live service session; see the module comment. */
export abstract class BaseSession implements ServiceSession {
  abstract readonly kind: 'project' | 'remote';
  readonly name: string;
  readonly aliases: readonly string[];
  private current: ServiceState | undefined;
  private listed: ServiceCatalog | undefined;
  private closing: Promise<void> | undefined;
  private readonly listener: ServiceEventListener | undefined;
  /** The state reported before the first transition (`starting` for a project service, `initializing` for a remote one). */
  protected abstract readonly initialState: ServiceState;

  protected constructor(
    name: string,
    aliases: readonly string[] | undefined,
    onEvent: ServiceEventListener | undefined,
  ) {
    this.name = name;
    this.aliases = aliases && aliases.length > 0 ? [...aliases] : [name];
    this.listener = onEvent;
  }

  get state(): ServiceState {
    return this.current ?? this.initialState;
  }

  get catalog(): ServiceCatalog {
    // Not listed (yet): an empty catalog, a new one each time so no caller can change another's.
    return this.listed ?? { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  }

  /** Whether the session was listed at start (a failed start may not have been). */
  protected get wasListed(): boolean {
    return this.listed !== undefined;
  }

  /** Whether {@link close} has been called. */
  protected get isClosing(): boolean {
    return this.closing !== undefined;
  }

  callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options?: ForwardOptions,
  ): ReturnType<ServiceSession['callTool']> {
    // The lists are walked by listCatalog, not by the client, so the client holds no `tools/list` of its
    // own: the listed definition is handed to it, and it checks the result against the output schema.
    const toolDefinition = this.listed?.tools.find((t) => t.name === name);
    return this.forward(`tools/call "${name}"`, options, (client, o) =>
      client.callTool(args === undefined ? { name } : { name, arguments: args }, {
        ...o,
        ...(toolDefinition === undefined ? {} : { toolDefinition }),
      }),
    ) as ReturnType<ServiceSession['callTool']>;
  }

  readResource(uri: string, options?: ForwardOptions): ReturnType<ServiceSession['readResource']> {
    return this.forward(`resources/read "${uri}"`, options, (client, o) => client.readResource({ uri }, o));
  }

  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    options?: ForwardOptions,
  ): ReturnType<ServiceSession['getPrompt']> {
    return this.forward(`prompts/get "${name}"`, options, (client, o) =>
      client.getPrompt(args === undefined ? { name } : { name, arguments: args }, o),
    );
  }

  /** Collects the session once; later calls share the first one's promise. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  // ---- what each kind provides ------------------------------------------------------------------------

  /** The connected client (only asked for while `ready`). */
  protected abstract connectedClient(): Client;
  /** Collects the session; never rejects. Called once, by {@link close}. */
  protected abstract shutdown(): Promise<void>;
  /** An error naming this service, its launch or URL, and the remedy for `code`. */
  protected abstract describe(code: ErrorCode, what: string, facts?: FailureFacts): SdkError;
  /** The error for a request while the session is not `ready`. */
  protected abstract notReady(what: string): SdkError;
  /** The error for a forwarded request that failed other than by its timeout or the caller's abort. */
  protected abstract callFailed(error: unknown, what: string): Promise<unknown> | unknown;
  /** The fields of this kind's events besides `time`. */
  protected abstract eventBase(): Omit<ServiceEventBase, 'time'>;

  // ---- shared steps -----------------------------------------------------------------------------------

  /**
   * Lists every page of what the server offers, within the start budget, and keeps it as the catalog. A
   * list past its bounds or with a repeated cursor fails the start with that code, naming this service.
   */
  protected async listWithin(client: Client, budget: StartBudget): Promise<ServiceCatalog> {
    try {
      this.listed = await listCatalog(client, { signal: budget.signal, timeoutMs: () => budget.remainingMs() });
    } catch (error) {
      if (isSdkError(error)) {
        const e = error as SdkError;
        throw this.describe(e.code, `failed to list what it offers: ${e.message}`, {
          cause: e,
          ...(e.remedy === undefined ? {} : { remedy: e.remedy }),
          extra: e.data,
        });
      }
      throw error;
    }
    return this.listed;
  }

  /** Enters `ready` and reports it with what the catalog holds. */
  protected becomeReady(startedAt: number): void {
    this.transition('ready');
    const c = this.catalog;
    this.emit({
      type: 'service.ready',
      startMs: Date.now() - startedAt,
      tools: c.tools.length,
      resources: c.resources.length,
      resourceTemplates: c.resourceTemplates.length,
      prompts: c.prompts.length,
      ...(c.protocolVersion === undefined ? {} : { protocolVersion: c.protocolVersion }),
    });
  }

  /**
   * The `startup_timeout` error when the start budget ran out or was cancelled (or a request of the start
   * timed out), else `undefined`.
   */
  protected startTimeout(
    error: unknown,
    budget: StartBudget,
    phase: StartPhase,
    facts: FailureFacts = {},
  ): SdkError | undefined {
    if (!budget.signal.aborted && mcpCode(error) !== 'REQUEST_TIMEOUT') return undefined;
    const cancelled = budget.reason === 'cancelled';
    const step = phase === 'listing' ? 'listing' : phase === 'connect' ? 'connect' : 'initialize';
    const what = cancelled
      ? `${this.kind === 'remote' ? 'connect' : 'start'} was cancelled during ${phase}`
      : `did not finish ${step} within ${formatMs(budget.totalMs)}`;
    return this.describe('startup_timeout', what, {
      ...facts,
      cause: error,
      extra: { ...facts.extra, budgetMs: budget.totalMs, phase, cancelled },
    });
  }

  /**
   * Forwards one request while `ready`, with the request's timeout (default
   * {@link DEFAULT_FORWARD_TIMEOUT_MS}, 60 s; the surface always names its own) and the caller's signal.
   * The official client sends `notifications/cancelled` to the service when either fires.
   */
  protected async forward<T>(
    what: string,
    options: ForwardOptions | undefined,
    send: (client: Client, requestOptions: RequestOptions) => Promise<T>,
  ): Promise<T> {
    if (this.current !== 'ready') throw this.notReady(what);
    const timeoutMs = options?.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
    const signal = options?.signal;
    try {
      return await send(this.connectedClient(), { timeout: timeoutMs, ...(signal === undefined ? {} : { signal }) });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (mcpCode(error) === 'REQUEST_TIMEOUT') {
        throw this.describe(
          'forward_timeout',
          `did not answer ${what} within ${formatMs(timeoutMs)}; the request was cancelled at the service`,
          { cause: error, extra: { timeoutMs, request: what } },
        );
      }
      throw await this.callFailed(error, what);
    }
  }

  /** Moves to `to` and reports the transition (a move to the same state is no transition). */
  protected transition(to: ServiceState): void {
    const from = this.current;
    if (from === to) return;
    this.current = to;
    this.emit({ type: 'service.state', from, to });
  }

  /** Reports one event with this session's base fields; a listener's throw is ignored. */
  protected emit(event: ServiceEventBody): void {
    emitSafely(this.listener, { time: new Date().toISOString(), ...this.eventBase(), ...event } as ServiceEvent);
  }
}
