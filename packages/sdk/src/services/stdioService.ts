/**
 * One project service's life (SPEC §5): launched in its own process group with a minimal environment,
 * stderr drained into a capped log, initialized and listed with the official MCP client over our own
 * stdio transport, serving calls with a forwarding timeout, and collected (stdin end, SIGTERM to the
 * group, SIGKILL after the grace, sweep for marked strays) so that nothing of it survives.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Client, type RequestOptions } from '@modelcontextprotocol/client';
import { isSdkError, type SdkError } from '../errors.js';
import { DEFAULT_FORWARD_TIMEOUT_MS, mcpCode } from './forwarding.js';
import { CLIENT_INFO, listCatalog } from './mcpCatalog.js';
import type { ProcessRegistry } from './processRegistry.js';
import { type CollectResult, SupervisedGroup } from './processGroup.js';
import { resolveCommand } from './resolveCommand.js';
import { describeExit, formatMs, type ServiceIdentity, serviceError } from './serviceDiagnostics.js';
import {
  emitSafely,
  type ServiceEvent,
  type ServiceEventBase,
  type ServiceEventListener,
  type ServiceState,
} from './serviceEvents.js';
import type { ForwardOptions, ServiceCatalog, ServiceSession } from './serviceSession.js';
import { StartBudget } from './startBudget.js';
import { StderrLog } from './stderrLog.js';
import { ServiceStdioTransport } from './stdioTransport.js';
import { raceDelay, runEach } from './teardown.js';

/**
 * Milliseconds to keep reading stdout after the leader exited before the connection is declared lost: 50.
 * The exit status can arrive before the last answers the service wrote have been read from the pipe.
 */
const EXIT_DRAIN_MS = 50;

/** Milliseconds to wait for the leader's exit status once its stdout closed: 1,000. */
const EXIT_STATUS_WAIT_MS = 1000;

/** What to launch and how (the invocation layer fills it from the plan and the copy). */
export interface StdioServiceSpec {
  /** The service name the agent sees. */
  serviceName: string;
  /** Every name the session serves under (aliases of one definition). Default `[serviceName]`. */
  aliases?: readonly string[];
  /** The definition it runs (`mcpDefinitions.<name>`). */
  definitionName: string;
  /** The definition's digest. */
  digest: string;
  /** `node` (the SDK's own Node), an executable on the env's `PATH`, or a path. */
  command: string;
  /** The absolute path of the copied entrypoint. */
  entrypointPath: string;
  /** Arguments after the entrypoint. Default `[]`. */
  args?: readonly string[];
  /** The working directory (the invocation's task workspace). */
  cwd: string;
  /** The complete environment (see `buildServiceEnv`); nothing else of the host's reaches the service. */
  env: Readonly<Record<string, string>>;
  /** Where the capped stderr log goes (`mcp/<name>.stderr.log`). */
  stderrLogPath: string;
  /** The invocation's marker; must also be `env.SCIENCEEVOLVE_MARKER` for the sweep to find strays. */
  marker: string;
  /** Told of the marker before the spawn and of the group right after (the supervisor client). */
  registry?: ProcessRegistry;
  /** Milliseconds between SIGTERM and SIGKILL on stop. Default 2,000. */
  graceMs?: number;
  /** Default milliseconds a forwarded call may take. Default 60,000. */
  forwardTimeoutMs?: number;
}

/** Options of one start. */
export interface StartServiceOptions {
  /**
   * Absolute end of the startup budget in epoch milliseconds (`Date.now()` scale). Default: 35,000 ms from
   * the call, also when a signal is given.
   */
  deadline?: number;
  /** Aborts the start (reported as `startup_timeout`; a `TimeoutError` reason counts as the deadline). */
  signal?: AbortSignal;
  /** Receives every state transition and the service events. */
  onEvent?: ServiceEventListener;
  /** Bytes of stderr kept in the log file. Default 1 MiB. */
  stderrCapBytes?: number;
  /** Milliseconds to wait after SIGKILL for the processes to go. Default 5,000. */
  killWaitMs?: number;
}

/** A live project service: a {@link ServiceSession} with its process facts. */
export interface StdioServiceSession extends ServiceSession {
  readonly kind: 'project';
  /** The leader's pid. */
  readonly pid: number;
  /** The process group id (= `pid`: the leader leads its own group). */
  readonly pgid: number;
  readonly state: ServiceState;
  readonly stderrLogPath: string;
  /** Why the service failed, once it has. */
  readonly failure: SdkError | undefined;
  /** Stdout lines skipped so far because they were not JSON-RPC. */
  readonly pollutedLines: number;
  /** Stdout lines so far that claimed JSON-RPC but were invalid. */
  readonly invalidLines: number;
  /** After close: pids that outlived SIGKILL and the wait (normally empty); the supervisor keeps them. */
  readonly survivors: readonly number[];
  /** The last lines of stderr (for diagnostics; never published as events). */
  stderrTail(): string[];
}

/**
 * Launches a project service and resolves once it is initialized and listed (`ready`). On any failure the
 * process group is collected before the returned promise rejects with an SdkError: `command_not_found`,
 * `startup_timeout`, `initialize_failed`, `service_exited`, `protocol_error` (or `io_error` when the log
 * cannot be opened), whose `data` holds service, definition, digest, launch, pid/pgid, exitCode/signal,
 * stderrTail and log.
 */
export async function startStdioService(
  spec: StdioServiceSpec,
  options: StartServiceOptions = {},
): Promise<StdioServiceSession> {
  const service = new StdioService(spec, options);
  await service.start();
  return service;
}

type ExitStatus = { code: number | null; signal: NodeJS.Signals | null };

class StdioService implements StdioServiceSession {
  readonly kind = 'project' as const;
  readonly name: string;
  readonly aliases: readonly string[];
  readonly stderrLogPath: string;
  pid = 0;
  pgid = 0;
  private leftAlive: number[] = [];

  get survivors(): readonly number[] {
    return this.leftAlive;
  }

  private readonly spec: StdioServiceSpec;
  private readonly options: StartServiceOptions;
  private readonly identity: ServiceIdentity;
  private readonly startedAt = Date.now();
  private current: ServiceState | undefined;
  private child: ChildProcess | undefined;
  private group: SupervisedGroup | undefined;
  private log: StderrLog | undefined;
  private transport: ServiceStdioTransport | undefined;
  private client: Client | undefined;
  private listed: ServiceCatalog | undefined;
  private failed: SdkError | undefined;
  private exitStatus: ExitStatus | undefined;
  private markExited: () => void = () => {};
  private readonly exited: Promise<void> = new Promise((resolve) => {
    this.markExited = resolve;
  });
  private closing: Promise<void> | undefined;

  constructor(spec: StdioServiceSpec, options: StartServiceOptions) {
    this.spec = spec;
    this.options = options;
    this.name = spec.serviceName;
    this.aliases = spec.aliases && spec.aliases.length > 0 ? [...spec.aliases] : [spec.serviceName];
    this.stderrLogPath = spec.stderrLogPath;
    this.identity = {
      service: spec.serviceName,
      definition: spec.definitionName,
      digest: spec.digest,
      launch: { command: spec.command, entrypoint: spec.entrypointPath, args: [...(spec.args ?? [])] },
      log: spec.stderrLogPath,
    };
  }

  get state(): ServiceState {
    return this.current ?? 'starting';
  }

  get failure(): SdkError | undefined {
    return this.failed;
  }

  get catalog(): ServiceCatalog {
    return this.listed ?? { tools: [], resources: [], resourceTemplates: [], prompts: [] };
  }

  get pollutedLines(): number {
    return this.transport?.pollutedLines ?? 0;
  }

  get invalidLines(): number {
    return this.transport?.invalidLines ?? 0;
  }

  stderrTail(): string[] {
    return this.log?.tail() ?? [];
  }

  async start(): Promise<void> {
    const budget = new StartBudget({ deadline: this.options.deadline, signal: this.options.signal });
    try {
      this.transition('starting');
      await this.launch(budget);
      const client = this.client!;
      const transport = this.transport!;
      this.transition('initializing');
      await this.untilDeath(
        client.connect(transport, { signal: budget.signal, timeout: budget.remainingMs() }),
        budget,
      );
      this.transition('listing');
      this.listed = await this.untilDeath(
        listCatalog(client, { signal: budget.signal, timeoutMs: () => budget.remainingMs() }),
        budget,
      );
      transport.endSetup();
      this.transition('ready');
      const c = this.listed;
      this.emit({
        type: 'service.ready',
        startMs: Date.now() - this.startedAt,
        tools: c.tools.length,
        resources: c.resources.length,
        resourceTemplates: c.resourceTemplates.length,
        prompts: c.prompts.length,
        ...(c.protocolVersion === undefined ? {} : { protocolVersion: c.protocolVersion }),
      });
    } catch (error) {
      const failure = await this.classifyStartError(error, budget);
      this.fail(failure);
      await this.collect();
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
      this.client!.callTool(args === undefined ? { name } : { name, arguments: args }, o),
    ) as ReturnType<ServiceSession['callTool']>;
  }

  readResource(uri: string, options?: ForwardOptions): ReturnType<ServiceSession['readResource']> {
    return this.forward(`resources/read "${uri}"`, options, (o) => this.client!.readResource({ uri }, o));
  }

  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    options?: ForwardOptions,
  ): ReturnType<ServiceSession['getPrompt']> {
    return this.forward(`prompts/get "${name}"`, options, (o) =>
      this.client!.getPrompt(args === undefined ? { name } : { name, arguments: args }, o),
    );
  }

  /** Collects the service: stdin end, SIGTERM to the group, SIGKILL after the grace, sweep. Idempotent. */
  close(): Promise<void> {
    return this.collect();
  }

  // ---- start ------------------------------------------------------------------------------------------

  private async launch(budget: StartBudget): Promise<void> {
    const spec = this.spec;
    try {
      this.log = new StderrLog(spec.stderrLogPath, {
        ...(this.options.stderrCapBytes === undefined ? {} : { capBytes: this.options.stderrCapBytes }),
      });
    } catch (error) {
      throw serviceError('io_error', this.identity, 'cannot open its stderr log', {
        cause: error,
        remedy: 'Check that the log directory is writable.',
      });
    }

    const command = resolveCommand(spec.command, spec.env.PATH, spec.cwd);
    if (command === undefined) {
      const where = spec.command.includes('/') ? 'does not exist or is not executable' : "is not on the service's PATH";
      throw serviceError('command_not_found', this.identity, `cannot start: command "${spec.command}" ${where}`, {
        stderrTail: [],
        extra: { command: spec.command },
      });
    }
    this.identity.launch.command = command;

    // The supervised-spawn path: the marker is announced before the spawn (a host killed between spawn and
    // register is still covered), the group registered right after it, and collected by the one kill path.
    const group = new SupervisedGroup({
      marker: spec.marker,
      registry: spec.registry,
      graceMs: spec.graceMs,
      killWaitMs: this.options.killWaitMs,
    });
    this.group = group;
    await this.untilDeath(group.announce(), budget);
    budget.signal.throwIfAborted();

    const child = group.spawn(command, [spec.entrypointPath, ...(spec.args ?? [])], {
      cwd: spec.cwd,
      env: { ...spec.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
    });
    this.child = child;
    const spawnError = new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
    // Later 'error' events (a failed kill) must not become uncaught exceptions.
    child.on('error', () => {});
    if (child.pid === undefined) {
      const error = await spawnError;
      if (!existsSync(spec.cwd)) {
        throw serviceError(
          'io_error',
          this.identity,
          `cannot start: its working directory ${spec.cwd} does not exist`,
          {
            cause: error,
          },
        );
      }
      const code = error.code === 'ENOENT' || error.code === 'EACCES' ? 'command_not_found' : 'internal';
      throw serviceError(code, this.identity, `cannot start: spawn failed (${error.code ?? error.message})`, {
        cause: error,
      });
    }
    this.pid = child.pid;
    this.pgid = child.pid;
    child.on('exit', (code, signal) => this.onExit({ code, signal }));
    this.log.attach(child.stderr!);

    this.transport = new ServiceStdioTransport(child.stdout!, child.stdin!, {
      onFirstPollution: () => this.emit({ type: 'service.protocol_pollution', phase: 'first', ...this.lineCounts() }),
    });
    this.client = new Client(CLIENT_INFO, { capabilities: {} });
    this.client.onclose = () => this.onConnectionClosed();
    // Transport reports (stray and invalid lines) are counted by the transport and reported as events.
    this.client.onerror = () => {};
  }

  /**
   * Runs one start step until it settles, the budget runs out, or the leader exits (then after a short
   * drain, in case a grandchild holds stdout open so the connection never closes by itself).
   */
  private untilDeath<T>(work: Promise<T>, budget: StartBudget): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let drain: NodeJS.Timeout | undefined;
      const onAbort = () => reject(budget.signal.reason);
      budget.signal.addEventListener('abort', onAbort, { once: true });
      void this.exited.then(() => {
        drain = setTimeout(() => reject(new Error('the service exited')), EXIT_DRAIN_MS).unref();
      });
      work.then(resolve, reject).finally(() => {
        budget.signal.removeEventListener('abort', onAbort);
        if (drain !== undefined) clearTimeout(drain);
      });
    });
  }

  private async classifyStartError(error: unknown, budget: StartBudget): Promise<SdkError> {
    // Already an SDK error (ours, or e.g. the registry's `supervisor_failed`): it says what failed.
    if (isSdkError(error)) return error as SdkError;
    const phase = this.current === 'listing' ? 'listing' : this.current === 'initializing' ? 'initialize' : 'launch';
    const fatal = this.transport?.fatalReason;
    if (fatal !== undefined) {
      return serviceError('protocol_error', this.identity, `broke the stdio protocol during ${phase}: ${fatal}`, {
        ...(await this.facts()),
        cause: error,
      });
    }
    // A dying service can fail the handshake in several ways (its stdout closed, a write to its stdin
    // refused with EPIPE, an answer cut short) before its exit status arrives; on a loaded machine the status
    // may trail by hundreds of milliseconds. Whatever the error, wait briefly for it so that a service that
    // exited is reported as `service_exited` with its code, not as a protocol failure.
    if (this.child !== undefined && this.exitStatus === undefined && !budget.signal.aborted) {
      await raceDelay(this.exited, EXIT_STATUS_WAIT_MS);
    }
    if (this.exitStatus !== undefined) {
      const { code, signal } = this.exitStatus;
      return serviceError('service_exited', this.identity, `exited${describeExit(code, signal)} during ${phase}`, {
        ...(await this.facts()),
        cause: error,
      });
    }
    if (budget.signal.aborted || mcpCode(error) === 'REQUEST_TIMEOUT') {
      const cancelled = budget.reason === 'cancelled';
      const what = cancelled
        ? `start was cancelled during ${phase}`
        : `did not finish ${phase === 'listing' ? 'listing' : 'initialize'} within ${formatMs(budget.totalMs)}`;
      const facts = await this.facts();
      return serviceError('startup_timeout', this.identity, what, {
        ...facts,
        cause: error,
        extra: { ...facts.extra, budgetMs: budget.totalMs, phase, cancelled },
      });
    }
    const reason = error instanceof Error ? error.message : String(error);
    const what =
      mcpCode(error) === 'CONNECTION_CLOSED'
        ? `closed its stdout during ${phase}`
        : phase === 'launch'
          ? `failed to launch: ${reason}`
          : `failed ${phase === 'listing' ? 'to list what it offers' : 'initialize'}: ${reason}`;
    return serviceError('initialize_failed', this.identity, what, { ...(await this.facts()), cause: error });
  }

  /** Exit status, stderr tail and pids, for an error's data (waiting briefly for stderr to be read). */
  private async facts(): Promise<{
    exitCode?: number | null;
    signal?: string | null;
    stderrTail: string[];
    extra: Record<string, unknown>;
  }> {
    if (this.exitStatus !== undefined && this.log !== undefined) await raceDelay(this.log.ended, 200);
    return {
      ...(this.exitStatus === undefined ? {} : { exitCode: this.exitStatus.code, signal: this.exitStatus.signal }),
      stderrTail: this.stderrTail(),
      extra: this.pid > 0 ? { pid: this.pid, pgid: this.pgid } : {},
    };
  }

  // ---- serving ----------------------------------------------------------------------------------------

  private async forward<T>(
    what: string,
    options: ForwardOptions | undefined,
    run: (requestOptions: RequestOptions) => Promise<T>,
  ): Promise<T> {
    if (this.current !== 'ready') throw this.unavailable(what);
    const timeoutMs = options?.timeoutMs ?? this.spec.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS;
    const signal = options?.signal;
    try {
      // The official client sends notifications/cancelled to the service when the timeout or the signal fires.
      return await run({ timeout: timeoutMs, ...(signal === undefined ? {} : { signal }) });
    } catch (error) {
      throw await this.classifyCallError(error, what, timeoutMs, signal);
    }
  }

  private async classifyCallError(
    error: unknown,
    what: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<unknown> {
    if (signal?.aborted) return signal.reason;
    const code = mcpCode(error);
    if (code === 'REQUEST_TIMEOUT') {
      return serviceError(
        'forward_timeout',
        this.identity,
        `did not answer ${what} within ${formatMs(timeoutMs)}; the request was cancelled at the service`,
        { extra: { timeoutMs, request: what } },
      );
    }
    if (code === 'CONNECTION_CLOSED' || code === 'NOT_CONNECTED' || this.current !== 'ready') {
      if (this.transport?.fatalReason === undefined && this.exitStatus === undefined && this.failed === undefined) {
        await raceDelay(this.exited, EXIT_STATUS_WAIT_MS);
      }
      return this.unavailable(what, error);
    }
    // The service's own answer (a JSON-RPC error, an invalid result): passed on as the client gave it.
    return error;
  }

  /** The error for a call that cannot be (or stopped being) served. */
  private unavailable(what: string, cause?: unknown): SdkError {
    const fatal = this.transport?.fatalReason;
    if (fatal !== undefined) {
      return serviceError('protocol_error', this.identity, `broke the stdio protocol (${fatal}); ${what} failed`, {
        cause,
        stderrTail: this.stderrTail(),
      });
    }
    if (this.exitStatus !== undefined && this.failed?.code !== 'protocol_error') {
      const { code, signal } = this.exitStatus;
      const during = this.failed === undefined && this.closing !== undefined ? ' after it was stopped' : '';
      return serviceError(
        'service_exited',
        this.identity,
        `exited${describeExit(code, signal)}${during}; ${what} failed`,
        {
          exitCode: code,
          signal,
          stderrTail: this.stderrTail(),
          cause,
        },
      );
    }
    if (this.failed !== undefined) {
      return serviceError(this.failed.code, this.identity, `is not available (${this.failed.code}); ${what} failed`, {
        cause: cause ?? this.failed,
        stderrTail: this.stderrTail(),
      });
    }
    return serviceError('service_exited', this.identity, `is ${this.state}; ${what} failed`, { cause });
  }

  private onExit(status: ExitStatus): void {
    this.exitStatus = status;
    this.markExited();
    if (this.current !== 'ready') return;
    // Let stdout deliver the last answers before the connection is declared lost. Unref'd: a host that has
    // nothing else to do is exiting, and its supervisor collects what is left.
    setTimeout(() => {
      if (this.current === 'ready') this.lose();
    }, EXIT_DRAIN_MS).unref();
  }

  private onConnectionClosed(): void {
    if (this.current !== 'ready') return;
    if (this.transport?.fatalReason !== undefined) {
      this.lose();
      return;
    }
    // Stdout ended: normally the process exited; wait for its exit status so the error can say how.
    void raceDelay(this.exited, EXIT_STATUS_WAIT_MS).then(() => {
      if (this.current === 'ready') this.lose();
    });
  }

  /** A ready service died or lost its connection: failed, then collected. */
  private lose(): void {
    const failure = this.unavailable('serving');
    this.fail(failure);
    void this.collect();
  }

  private fail(failure: SdkError): void {
    this.failed = failure;
    this.transition('failed');
    this.emit({
      type: 'service.failed',
      error: { code: failure.code, message: failure.message, log: this.stderrLogPath },
    });
  }

  // ---- stop -------------------------------------------------------------------------------------------

  private collect(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  /** Never rejects: each step runs even when an earlier one threw. */
  private async stop(): Promise<void> {
    const expected = this.failed === undefined;
    this.transition('stopping');
    let result: CollectResult = { forced: false, swept: [], survivors: [] };
    await runEach([
      // Ending stdin first is the MCP stdio shutdown cue; the group is signalled right after it, and a
      // service that wants to clean up has the grace period.
      () => this.client?.close(),
      () => this.child?.stdin?.end(),
      // SIGTERM, SIGKILL after the grace, sweep; released from the registry only when nothing survived.
      async () => {
        if (this.group !== undefined) result = await this.group.collect();
      },
      // /proc shows a dead leader as gone before Node has reaped it; its exit status follows shortly.
      () => (this.child !== undefined && this.pid > 0 ? raceDelay(this.exited, EXIT_STATUS_WAIT_MS) : undefined),
      () => this.log?.finish(),
      () => this.child?.stdout?.destroy(),
    ]);
    this.leftAlive = result.survivors;
    if (this.pid > 0) {
      const counts = this.lineCounts();
      this.emit({
        type: 'service.exited',
        expected,
        exitCode: this.exitStatus?.code ?? null,
        signal: this.exitStatus?.signal ?? null,
        forced: result.forced,
        swept: result.swept,
        survivors: result.survivors,
        ...counts,
      });
      if (counts.pollutedLines > 0 || counts.invalidLines > 0) {
        this.emit({ type: 'service.protocol_pollution', phase: 'close', ...counts });
      }
    }
    this.transition('exited');
  }

  // ---- events -----------------------------------------------------------------------------------------

  private lineCounts(): { pollutedLines: number; invalidLines: number } {
    return { pollutedLines: this.pollutedLines, invalidLines: this.invalidLines };
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
      kind: 'project',
      definition: this.spec.definitionName,
      digest: this.spec.digest,
      log: this.stderrLogPath,
      ...(this.pid > 0 ? { pid: this.pid, pgid: this.pgid } : {}),
    };
    emitSafely(this.options.onEvent, { ...base, ...event } as ServiceEvent);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
