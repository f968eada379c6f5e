/**
 * The run loop of one run in one host (SPEC §10): each invocation's attempts start its agent's services,
 * build its surface, run its harness (from its checkpoint when it has one) and collect its services
 * whatever happens; failed attempts are retried with fresh services; Main's outcome ends the run.
 */
import type { EventStream } from '../events/eventStream.js';
import { EventJournal, readEvents } from '../events/journal.js';
import { publicError } from '../events/publicError.js';
import {
  type InvocationState,
  type RunEvent,
  type RunEventInput,
  type RunStatus,
  emptyUsage,
} from '../events/runEvents.js';
import type { RunHarnesses } from '../harness/harnessFor.js';
import { hostSupervisor } from '../invocation/hostSupervision.js';
import { newInvocationId } from '../invocation/invocation.js';
import type { QueueClient } from '../queue/queueClient.js';
import type { ProcessRegistry } from '../processes/processRegistry.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { type WorkflowVersion, requireAccepted } from '../store/workflowVersions.js';
import type { SdkError } from '../errors.js';
import { hostname } from 'node:os';
import { type AttemptResult, type MainCapabilities, runAttempt } from './attempt.js';
import {
  type AttemptCoordinator,
  applyAttemptOutcome,
  buildAttemptSpec,
  failUnreadable,
  replayAttemptEvent,
  startedAttempt,
} from './attemptApply.js';
import { telemetry } from '../events/telemetry.js';
import type { EngineOptions, RunResult } from './engineOptions.js';
import { setInvocationState } from './invocationState.js';
import { type QueuedAttemptHost, runQueuedAttempt } from './queuedAttempt.js';
import { checkpointPath } from './checkpoints.js';
import { Prestarts } from './prestart.js';
import {
  type AttemptRecord,
  type InvocationRecord,
  type RunFile,
  type RunRecord,
  now,
  runEventsPath,
} from './runRecord.js';
import { RoleWorktrees } from './worktrees.js';

export type { EngineOptions, RunResult } from './engineOptions.js';

/** The engine of one run in one host. */
export class RunEngine implements AttemptCoordinator, QueuedAttemptHost {
  private supervisor: Promise<ProcessRegistry> | undefined;
  readonly worktrees: RoleWorktrees;
  private readonly journal: EventJournal;
  private readonly abort = new AbortController();
  private readonly detachSignal: () => void = () => {};
  /** Main's workers that were interrupted (resume): Main delegating the same task again continues one. */
  private readonly interruptedWorkers: InvocationRecord[] = [];
  /** Why the run was stopped from inside (the queue's Redis went away), or undefined. */
  private stopError: SdkError | undefined;
  /** Warm starts of workers' services (engine/prestart.ts). */
  readonly prestarts: Prestarts = new Prestarts(this);

  constructor(
    readonly paths: ProjectPaths,
    readonly file: RunFile,
    readonly harnesses: RunHarnesses,
    readonly options: EngineOptions,
    readonly stream: EventStream,
    /** The queue backend: worker invocations become jobs. Undefined: they run in this host. */
    private readonly queueClient?: QueueClient,
  ) {
    this.worktrees = new RoleWorktrees(paths, file.record.workspace);
    this.journal = new EventJournal(runEventsPath(paths, file.record.run));
    const outer = options.signal;
    if (outer?.aborted) this.abort.abort(outer.reason);
    else if (outer !== undefined) {
      const forward = () => this.abort.abort(outer.reason);
      outer.addEventListener('abort', forward, { once: true });
      this.detachSignal = () => outer.removeEventListener('abort', forward);
    }
  }

  get record(): RunRecord {
    return this.file.record;
  }

  /** Aborts when the run is cancelled. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The queue client; only called when the run has one (worker attempts go through it). */
  get queue(): QueueClient {
    if (this.queueClient === undefined) throw new Error('this run has no queue');
    return this.queueClient;
  }

  /**
   * Stops the run from inside: in-flight work is cancelled and the run ends `interrupted` with `error`
   * recorded, for `resume` to continue once the cause is gone (the queue's Redis is back).
   */
  stop(error: SdkError): void {
    this.stopError ??= error;
    this.abort.abort(error);
  }

  /** The host's process registry; the supervisor starts on first use (a run without services never starts it). */
  registry(): Promise<ProcessRegistry> {
    this.supervisor ??= hostSupervisor(this.paths, { graceMs: this.options.graceMs });
    // A failed start is not kept: the next attempt tries again.
    this.supervisor.catch(() => {
      this.supervisor = undefined;
    });
    return this.supervisor;
  }

  /** The run's journal as it is now (the attempt spec's journaled steps and open tasks come from it). */
  journalEvents(): Promise<readonly unknown[]> {
    return readEvents(runEventsPath(this.paths, this.record.run));
  }

  /** Journals one public event (adding time and run id) and hands it to the stream and `onEvent`. */
  emit(event: RunEventInput): void {
    const full = { ...event, time: event.time ?? now(), run: this.record.run } as RunEvent;
    this.journal.append(full);
    telemetry()?.onEvent(full);
    this.stream.push(full);
    try {
      this.options.onEvent?.(full);
    } catch {
      // A listener's failure never breaks the run.
    }
  }

  /**
   * For `resume`: marks every invocation still `starting`/`running` (its host died) as interrupted, and
   * keeps Main's interrupted workers, so that Main delegating the same task again continues that worker
   * from its checkpoint instead of starting it anew.
   */
  interruptInFlight(): void {
    for (const invocation of this.record.invocations) {
      if (invocation.state !== 'starting' && invocation.state !== 'running') continue;
      const last = invocation.attempts.at(-1);
      if (last !== undefined && last.outcome === null) {
        last.outcome = 'interrupted';
        last.finishedAt = now();
      }
      invocation.finishedAt = now();
      this.setState(invocation, 'interrupted');
      this.emit({
        type: 'invocation.finished',
        invocation: invocation.id,
        agent: invocation.agent,
        status: 'interrupted',
        attempts: invocation.attempts.length,
      });
    }
    const main = this.mainInvocation();
    if (main === undefined) return;
    this.interruptedWorkers.push(
      ...this.record.invocations.filter((i) => i.parent === main.id && i.state === 'interrupted'),
    );
  }

  /** Main's invocation of this run, once it exists. */
  mainInvocation(): InvocationRecord | undefined {
    return this.record.invocations.find((i) => i.agent === 'main' && i.parent === null);
  }

  /** Runs (or continues) Main's invocation and finishes the run from its outcome. */
  async driveMain(): Promise<RunResult> {
    let main = this.mainInvocation();
    try {
      // A Main that already ended (succeeded, or failed after its retries) is not run again on resume.
      if (main === undefined || (main.state !== 'succeeded' && main.state !== 'failed')) {
        main = await this.invoke('main', this.record.requirement, null, main);
      }
    } finally {
      // Sets prestarted for invocations that never came are collected before the run ends.
      await this.prestarts.closeAll();
      this.detachSignal();
    }
    const status: RunStatus =
      main.state === 'succeeded'
        ? 'succeeded'
        : main.state === 'failed'
          ? 'failed'
          : this.abort.signal.aborted && this.stopError === undefined
            ? 'cancelled'
            : 'interrupted';
    this.record.status = status;
    this.record.output = main.output;
    // A cancelled or interrupted run has no error of its own: it is waiting for `resume`.
    // A run stopped from inside (the queue went away) keeps the reason.
    this.record.error =
      status === 'failed' ? main.error : status === 'interrupted' ? (this.stopError?.toJSON() ?? null) : null;
    this.record.finishedAt = status === 'succeeded' || status === 'failed' ? now() : null;
    await this.file.save();
    this.emit({
      type: 'run.finished',
      status,
      output: main.output,
      usage: this.record.usage ?? emptyUsage(),
      ...(this.record.error ? { error: publicError(this.record.error) } : {}),
    });
    return finishedResult(this.paths, this.record);
  }

  /** The workflow version in force. */
  currentVersion(): Promise<WorkflowVersion> {
    return requireAccepted(this.paths);
  }

  /** What Main's attempts (always run in this host) may ask of the run: delegation and reconfiguration. */
  private readonly main: MainCapabilities = {
    workers: async () => Object.keys((await this.currentVersion()).workflow.agents).filter((a) => a !== 'main'),
    delegate: (agent, task, parent) => this.delegateTo(agent, task, parent),
    reconfigured: (invocation, r) =>
      this.emit({
        type: 'workflow.reconfigured',
        invocation,
        agent: 'main',
        version: r.version,
        changedMcps: r.changedMcps,
        changedAgents: r.changedAgents,
      }),
  };

  /** Changes an invocation's state through the one function that journals it. */
  setState(invocation: InvocationRecord, to: InvocationState): void {
    setInvocationState(invocation, to, (event) => this.emit(event));
  }

  /** Main's delegation: continues an interrupted worker of the same agent and task, else starts one. */
  delegateTo(agent: string, task: string, parent: string): Promise<InvocationRecord> {
    const index = this.interruptedWorkers.findIndex((w) => w.agent === agent && w.task === task && w.parent === parent);
    const interrupted = index === -1 ? undefined : this.interruptedWorkers.splice(index, 1)[0];
    return this.invoke(agent, task, parent, interrupted);
  }

  /**
   * One invocation to its end: every attempt with fresh services, up to `invocationRetries` retries.
   * `continueOf` continues an interrupted record (resume), from its checkpoint when it has one.
   */
  async invoke(
    agent: string,
    task: string,
    parent: string | null,
    continueOf?: InvocationRecord,
  ): Promise<InvocationRecord> {
    const invocation: InvocationRecord = continueOf ?? {
      // A set prestarted for the agent's next invocation runs under the id it claims here.
      id: this.prestarts.claim(agent) ?? newInvocationId(),
      agent,
      parent,
      task,
      state: 'starting',
      restarted: false,
      workspace: this.record.workspace,
      git: null,
      attempts: [],
      startedAt: now(),
      finishedAt: null,
      output: null,
      error: null,
      usage: emptyUsage(),
      checkpoint: null,
    };
    if (continueOf === undefined) this.record.invocations.push(invocation);
    else {
      invocation.restarted = true;
      invocation.finishedAt = null;
      invocation.error = null;
    }
    let retriesLeft: number | undefined;
    for (;;) {
      const { attempt, retryable } = await this.attempt(invocation, continueOf !== undefined);
      if (attempt.outcome === 'succeeded' || attempt.outcome === 'interrupted') break;
      retriesLeft ??= (await this.currentVersion()).workflow.orchestration.invocationRetries;
      // A harness failure another attempt would only repeat (a missing key, a refused key…) is not retried.
      const willRetry = retryable && retriesLeft > 0 && !this.abort.signal.aborted;
      this.emit({
        type: 'invocation.attempt_failed',
        invocation: invocation.id,
        agent,
        attempt: attempt.attempt,
        error: publicError(attempt.error),
        willRetry,
      });
      if (!willRetry) break;
      retriesLeft -= 1;
    }
    await this.prestarts.release(invocation.id);
    const last = invocation.attempts.at(-1)!;
    invocation.finishedAt = now();
    invocation.error = last.outcome === 'succeeded' ? null : last.error;
    this.setState(
      invocation,
      last.outcome === 'succeeded' ? 'succeeded' : last.outcome === 'interrupted' ? 'interrupted' : 'failed',
    );
    await this.file.save();
    const error = publicError(invocation.error);
    this.emit({
      type: 'invocation.finished',
      invocation: invocation.id,
      agent,
      status: invocation.state,
      attempts: invocation.attempts.length,
      restarted: invocation.restarted,
      usage: invocation.usage ?? emptyUsage(),
      ...(invocation.git ? { branch: invocation.git.branch, commit: invocation.git.commit } : {}),
      ...(error ? { error } : {}),
    });
    return invocation;
  }

  /** One attempt: a queue job for a worker invocation when the run has a queue, else in this host. */
  private attempt(invocation: InvocationRecord, restarted: boolean): Promise<AttemptResult> {
    const run = () =>
      this.queueClient !== undefined && invocation.agent !== 'main'
        ? runQueuedAttempt(this, invocation, restarted)
        : this.localAttempt(invocation, restarted);
    const traced = telemetry();
    if (traced === undefined) return run();
    const facts = { run: this.record.run, invocation: invocation.id, agent: invocation.agent };
    return traced.inAttempt({ ...facts, attempt: invocation.attempts.length + 1 }, run);
  }

  /**
   * One attempt in this host: the same spec a queue job carries, run by a function call, its events
   * replayed into the run as they happen, its outcome applied as a queue worker's is.
   */
  private async localAttempt(invocation: InvocationRecord, restarted: boolean): Promise<AttemptResult> {
    const built = await buildAttemptSpec(this, invocation, restarted);
    const started: AttemptRecord = {
      ...startedAttempt(invocation, built.version, restarted, ''),
      // As the runner starts it (its outcome's record replaces this one): what `resume` finds after a crash.
      fromCheckpoint: built.spec?.checkpoint != null,
      toolCalls: 0,
      toolCallsReached: null,
    };
    started.runtimePath = this.paths.invocationDir(this.record.run, started.servicesId);
    invocation.attempts.push(started);
    await this.file.save();
    if (built.spec === undefined) return failUnreadable(this, started, built.unreadable);
    const outcome = await runAttempt(built.spec, {
      id: `${hostname()}:${process.pid}`,
      paths: this.paths,
      version: built.version,
      harnesses: this.harnesses,
      options: { ...this.options, signal: this.signal },
      worktrees: this.worktrees,
      signal: this.signal,
      registry: () => this.registry(),
      onEvent: (event) => {
        if (replayAttemptEvent(this, invocation, event)) this.file.save().catch(() => {});
      },
      onCheckpoint: async () => {
        const path = checkpointPath(this.paths, this.record.run, invocation.id);
        if (invocation.checkpoint === path) return;
        invocation.checkpoint = path;
        await this.file.save();
      },
      prestarts: this.prestarts,
      main: this.main,
    });
    return applyAttemptOutcome(this, invocation, started, outcome, true);
  }
}

/** A finished (or stopped) run's result, its events read from the journal. */
export async function finishedResult(paths: ProjectPaths, record: RunRecord): Promise<RunResult> {
  const eventsPath = runEventsPath(paths, record.run);
  return {
    run: record.run,
    project: record.project,
    status: record.status,
    output: record.output,
    error: record.error,
    events: await readEvents(eventsPath),
    runDir: paths.runDir(record.run),
    eventsPath,
  };
}
