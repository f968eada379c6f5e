/**
 * One project service's life (SPEC §5): launched in its own process group with a minimal environment,
 * stderr drained into a capped log, initialized and listed with the official MCP client over our own
 * stdio transport, serving calls with a forwarding timeout, and collected (stdin end, SIGTERM to the
 * group, SIGKILL after the grace, sweep for marked strays) so that nothing of it survives.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client, PriorDiscovery } from '@modelcontextprotocol/client';
import { type ErrorCode, isSdkError, type SdkError } from '../errors.js';
import { redactText } from '../redact.js';
import { BaseSession } from './baseSession.js';
import { type EraVerdict, type ListedCounts, NOTHING_LISTED, listedLess, verdictOf } from './eraCache.js';
import { mcpCode } from './forwarding.js';
import { newServiceClient } from './mcpCatalog.js';
import { DEFAULT_PIDS_MAX } from '@scienceevolve/supervisor/cgroup';
import type { CollectResult, SupervisedGroup } from '../processes/processGroup.js';
import { describeExit, type FailureFacts, type ServiceIdentity, serviceError } from './serviceDiagnostics.js';
import type { ServiceEventBase } from './serviceEvents.js';
import type { ServiceCatalog, SessionStartOptions, StdioServiceSession } from './serviceSession.js';
import { StartBudget } from './startBudget.js';
import { type ExitStatus, identityOf, type LeaderLaunch, launchLeader, type StdioServiceSpec } from './stdioLaunch.js';
import type { StderrLog } from '../processes/stderrLog.js';
import { ServiceStdioTransport } from './stdioTransport.js';
import type { DirectRequests } from './directRequests.js';
import { raceDelay, runEach } from '../processes/teardown.js';

/**
 * Milliseconds to keep reading stdout after the leader exited before the connection is declared lost: 50.
 * The exit status can arrive before the last answers the service wrote have been read from the pipe.
 */
const EXIT_DRAIN_MS = 50;

/** Milliseconds to wait for the leader's exit status once its stdout closed: 1,000. */
const EXIT_STATUS_WAIT_MS = 1000;

/**
 * Milliseconds a service being collected has, after its stdin ends, to exit on its own before its group
 * gets SIGTERM: 100 (the MCP stdio shutdown order: close stdin, wait for the exit, then signal). A v1-SDK
 * service exits within ~10 ms here. A Node service that exits by itself writes its compile cache
 * (`NODE_COMPILE_CACHE`, Node ≥ 22.1); one killed by a signal does not, and its next start parses again.
 */
const STDIN_EXIT_WAIT_MS = 100;

export type { StdioServiceSession } from './serviceSession.js';
export type { StdioServiceSpec } from './stdioLaunch.js';

/** Options of one start. */
export interface StartServiceOptions extends SessionStartOptions {
  /** Bytes of stderr kept in the log file. Default 1 MiB. */
  stderrCapBytes?: number;
  /** Milliseconds to wait after SIGKILL for the processes to go. Default 5,000. */
  killWaitMs?: number;
  /**
   * Milliseconds the era probe (`server/discover`, sent only when no era is remembered for the digest)
   * waits for an answer before counting the service as 2025-era and sending `initialize`. Default 5,000
   * (never more than the start budget left).
   */
  eraProbeTimeoutMs?: number;
  /**
   * The leader, launched already (see `launchLeader`): the invocation launches it before it loads this
   * module, so the service boots while the host loads the MCP client. Taken by the first process of the
   * start only; a second process (see {@link startStdioService}) launches its own.
   */
  launched?: LeaderLaunch;
}

/** Default of {@link StartServiceOptions.eraProbeTimeoutMs}: 5,000 ms. */
export const DEFAULT_ERA_PROBE_TIMEOUT_MS = 5_000;

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
  // The caller's launched leader is the first process's alone: a second process launches its own.
  const { launched, ...perProcess } = options;
  const service = new StdioService(spec, perProcess, undefined, false, launched);
  try {
    await service.start();
    return service;
  } catch (error) {
    // A 2025-only server that exits at the era probe (`server/discover`) has spent its process; it starts
    // again at once in the 2025-11-25 era, within the same start budget (the deadline is absolute).
    if (service.listedLessThanRemembered) {
      // The remembered era is a hint, and this start from it listed less than the digest's last negotiated
      // start (a record a service could have rewritten): a new process negotiates from scratch, within the
      // same start budget, and its verdict replaces the record.
      const again = new StdioService(spec, perProcess, undefined, true);
      await again.start();
      return again;
    }
    if (!service.exitedAtEraProbe) throw error;
    const again = new StdioService(spec, perProcess, { kind: 'legacy' });
    await again.start();
    return again;
  }
}

/** Thrown inside a start whose remembered era listed less than the record's counts (never leaves this file). */
const LISTED_LESS = new Error('the start from the remembered era listed less than its record');

class StdioService extends BaseSession implements StdioServiceSession {
  readonly kind = 'project' as const;
  protected readonly initialState = 'starting' as const;
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
  private readonly sandboxFacts: ServiceEventBase['sandbox'];
  private readonly startedAt: number;
  private child: ChildProcess | undefined;
  private group: SupervisedGroup | undefined;
  private log: StderrLog | undefined;
  private transport: ServiceStdioTransport | undefined;
  private client: Client | undefined;
  private eraSource: 'remembered' | 'negotiated' | 'damaged_cache' | undefined;
  private eraPriorUsed = false;
  private failed: SdkError | undefined;
  private exitStatus: ExitStatus | undefined;
  private markExited: () => void = () => {};
  private readonly exited: Promise<void> = new Promise((resolve) => {
    this.markExited = resolve;
  });

  /** True when this start failed because the service closed its pipe at the era probe (no era known). */
  exitedAtEraProbe = false;
  /**
   * True when this start connected in the remembered era and listed less than the record says the digest's
   * last negotiated start did: collected, and started again with the era negotiated.
   */
  listedLessThanRemembered = false;
  /** The counts of the record this start connected from. */
  private rememberedListed: ListedCounts | undefined;
  /** The verdict this start negotiated (or was told), remembered with its counts once it has listed. */
  private verdictToRemember: EraVerdict | undefined;

  /**
   * @param eraOverride - the era to connect in whatever the memory says: set for the second process of a
   *   start whose first process exited at the era probe
   * @param ignoreMemory - negotiate whatever the memory says (its verdict is replaced): set for the second
   *   process of a start from the remembered era that listed less than its record
   * @param launched - the leader, launched already by the caller (the first process of a start only)
   */
  constructor(
    spec: StdioServiceSpec,
    options: StartServiceOptions,
    private readonly eraOverride?: EraVerdict,
    private readonly ignoreMemory = false,
    private readonly launched?: LeaderLaunch,
  ) {
    super(spec.serviceName, spec.aliases, options.onEvent, options.listChangeDebounceMs, options.listTtlFloorMs);
    this.spec = spec;
    this.options = options;
    this.queuedMs = options.queuedMs;
    this.stderrLogPath = spec.stderrLogPath;
    this.identity = launched?.identity ?? identityOf(spec);
    this.startedAt = launched?.startedAt ?? Date.now();
    const decision = spec.sandbox?.decision;
    this.sandboxFacts =
      decision === undefined
        ? undefined
        : { sandboxed: decision.sandboxed, reason: decision.reason, network: decision.network };
  }

  get failure(): SdkError | undefined {
    return this.failed;
  }

  get pollutedLines(): number {
    return this.transport?.pollutedLines ?? 0;
  }

  get invalidLines(): number {
    return this.transport?.invalidLines ?? 0;
  }

  /** The last lines of its stderr, each mapped value ({@link StdioServiceSpec.secretValues}) redacted. */
  stderrTail(): string[] {
    const lines = this.log?.tail() ?? [];
    const values = this.spec.secretValues ?? [];
    return values.length === 0 ? lines : lines.map((line) => redactText(line, { values }));
  }

  async start(): Promise<void> {
    const budget = new StartBudget({ deadline: this.options.deadline, signal: this.options.signal });
    try {
      this.transition('starting');
      await this.launch(budget);
      const client = this.client!;
      const transport = this.transport!;
      this.transition('initializing');
      await this.connectInEra(client, transport, budget);
      this.transition('listing');
      const catalog = await this.untilDeath(this.listWithin(client, budget), budget);
      await this.checkRemembered(catalog);
      transport.endSetup();
      this.becomeReady(this.startedAt);
    } catch (error) {
      if (error === LISTED_LESS) {
        // Not a failure of the service: this process is collected and the start negotiates in another.
        await this.collect();
        throw error;
      }
      await this.learnEraFromFailure(error, budget);
      const failure = this.pidsLimited(await this.classifyStartError(error, budget));
      // A process that closed its pipe at the era probe is followed at once by a second one (see
      // startStdioService): only that one's failure, if it fails, is the service's — one line per failure.
      this.fail(failure, !this.exitedAtEraProbe);
      await this.collect();
      throw failure;
    } finally {
      budget.dispose();
    }
  }

  // ---- start ------------------------------------------------------------------------------------------

  private async launch(budget: StartBudget): Promise<void> {
    const spec = this.spec;
    // The supervised-spawn path (announce and its ack, spawn, register), in launchLeader: here, or already
    // begun by the invocation before it loaded this module.
    const launch =
      this.launched ??
      launchLeader(spec, {
        identity: this.identity,
        stderrCapBytes: this.options.stderrCapBytes,
        killWaitMs: this.options.killWaitMs,
        signal: budget.signal,
      });
    this.group = launch.group;
    this.log = launch.log();
    const child = await this.untilDeath(launch.leader, budget);
    this.child = child;
    this.pid = child.pid;
    this.pgid = child.pid;
    launch.onExit((status) => this.onExit(status));

    this.transport = new ServiceStdioTransport(child.stdout!, child.stdin!, {
      ...(child.pid === undefined ? {} : { pid: child.pid }),
      onFirstPollution: () => this.emit({ type: 'service.protocol_pollution', phase: 'first', ...this.lineCounts() }),
    });
    // The service's cwd is the invocation's workspace (in Git-on, the role's worktree): its one root.
    this.client = newServiceClient({}, { workspace: spec.cwd });
    this.client.onclose = () => this.onConnectionClosed();
    // Transport reports (stray and invalid lines) are counted by the transport and reported as events.
    this.client.onerror = () => {};
  }

  /**
   * Connects in the era remembered for the digest, or negotiates in place (`server/discover`, then
   * `initialize` for a 2025-era service; on this transport the official client probes the one process it
   * has, never a second one) and remembers the verdict. A damaged record is ignored and rewritten.
   */
  private async connectInEra(client: Client, transport: ServiceStdioTransport, budget: StartBudget): Promise<void> {
    const memory = this.spec.eraMemory;
    const lookup =
      memory === undefined || this.eraOverride !== undefined || this.ignoreMemory ? undefined : await memory.read();
    const prior = this.eraOverride ?? lookup?.found;
    this.eraPriorUsed = prior !== undefined && this.eraOverride === undefined;
    if (lookup !== undefined && 'listed' in lookup) this.rememberedListed = lookup.listed;
    if (prior === undefined) {
      const probeMs = Math.min(this.options.eraProbeTimeoutMs ?? DEFAULT_ERA_PROBE_TIMEOUT_MS, budget.remainingMs());
      client.setVersionNegotiation({ mode: 'auto', probe: { timeoutMs: Math.max(1, probeMs) } });
    }
    await this.untilDeath(
      client.connect(transport, {
        signal: budget.signal,
        timeout: budget.remainingMs(),
        ...(prior === undefined ? {} : { prior: prior as PriorDiscovery }),
      }),
      budget,
    );
    const damaged = (lookup !== undefined && 'damaged' in lookup && lookup.damaged) || this.ignoreMemory;
    this.eraSource = this.eraPriorUsed ? 'remembered' : damaged ? 'damaged_cache' : 'negotiated';
    // Remembered once the start has listed, with its counts; a verdict from the memory is not written back.
    if (!this.eraPriorUsed) this.verdictToRemember = verdictOf(client);
  }

  /**
   * After the start listed: a start from the remembered era that listed fewer tools, resources, templates
   * or prompts than the digest's last negotiated start did not believe its record (a record anything
   * running as the user can write, e.g. a false `modern` verdict with no capabilities, which lists
   * nothing) — the record is dropped and the start negotiates again ({@link LISTED_LESS}). A negotiated
   * start remembers its verdict with what it listed.
   */
  private async checkRemembered(catalog: ServiceCatalog): Promise<void> {
    const memory = this.spec.eraMemory;
    if (memory === undefined) return;
    const listed: ListedCounts = {
      tools: catalog.tools.length,
      resources: catalog.resources.length,
      resourceTemplates: catalog.resourceTemplates.length,
      prompts: catalog.prompts.length,
    };
    if (this.eraPriorUsed) {
      if (this.rememberedListed === undefined || !listedLess(listed, this.rememberedListed)) return;
      this.listedLessThanRemembered = true;
      await memory.forget().catch(() => {});
      throw LISTED_LESS;
    }
    // Best effort: a read-only data dir costs a probe at the next start, not this start.
    if (this.verdictToRemember !== undefined) await memory.remember(this.verdictToRemember, listed).catch(() => {});
  }

  /**
   * What a start that failed while connecting teaches about the era. A remembered verdict that did not
   * connect is forgotten (the next start negotiates again). A service that closed its pipe at the probe
   * (servers that exit on any request before `initialize` do) is remembered as 2025-era, and the start
   * launches a second process that sends `initialize` at once (see {@link startStdioService}).
   */
  private async learnEraFromFailure(error: unknown, budget: StartBudget): Promise<void> {
    const memory = this.spec.eraMemory;
    // A start cut short (budget spent, or cancelled because another service failed) teaches nothing.
    if (memory === undefined || this.state !== 'initializing' || budget.signal.aborted) return;
    if (this.eraPriorUsed) {
      await memory.forget().catch(() => {});
      return;
    }
    const message = error instanceof Error ? error.message : '';
    if (mcpCode(error) === 'ERA_NEGOTIATION_FAILED' && message.includes('closed during the server/discover probe')) {
      this.exitedAtEraProbe = this.eraOverride === undefined;
      // Nothing was listed yet: the second process's start remembers its counts.
      await memory.remember({ kind: 'legacy' }, NOTHING_LISTED).catch(() => {});
    }
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
      // A budget spent before the step began (a launched leader's wait can use it up) ends the step at once.
      if (budget.signal.aborted) onAbort();
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
    const phase = this.state === 'listing' ? 'listing' : this.state === 'initializing' ? 'initialize' : 'launch';
    const fatal = this.transport?.fatalReason;
    if (fatal !== undefined) {
      return this.describe('protocol_error', `broke the stdio protocol during ${phase}: ${fatal}`, {
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
      return this.describe('service_exited', `exited${describeExit(code, signal)} during ${phase}`, {
        ...(await this.facts()),
        cause: error,
      });
    }
    const timedOut = this.startTimeout(error, budget, phase, await this.facts());
    if (timedOut !== undefined) return timedOut;
    const reason = error instanceof Error ? error.message : String(error);
    const what =
      mcpCode(error) === 'CONNECTION_CLOSED'
        ? `closed its stdout during ${phase}`
        : phase === 'launch'
          ? `failed to launch: ${reason}`
          : `failed ${phase === 'listing' ? 'to list what it offers' : 'initialize'}: ${reason}`;
    return this.describe('initialize_failed', what, { ...(await this.facts()), cause: error });
  }

  /** Exit status, stderr tail and pids, for an error's data (waiting briefly for stderr to be read). */
  private async facts(): Promise<FailureFacts> {
    if (this.exitStatus !== undefined && this.log !== undefined) await raceDelay(this.log.ended, 200);
    return {
      ...(this.exitStatus === undefined ? {} : { exitCode: this.exitStatus.code, signal: this.exitStatus.signal }),
      stderrTail: this.stderrTail(),
      extra: this.pid > 0 ? { pid: this.pid, pgid: this.pgid } : {},
    };
  }

  // ---- serving ----------------------------------------------------------------------------------------

  protected override eraFacts(): {
    era?: 'legacy' | 'modern';
    eraSource?: 'remembered' | 'negotiated' | 'damaged_cache';
  } {
    const era = this.client?.getProtocolEra();
    return {
      ...(era === undefined ? {} : { era }),
      ...(this.eraSource === undefined ? {} : { eraSource: this.eraSource }),
    };
  }

  protected connectedClient(): Client {
    return this.client!;
  }

  /** A 2025-era connection's transport carries `tools/call` beside the client (sessions/directRequests.ts). */
  protected override directRequests(): DirectRequests | undefined {
    return this.client?.getProtocolEra() === 'legacy' ? this.transport?.direct : undefined;
  }

  protected describe(code: ErrorCode, what: string, facts: FailureFacts = {}): SdkError {
    return serviceError(code, this.identity, what, facts);
  }

  protected async callFailed(error: unknown, what: string): Promise<unknown> {
    const code = mcpCode(error);
    if (code === 'CONNECTION_CLOSED' || code === 'NOT_CONNECTED' || this.state !== 'ready') {
      if (this.transport?.fatalReason === undefined && this.exitStatus === undefined && this.failed === undefined) {
        await raceDelay(this.exited, EXIT_STATUS_WAIT_MS);
      }
      return this.notReady(what, error);
    }
    // The service's own answer (a JSON-RPC error, an invalid result): passed on as the client gave it.
    return error;
  }

  /** The error for a call that cannot be (or stopped being) served. */
  protected notReady(what: string, cause?: unknown): SdkError {
    const fatal = this.transport?.fatalReason;
    if (fatal !== undefined) {
      return this.describe('protocol_error', `broke the stdio protocol (${fatal}); ${what} failed`, {
        cause,
        stderrTail: this.stderrTail(),
      });
    }
    if (this.exitStatus !== undefined && this.failed?.code !== 'protocol_error') {
      const { code, signal } = this.exitStatus;
      const during = this.failed === undefined && this.isClosing ? ' after it was stopped' : '';
      return this.describe('service_exited', `exited${describeExit(code, signal)}${during}; ${what} failed`, {
        exitCode: code,
        signal,
        stderrTail: this.stderrTail(),
        cause,
      });
    }
    if (this.failed !== undefined) {
      return this.describe(this.failed.code, `is not available (${this.failed.code}); ${what} failed`, {
        cause: cause ?? this.failed,
        stderrTail: this.stderrTail(),
      });
    }
    return this.describe('service_exited', `is ${this.state}; ${what} failed`, { cause });
  }

  private onExit(status: ExitStatus): void {
    this.exitStatus = status;
    this.markExited();
    if (this.state !== 'ready') return;
    // Let stdout deliver the last answers before the connection is declared lost. Unref'd: a host that has
    // nothing else to do is exiting, and its supervisor collects what is left.
    setTimeout(() => {
      if (this.state === 'ready') this.lose();
    }, EXIT_DRAIN_MS).unref();
  }

  private onConnectionClosed(): void {
    if (this.state !== 'ready') return;
    if (this.transport?.fatalReason !== undefined) {
      this.lose();
      return;
    }
    // Stdout ended: normally the process exited; wait for its exit status so the error can say how.
    void raceDelay(this.exited, EXIT_STATUS_WAIT_MS).then(() => {
      if (this.state === 'ready') this.lose();
    });
  }

  /** A ready service died or lost its connection: failed, then collected. */
  private lose(): void {
    const failure = this.pidsLimited(this.notReady('serving'));
    this.fail(failure);
    void this.collect();
  }

  /**
   * `failure`, or `pids_limit` in its place when the service's control group refused a fork (its `pids.max`
   * was reached): a fork bomb is reported as such, not as whatever its failure looked like.
   */
  private pidsLimited(failure: SdkError): SdkError {
    if (this.group?.pidsLimitReached() !== true) return failure;
    return this.describe(
      'pids_limit',
      `reached its process limit (pids.max ${this.spec.pidsMax ?? DEFAULT_PIDS_MAX}) and failed: ${failure.message}`,
      {
        cause: failure,
        stderrTail: this.stderrTail(),
        remedy: 'stop the service forking without bound, or raise pidsMax if it needs more processes',
        extra: { pidsMax: this.spec.pidsMax ?? DEFAULT_PIDS_MAX, failure: failure.code },
      },
    );
  }

  private fail(failure: SdkError, announce = true): void {
    this.failed = failure;
    this.transition('failed');
    if (!announce) return;
    this.emit({
      type: 'service.failed',
      error: { code: failure.code, message: failure.message, log: this.stderrLogPath },
    });
  }

  // ---- stop -------------------------------------------------------------------------------------------

  /** Collects the service: stdin end, SIGTERM to the group, SIGKILL after the grace, sweep. Idempotent. */
  private collect(): Promise<void> {
    return this.close();
  }

  /** Never rejects: each step runs even when an earlier one threw. */
  protected async shutdown(): Promise<void> {
    const expected = this.failed === undefined;
    this.transition('stopping');
    let result: CollectResult = { forced: false, swept: [], survivors: [] };
    await runEach([
      // Ending stdin first is the MCP stdio shutdown cue; a service that exits on it within
      // STDIN_EXIT_WAIT_MS is not signalled (its group still is, for what it left), and one that wants
      // to clean up has the grace period after SIGTERM.
      () => this.client?.close(),
      () => this.child?.stdin?.end(),
      () => (this.child !== undefined && this.pid > 0 ? raceDelay(this.exited, STDIN_EXIT_WAIT_MS) : undefined),
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

  protected eventBase(): Omit<ServiceEventBase, 'time'> {
    return {
      service: this.name,
      kind: 'project',
      definition: this.spec.definitionName,
      digest: this.spec.digest,
      log: this.stderrLogPath,
      ...(this.pid > 0 ? { pid: this.pid, pgid: this.pgid } : {}),
      ...(this.sandboxFacts === undefined ? {} : { sandbox: this.sandboxFacts }),
    };
  }
}
