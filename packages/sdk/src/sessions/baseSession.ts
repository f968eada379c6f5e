/**
 * What a project service and a remote service do alike, written once: their names, the state machine
 * and its events, listing at start and the `service.ready` event, the forwarding wrappers (timeout,
 * caller abort, `forward_timeout`), the start budget's `startup_timeout`, and an idempotent close. Each
 * kind adds how it connects, how it describes a failure, and how it is collected.
 */
import type { CallToolResult, Client, RequestOptions, Tool } from '@modelcontextprotocol/client';
import { type ErrorCode, isSdkError, type SdkError } from '../errors.js';
import { DEFAULT_FORWARD_TIMEOUT_MS, mcpCode } from './forwarding.js';
import { type CallFacts, telemetry } from '../events/telemetry.js';
import { redactUrlsIn } from '../redact.js';
import { diffCatalogs, hasChanges } from './catalogDiff.js';
import { type ChangedList, listCatalog, onListChanged, routeProgress } from './mcpCatalog.js';
import { callToolDirect, callToolKept, OutputSchemaChecks } from './rawToolCall.js';
import type { DirectRequests } from './directRequests.js';
import { type Abortable, CallCancel, listenAbort } from './callCancel.js';
import { type FailureFacts, formatMs } from './serviceDiagnostics.js';
import {
  type CatalogChange,
  emitSafely,
  type ServiceEvent,
  type ServiceEventBase,
  type ServiceEventListener,
  type ServiceState,
} from './serviceEvents.js';
import type { ForwardOptions, ServiceCatalog, ServiceSession } from './serviceSession.js';
import type { StartBudget } from './startBudget.js';
import { CallHold, holdingWhileAsked, QuestionDesk } from './elicitation.js';
import { TaskFollower } from './taskFollower.js';
import { type AcceptedTask, callsAsTask } from './tasks.js';
import { MAX_DURATION_MS } from '../workflow/durations.js';

/** A service event without the fields the session fills in (`time` and the {@link ServiceEventBase}). */
export type ServiceEventBody = DistributiveOmit<ServiceEvent, keyof ServiceEventBase>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** Default of {@link StartServiceOptions.listTtlFloorMs}: 1,000 ms. */
export const DEFAULT_LIST_TTL_FLOOR_MS = 1000;

/** The longest `ttlMs` honoured: 24 h (a server cannot pin a list for ever). */
const MAX_LIST_TTL_MS = 86_400_000;

/** Milliseconds a 2026-07-28 server has to acknowledge the `subscriptions/listen` stream: 10,000. */
const LISTEN_ACK_TIMEOUT_MS = 10_000;

/** Default milliseconds between a `notifications/…/list_changed` and listing the service again: 50. */
export const DEFAULT_LIST_CHANGE_DEBOUNCE_MS = 50;

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
  private readonly listChangeDebounceMs: number;
  /** Lists announced as changed and not listed again yet, in the order heard. */
  private readonly pendingLists = new Set<ChangedList>();
  private relistTimer: NodeJS.Timeout | undefined;
  /** Lists the service again when its lists' shortest `ttlMs` has passed (2026-07-28). */
  private expiryTimer: NodeJS.Timeout | undefined;
  private readonly listTtlFloorMs: number;
  /** Milliseconds the start waited at the admission gate (set by a kind that passes one). */
  protected queuedMs: number | undefined;
  private relisting: Promise<void> | undefined;
  /** Aborts a re-listing in flight when the session closes. */
  private readonly relistAbort = new AbortController();
  private readonly catalogListeners = new Set<(change: CatalogChange) => void>();
  /** The arguments of the `tools/call` being forwarded, for its span (see {@link forward}). */
  private callArguments: unknown;
  /** The tasks this session follows (made at the first task-capable call). */
  private tasks: TaskFollower | undefined;
  /** Answers the questions the service asks during calls (sessions/elicitation.ts). */
  private readonly questions = new QuestionDesk();
  /** The output-schema checks of kept tool results (one validator per session). */
  private readonly outputChecks = new OutputSchemaChecks();
  /** The state reported before the first transition (`starting` for a project service, `initializing` for a remote one). */
  protected abstract readonly initialState: ServiceState;

  protected constructor(
    name: string,
    aliases: readonly string[] | undefined,
    onEvent: ServiceEventListener | undefined,
    listChangeDebounceMs: number = DEFAULT_LIST_CHANGE_DEBOUNCE_MS,
    listTtlFloorMs: number = DEFAULT_LIST_TTL_FLOOR_MS,
  ) {
    this.listTtlFloorMs = Math.min(Math.max(0, Math.trunc(listTtlFloorMs) || 0), MAX_DURATION_MS);
    this.name = name;
    this.aliases = aliases && aliases.length > 0 ? [...aliases] : [name];
    this.listener = onEvent;
    this.listChangeDebounceMs = Math.min(Math.max(0, Math.trunc(listChangeDebounceMs) || 0), MAX_DURATION_MS);
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
    // own: the result is checked against the listed definition's output schema.
    const toolDefinition = this.listed?.tools.find((t) => t.name === name);
    // A call whose questions a person may answer has its forwarding timeout wait while they do.
    const hold = options?.question?.askOperator === undefined ? undefined : new CallHold();
    const question =
      hold === undefined ? options?.question : holdingWhileAsked(options?.question, (on) => hold.set(on));
    const forwardOptions = hold === undefined ? options : { ...options, hold };
    return this.questions.during(`tool "${name}"`, this.name, question, () =>
      this.current === 'ready' && callsAsTask(this.connectedClient(), toolDefinition)
        ? this.callAsTask(name, args, toolDefinition, forwardOptions)
        : this.callDirect(name, args, toolDefinition, forwardOptions),
    );
  }

  private callDirect(
    name: string,
    args: Record<string, unknown> | undefined,
    toolDefinition: Tool | undefined,
    options: ForwardOptions | undefined,
  ): Promise<CallToolResult> {
    const params = (progressToken: string | number | undefined) => ({
      name,
      ...(args === undefined ? {} : { arguments: args }),
      ...(progressToken === undefined ? {} : { _meta: { progressToken } }),
    });
    this.callArguments = args;
    // A project service's result is passed on as it arrived (sessions/rawToolCall.ts), sent beside the
    // client where the transport allows (sessions/directRequests.ts); a remote one goes through the
    // client's callTool, which also mirrors `x-mcp-header` arguments into HTTP headers.
    return this.forward(`tools/call "${name}"`, options, (client, o, progressToken, cancel) => {
      if (this.kind !== 'project') {
        return client.callTool(params(progressToken), {
          ...o,
          ...(toolDefinition === undefined ? {} : { toolDefinition }),
        });
      }
      const direct = this.directRequests();
      return direct === undefined
        ? callToolKept(client, params(progressToken), toolDefinition, this.outputChecks, o)
        : callToolDirect(direct, params(progressToken), toolDefinition, this.outputChecks, {
            timeout: o.timeout,
            ...(cancel === undefined ? { signal: o.signal } : { cancel }),
          });
    }) as Promise<CallToolResult>;
  }

  /** A task-capable call: sent task-augmented, then followed by {@link TaskFollower} (sessions/taskFollower.ts). */
  private callAsTask(
    name: string,
    args: Record<string, unknown> | undefined,
    tool: Tool | undefined,
    options: ForwardOptions | undefined,
  ): Promise<CallToolResult> {
    this.tasks ??= new TaskFollower(
      this.name,
      () => this.connectedClient(),
      (error, what) => this.callFailed(error, what),
    );
    return this.tasks
      .call(name, args, options ?? {}, (what, forwardOptions, send) => this.forward(what, forwardOptions, send))
      .then((result) => {
        this.outputChecks.check(tool, result);
        return result;
      });
  }

  resumeTask(tool: string, task: AcceptedTask, options?: ForwardOptions): Promise<CallToolResult> {
    if (this.current !== 'ready') return Promise.reject(this.notReady(`task ${task.taskId} of tool "${tool}"`));
    this.tasks ??= new TaskFollower(
      this.name,
      () => this.connectedClient(),
      (error, what) => this.callFailed(error, what),
    );
    return this.tasks.follow(tool, task, options ?? {});
  }

  async cancelOpenTasks(): Promise<void> {
    await this.tasks?.cancelAll();
  }

  readResource(uri: string, options?: ForwardOptions): ReturnType<ServiceSession['readResource']> {
    return this.forward(`resources/read "${redactUrlsIn(uri)}"`, options, (client, o) =>
      client.readResource({ uri }, o),
    );
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

  onCatalogChanged(listener: (change: CatalogChange) => void): () => void {
    this.catalogListeners.add(listener);
    return () => {
      this.catalogListeners.delete(listener);
    };
  }

  /** Collects the session once; later calls share the first one's promise. */
  close(): Promise<void> {
    if (this.closing === undefined) {
      clearTimeout(this.relistTimer);
      this.relistTimer = undefined;
      clearTimeout(this.expiryTimer);
      this.expiryTimer = undefined;
      this.relistAbort.abort();
      this.catalogListeners.clear();
    }
    // Tasks still followed are cancelled at the service before it is collected (a project service's
    // tasks die with it; a remote service's would run on, unwatched).
    this.closing ??= (this.tasks?.cancelAll() ?? Promise.resolve()).then(() => this.shutdown());
    return this.closing;
  }

  // ---- what each kind provides ------------------------------------------------------------------------

  /** The connected client (only asked for while `ready`). */
  protected abstract connectedClient(): Client;
  /**
   * Where `tools/call` can be sent beside the client (a 2025-era stdio connection), or undefined: through
   * the client. Asked for at each call, while `ready`. Default: never.
   */
  protected directRequests(): DirectRequests | undefined {
    return undefined;
  }
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
    // Heard from here on: a change announced while the start lists is listed again once ready.
    onListChanged(client, (list) => this.listChanged(client, list));
    this.questions.attach(client);
    this.listenForChanges(client);
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
    this.scheduleExpiry(client, this.listed);
    return this.listed;
  }

  /**
   * Honours the lists' `ttlMs` (2026-07-28): when the shortest positive one has passed (at least
   * `listTtlFloorMs`, at most 24 h), every list with a `ttlMs` is listed again through the same path as
   * an announced change (a change found is journaled as `service.catalog_changed`). A `ttlMs` of 0 or none
   * means the catalog is served until the service announces a change.
   */
  private scheduleExpiry(client: Client, catalog: ServiceCatalog): void {
    clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    if (this.isClosing) return;
    const timed = Object.entries(catalog.freshness ?? {}).filter(([, hints]) => (hints?.ttlMs ?? 0) > 0);
    if (timed.length === 0) return;
    const soonest = Math.min(...timed.map(([, hints]) => hints!.ttlMs!));
    const wait = Math.min(Math.max(soonest, this.listTtlFloorMs), MAX_LIST_TTL_MS);
    const lists = new Set(timed.map(([key]) => (key === 'resourceTemplates' ? 'resources' : key) as ChangedList));
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = undefined;
      for (const list of lists) this.listChanged(client, list);
    }, wait);
    this.expiryTimer.unref();
  }

  /**
   * On a 2026-07-28 connection a server's list changes travel only on a `subscriptions/listen` stream: one
   * is opened, as listing starts, for every list the server says changes; its notifications reach the same
   * debounced re-list as a 2025-era server's. It never holds up the start: a server that refuses the
   * stream, or does not acknowledge it within {@link LISTEN_ACK_TIMEOUT_MS}, keeps the catalog listed at
   * start (journaled as `service.catalog_refresh_failed` with code `listen_refused`).
   */
  private listenForChanges(client: Client): void {
    if (client.getProtocolEra() !== 'modern') return;
    const capabilities = client.getServerCapabilities() ?? {};
    const lists = (['tools', 'resources', 'prompts'] as const).filter(
      (list) => capabilities[list]?.listChanged === true,
    );
    if (lists.length === 0) return;
    const filter = Object.fromEntries(lists.map((list) => [`${list}ListChanged`, true]));
    client.listen(filter, { timeout: LISTEN_ACK_TIMEOUT_MS }).catch((error: unknown) => {
      if (this.isClosing) return;
      this.emit({
        type: 'service.catalog_refresh_failed',
        lists: [...lists],
        error: {
          code: 'listen_refused',
          message: `the service did not open subscriptions/listen (${error instanceof Error ? error.message : String(error)}); its lists stay the ones listed at start`,
        },
      });
    });
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
      ...this.eraFacts(),
      ...(this.queuedMs === undefined ? {} : { queuedMs: this.queuedMs }),
    });
  }

  /**
   * The protocol era of the connection and how it was chosen, for `service.ready` (a stdio service: the
   * era remembered for its digest, negotiated, or negotiated after a damaged cache file). Default none.
   */
  protected eraFacts(): { era?: 'legacy' | 'modern'; eraSource?: 'remembered' | 'negotiated' | 'damaged_cache' } {
    return {};
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
   * The official client sends `notifications/cancelled` to the service when either fires. With
   * `onProgress`, `send` is given a progress token: each progress for it starts the timeout again, up to
   * `maxTotalTimeoutMs` (default 10 × the timeout) in all.
   */
  protected forward<T>(
    what: string,
    options: ForwardOptions | undefined,
    send: (client: Client, requestOptions: RequestOptions, progressToken?: string, cancel?: CallCancel) => Promise<T>,
  ): Promise<T> {
    // Taken synchronously: callTool sets it just before calling here, in the same tick.
    const args = this.callArguments;
    this.callArguments = undefined;
    const traced = telemetry();
    if (traced === undefined) return this.forwardNow(what, options, send);
    return traced.inCall(this.callFacts(what, args), () => this.forwardNow(what, options, send));
  }

  /** What a call's span says of it (`what` is `<method> "<target>"`); see events/telemetrySpans.ts. */
  private callFacts(what: string, args: unknown): CallFacts {
    const space = what.indexOf(' ');
    return {
      method: space === -1 ? what : what.slice(0, space),
      target: space === -1 ? '' : what.slice(space + 1).replace(/^"|"$/g, ''),
      service: this.name,
      kind: this.kind,
      protocolVersion: this.listed?.protocolVersion,
      sessionId: this.sessionIdForTrace(),
      arguments: args,
    };
  }

  /** The MCP session id of the connection, for a call's span (a remote 2025-era connection has one). */
  protected sessionIdForTrace(): string | undefined {
    return undefined;
  }

  private async forwardNow<T>(
    what: string,
    options: ForwardOptions | undefined,
    send: (client: Client, requestOptions: RequestOptions, progressToken?: string, cancel?: CallCancel) => Promise<T>,
  ): Promise<T> {
    if (this.current !== 'ready') throw this.notReady(what);
    const timeoutMs = options?.timeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
    // The gate's cancellation (sessions/callCancel.ts): its `signal` getter is read only where a real
    // AbortSignal is needed (the SDK client's request options), so a direct call builds none.
    const cancel = options?.cancel;
    const signal: Abortable | undefined = cancel ?? options?.signal;
    const onProgress = options?.onProgress;
    const hold = options?.hold;
    const client = this.connectedClient();
    if (onProgress === undefined && hold === undefined) {
      try {
        return await send(client, requestOptionsOf(timeoutMs, signal), undefined, cancel);
      } catch (error) {
        throw await this.forwardFailed(error, what, signal, timeoutMs);
      }
    }
    // As the official clients' resetTimeoutOnProgress, with the timer here: the client's own progress
    // handling can miss the last progress (see routeProgress), and the client's timeout is only a backstop.
    const maxTotalTimeoutMs = Math.min(
      Math.max(timeoutMs, options?.maxTotalTimeoutMs ?? timeoutMs * 10),
      MAX_DURATION_MS,
    );
    const startedAt = Date.now();
    const controller = new AbortController();
    let timedOut: 'timeout' | 'maximum' | undefined;
    let timer: NodeJS.Timeout | undefined;
    // While a person answers a question of the call the timeout waits; the time held is not the service's.
    let heldSince: number | undefined;
    let heldMs = 0;
    const arm = () => {
      clearTimeout(timer);
      if (heldSince !== undefined) return;
      const left = maxTotalTimeoutMs - (Date.now() - startedAt - heldMs);
      timer = setTimeout(
        () => {
          timedOut = left < timeoutMs ? 'maximum' : 'timeout';
          controller.abort(new Error('forward timeout'));
        },
        Math.max(0, Math.min(timeoutMs, left, MAX_DURATION_MS)),
      );
      timer.unref();
    };
    const onCallerAbort = () => controller.abort(signal?.reason);
    let unlistenCaller: (() => void) | undefined;
    if (signal?.aborted) onCallerAbort();
    else unlistenCaller = listenAbort(signal, onCallerAbort);
    // Progress is asked for only by a caller that listens to it.
    const route =
      onProgress === undefined
        ? undefined
        : routeProgress(client, (progress) => {
            if (controller.signal.aborted) return;
            arm();
            onProgress(progress);
          });
    const unlisten = hold?.listen((on) => {
      if (on) {
        heldSince ??= Date.now();
        clearTimeout(timer);
      } else if (heldSince !== undefined) {
        heldMs += Date.now() - heldSince;
        heldSince = undefined;
        arm();
      }
    });
    arm();
    try {
      // The client's own timeout only backs ours up: a second past the maximum (none while a person may
      // be asked: the time they take is not bounded here).
      const backstopMs = hold === undefined ? Math.min(maxTotalTimeoutMs + 1000, MAX_DURATION_MS) : MAX_DURATION_MS;
      return await send(client, { timeout: backstopMs, signal: controller.signal }, route?.token);
    } catch (error) {
      if (timedOut !== undefined) {
        const within =
          timedOut === 'maximum'
            ? `within the ${formatMs(maxTotalTimeoutMs)} maximum, though it reported progress`
            : `within ${formatMs(timeoutMs)} of its last progress`;
        throw this.describe(
          'forward_timeout',
          `did not answer ${what} ${within}; the request was cancelled at the service`,
          {
            cause: error,
            extra: { timeoutMs, maxTotalTimeoutMs, request: what },
          },
        );
      }
      throw await this.forwardFailed(error, what, signal, timeoutMs);
    } finally {
      clearTimeout(timer);
      unlisten?.();
      route?.stop();
      unlistenCaller?.();
    }
  }

  /** What a forwarded request that failed throws: the caller's reason, `forward_timeout`, or {@link callFailed}'s error. */
  private async forwardFailed(
    error: unknown,
    what: string,
    signal: Abortable | undefined,
    timeoutMs: number,
  ): Promise<unknown> {
    if (signal?.aborted) return signal.reason;
    if (mcpCode(error) === 'REQUEST_TIMEOUT') {
      return this.describe(
        'forward_timeout',
        `did not answer ${what} within ${formatMs(timeoutMs)}; the request was cancelled at the service`,
        { cause: error, extra: { timeoutMs, request: what } },
      );
    }
    return this.callFailed(error, what);
  }

  /** A `notifications/<list>/list_changed` from the service: lists it again after the debounce. */
  private listChanged(client: Client, list: ChangedList): void {
    if (this.isClosing) return;
    this.pendingLists.add(list);
    this.scheduleRelist(client);
  }

  private scheduleRelist(client: Client): void {
    if (this.relistTimer !== undefined || this.relisting !== undefined || this.isClosing) return;
    this.relistTimer = setTimeout(() => {
      this.relistTimer = undefined;
      const state = this.state;
      if (state === 'ready') {
        this.relisting = this.relist(client).finally(() => {
          this.relisting = undefined;
          // Changes announced while listing are listed once more.
          if (this.pendingLists.size > 0) this.scheduleRelist(client);
        });
      } else if (state === 'starting' || state === 'initializing' || state === 'listing') {
        this.scheduleRelist(client);
      } else {
        this.pendingLists.clear();
      }
    }, this.listChangeDebounceMs);
    this.relistTimer.unref();
  }

  /**
   * Lists every list of the service again and puts the new catalog in place in one assignment: a request
   * already forwarded finishes as it was; the next one sees the new catalog. A failed listing keeps the
   * catalog as it was and is reported as `service.catalog_refresh_failed`.
   */
  private async relist(client: Client): Promise<void> {
    const lists = [...this.pendingLists];
    this.pendingLists.clear();
    const before = this.catalog;
    let after: ServiceCatalog;
    try {
      after = await listCatalog(client, {
        signal: this.relistAbort.signal,
        timeoutMs: () => DEFAULT_FORWARD_TIMEOUT_MS,
      });
    } catch (error) {
      if (this.isClosing || this.state !== 'ready') return;
      const failure = isSdkError(error) ? (error as SdkError) : undefined;
      const message = error instanceof Error ? error.message : String(error);
      this.emit({
        type: 'service.catalog_refresh_failed',
        lists,
        error: {
          code: failure?.code ?? 'protocol_error',
          message: `listing service "${this.name}" again (a change announced, or its lists' ttlMs passed) failed: ${message}`,
        },
      });
      return;
    }
    if (this.isClosing || this.state !== 'ready') return;
    const change = diffCatalogs(before, after, lists);
    this.listed = after;
    this.scheduleExpiry(client, after);
    if (!hasChanges(change)) return;
    this.emit({ type: 'service.catalog_changed', ...change });
    for (const listener of [...this.catalogListeners]) {
      try {
        listener(change);
      } catch {
        // A listener's failure is the listener's problem; the service goes on.
      }
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

/**
 * The SDK client's options of a forwarded request: its timeout and, when there is a cancellation, a
 * signal that follows it (a {@link CallCancel}'s lazy signal is built only if the client reads it).
 */
function requestOptionsOf(timeout: number, signal: Abortable | undefined): RequestOptions {
  if (signal === undefined) return { timeout };
  if (!(signal instanceof CallCancel)) return { timeout, signal };
  return {
    timeout,
    get signal() {
      return signal.signal;
    },
  };
}
