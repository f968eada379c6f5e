/**
 * The run loop of one run in one host (SPEC §10): each invocation's attempts start its agent's services,
 * build its surface, run its harness (from its checkpoint when it has one) and collect its services
 * whatever happens; failed attempts are retried with fresh services; Main's outcome ends the run.
 */
import { DEFAULT_GRACE_MS } from '@scienceevolve/supervisor/protocol';
import { SdkError, toSdkError } from '../errors.js';
import type { EventStream } from '../events/eventStream.js';
import { EventJournal, readEvents } from '../events/journal.js';
import { publicError } from '../events/publicError.js';
import {
  type ErrorRecord,
  type InvocationState,
  type RunEvent,
  type RunEventInput,
  type RunStatus,
  addUsage,
  emptyUsage,
} from '../events/runEvents.js';
import type { HarnessInput, HarnessReport } from '../harness/harness.js';
import type { RunHarnesses } from '../harness/harnessFor.js';
import { hostSupervisor } from '../invocation/hostSupervision.js';
import { type InvocationServices, newInvocationId, startInvocation } from '../invocation/invocation.js';
import type { ProcessRegistry } from '../services/processRegistry.js';
import type { ServiceEvent } from '../services/serviceEvents.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { type WorkflowVersion, requireAccepted } from '../store/workflowVersions.js';
import { agentSurface } from './agentSurface.js';
import { CheckpointWriter, checkpointPath, readCheckpoint } from './checkpoints.js';
import { delegateTool, fixedCatalog } from './fixedCatalog.js';
import { setInvocationState } from './invocationState.js';
import {
  type AttemptRecord,
  type InvocationRecord,
  type RunFile,
  type RunRecord,
  now,
  runEventsPath,
} from './runRecord.js';
import { observeSurface } from './toolJournal.js';
import { RoleWorktrees, roleBranch } from './worktrees.js';

/** Options shared by `startRun` and `resumeRuns`. */
export interface EngineOptions {
  /** Receives every public event as it is journaled. A throw in it is ignored. */
  onEvent?: (event: RunEvent) => void;
  /** Milliseconds every service of one invocation together has to be ready. Default 35,000. */
  startupBudgetMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL when services and harness processes are collected. Default 2,000. */
  graceMs?: number;
  /** Milliseconds a forwarded call may take. Default 60,000. */
  forwardTimeoutMs?: number;
  /** Where `envFrom` and `apiKeyEnv` read host variables. Default `process.env` (never modified). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * Cancels the run: in-flight harness work stops, every process is collected, the run is left
   * `cancelled` for `resume`.
   */
  signal?: AbortSignal;
}

/** What a finished (or stopped) run reports: the shape of `run --json` plus where things are. */
export interface RunResult {
  run: string;
  project: string;
  status: RunStatus;
  /** Main's final answer, or null when Main did not finish. */
  output: string | null;
  error: ErrorRecord | null;
  /** Every event of the run, in order. */
  events: RunEvent[];
  /** `runs/<runId>`: run.json, events.jsonl, script.json, checkpoints/, and each invocation's services and logs. */
  runDir: string;
  eventsPath: string;
}

/** The engine of one run in one host. */
export class RunEngine {
  private registry: ProcessRegistry | undefined;
  private readonly worktrees: RoleWorktrees;
  private readonly journal: EventJournal;
  private readonly abort = new AbortController();
  private readonly detachSignal: () => void = () => {};
  /** Main's workers that were interrupted (resume): Main delegating the same task again continues one. */
  private readonly interruptedWorkers: InvocationRecord[] = [];

  constructor(
    readonly paths: ProjectPaths,
    readonly file: RunFile,
    readonly harnesses: RunHarnesses,
    readonly options: EngineOptions,
    readonly stream: EventStream,
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

  /** Journals one public event (adding time and run id) and hands it to the stream and `onEvent`. */
  emit(event: RunEventInput): void {
    const full = { ...event, time: event.time ?? now(), run: this.record.run } as RunEvent;
    this.journal.append(full);
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
      this.detachSignal();
    }
    const status: RunStatus =
      main.state === 'succeeded'
        ? 'succeeded'
        : main.state === 'failed'
          ? 'failed'
          : this.abort.signal.aborted
            ? 'cancelled'
            : 'interrupted';
    this.record.status = status;
    this.record.output = main.output;
    // A cancelled or interrupted run has no error of its own: it is waiting for `resume`.
    this.record.error = status === 'failed' ? main.error : null;
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

  private currentVersion(): Promise<WorkflowVersion> {
    return requireAccepted(this.paths);
  }

  private setState(invocation: InvocationRecord, to: InvocationState): void {
    setInvocationState(invocation, to, (event) => this.emit(event));
  }

  /** Main's delegation: continues an interrupted worker of the same agent and task, else starts one. */
  private delegateTo(agent: string, task: string, parent: string): Promise<InvocationRecord> {
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
      id: newInvocationId(),
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
      const attempt = await this.attempt(invocation, continueOf !== undefined);
      if (attempt.outcome === 'succeeded' || attempt.outcome === 'interrupted') break;
      retriesLeft ??= (await this.currentVersion()).workflow.orchestration.invocationRetries;
      const willRetry = retriesLeft > 0 && !this.abort.signal.aborted;
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

  /** One attempt: checkpoint, services, surface, harness, collection, commit. */
  private async attempt(invocation: InvocationRecord, restarted: boolean): Promise<AttemptRecord> {
    const agent = invocation.agent;
    const number = invocation.attempts.length + 1;
    const servicesId = number === 1 ? invocation.id : `${invocation.id}-${number}`;
    const version = await this.currentVersion();
    let failure: unknown;
    let saved: { state: unknown } | undefined;
    try {
      saved = await readCheckpoint(this.paths, this.record.run, invocation.id);
    } catch (error) {
      failure = error;
    }
    const attempt: AttemptRecord = {
      attempt: number,
      servicesId,
      runtimePath: this.paths.invocationDir(this.record.run, servicesId),
      version: version.version,
      restarted,
      startedAt: now(),
      finishedAt: null,
      outcome: null,
      error: null,
      fromCheckpoint: saved !== undefined,
      toolCalls: 0,
      toolCallsReached: null,
    };
    invocation.attempts.push(attempt);
    this.setState(invocation, 'starting');
    await this.file.save();
    const config = Object.hasOwn(version.workflow.agents, agent) ? version.workflow.agents[agent] : undefined;
    this.emit({
      type: 'invocation.started',
      invocation: invocation.id,
      agent,
      attempt: number,
      parent: invocation.parent,
      version: version.version,
      restarted,
      fromCheckpoint: saved !== undefined,
      services: config?.mcpServers.map((s) => s.name) ?? [],
      runtimePath: attempt.runtimePath,
    });

    const finish = async (outcome: 'succeeded' | 'failed' | 'interrupted', error?: unknown) => {
      attempt.outcome = outcome;
      attempt.finishedAt = now();
      attempt.error = error === undefined ? null : toSdkError(error).toJSON();
      await this.file.save();
      return attempt;
    };

    if (this.abort.signal.aborted) return finish('interrupted', cancelled());
    if (failure !== undefined) return finish('failed', failure);
    let services: InvocationServices | undefined;
    let output: string | undefined;
    try {
      if (config === undefined) {
        throw new SdkError(
          'unknown_agent',
          `the accepted workflow (version ${version.version}) has no agent "${agent}"`,
          { remedy: 'add the agent to the workflow', data: { agent } },
        );
      }
      const harness = this.harnesses.forAgent(agent, config.harness);
      const workspace = await this.workspaceFor(invocation);
      this.registry ??= await hostSupervisor(this.paths, { graceMs: this.options.graceMs });
      services = await startInvocation({
        paths: this.paths,
        version,
        agent,
        runId: this.record.run,
        invocationId: servicesId,
        workspace,
        registry: this.registry,
        startupBudgetMs: this.options.startupBudgetMs,
        graceMs: this.options.graceMs,
        forwardTimeoutMs: this.options.forwardTimeoutMs,
        hostEnv: this.options.hostEnv,
        onEvent: (event) => this.serviceEvent(invocation, servicesId, event),
        signal: this.abort.signal,
      });
      this.setState(invocation, 'running');
      await this.file.save();
      const entries =
        agent === 'main'
          ? [
              ...services.sessions,
              fixedCatalog({
                paths: this.paths,
                allowReconfiguration: version.workflow.orchestration.allowMainReconfiguration,
                onReconfigured: (r) =>
                  this.emit({
                    type: 'workflow.reconfigured',
                    invocation: invocation.id,
                    agent,
                    version: r.version,
                    changedMcps: r.changedMcps,
                    changedAgents: r.changedAgents,
                  }),
                delegate: delegateTool({
                  workers: async () =>
                    Object.keys((await this.currentVersion()).workflow.agents).filter((a) => a !== 'main'),
                  run: (worker, task) => this.delegateTo(worker, task, invocation.id),
                }),
              }),
            ]
          : services.sessions;
      const surface = observeSurface(agentSurface(entries), {
        invocation: invocation.id,
        agent,
        emit: (event) => this.emit(event),
        onCall: () => {
          attempt.toolCalls = (attempt.toolCalls ?? 0) + 1;
        },
      });
      const result = await harness.run(
        this.harnessInput(invocation, attempt, {
          instructions: config.instructions,
          surface,
          workspace,
          checkpoint: saved?.state,
        }),
      );
      attempt.toolCallsReached = result.toolCallsReached ?? null;
      output = result.output;
    } catch (error) {
      failure = error;
    } finally {
      // Collected whatever happened; a failure to collect is the attempt's failure if nothing else was.
      try {
        await services?.close();
      } catch (error) {
        failure ??= error;
      }
    }
    if (this.abort.signal.aborted) return finish('interrupted', cancelled());
    if (failure === undefined && version.workflow.orchestration.git) {
      try {
        const commit = await this.worktrees.commit(agent, invocation.id, invocation.task);
        invocation.git = { branch: roleBranch(this.paths, agent), commit };
      } catch (error) {
        failure = new SdkError(
          'io_error',
          `could not commit the changes of ${agent} on its branch: ${toSdkError(error).message}`,
          {
            remedy: 'check the worktree with `git status`',
            data: { agent, worktree: invocation.workspace },
            cause: error,
          },
        );
      }
    }
    if (failure !== undefined) return finish('failed', failure);
    invocation.output = output ?? '';
    return finish('succeeded');
  }

  /** What the harness of one attempt receives: the surface, and the checkpoint and report channels. */
  private harnessInput(
    invocation: InvocationRecord,
    attempt: AttemptRecord,
    given: Pick<HarnessInput, 'instructions' | 'surface' | 'workspace' | 'checkpoint'>,
  ): HarnessInput {
    const path = checkpointPath(this.paths, this.record.run, invocation.id);
    const writer = new CheckpointWriter(path, {
      run: this.record.run,
      invocation: invocation.id,
      agent: invocation.agent,
    });
    return {
      ...given,
      agent: invocation.agent,
      task: invocation.task,
      signal: this.abort.signal,
      invocationId: invocation.id,
      runtimePath: attempt.runtimePath,
      hostEnv: this.options.hostEnv ?? process.env,
      registry: this.registry!,
      graceMs: this.options.graceMs ?? DEFAULT_GRACE_MS,
      saveCheckpoint: async (state) => {
        // Once the run is cancelled, what the harness learns (a call cut short, a worker's cancellation)
        // is not a result to keep: `resume` continues from the checkpoint before it.
        if (this.abort.signal.aborted) return;
        await writer.save(attempt.attempt, state);
        if (invocation.checkpoint !== path) {
          invocation.checkpoint = path;
          await this.file.save();
        }
      },
      report: (report) => {
        try {
          this.onReport(invocation, report, path);
        } catch {
          // Reporting never breaks a harness.
        }
      },
    };
  }

  /** A harness's report as a journal event; model usage is added to the invocation's and the run's totals. */
  private onReport(invocation: InvocationRecord, report: HarnessReport, checkpoint: string): void {
    const base = { invocation: invocation.id, agent: invocation.agent };
    switch (report.kind) {
      case 'model.called': {
        invocation.usage ??= emptyUsage();
        this.record.usage ??= emptyUsage();
        addUsage(invocation.usage, report.usage);
        addUsage(this.record.usage, report.usage);
        // Totals reach run.json with the next save at the latest; a failed write here is retried by it.
        this.file.save().catch(() => {});
        const { kind: _kind, ...rest } = report;
        this.emit({ type: 'model.called', ...base, ...rest });
        return;
      }
      case 'model.retry': {
        const { kind: _kind, ...rest } = report;
        this.emit({ type: 'model.retry', ...base, ...rest });
        return;
      }
      case 'checkpoint':
        this.emit({ type: 'invocation.checkpoint', ...base, step: report.step, path: checkpoint });
        return;
    }
  }

  private async workspaceFor(invocation: InvocationRecord): Promise<string> {
    const version = await this.currentVersion();
    if (!version.workflow.orchestration.git) return this.record.workspace;
    const dir = await this.worktrees.worktree(invocation.agent);
    invocation.workspace = dir;
    invocation.git ??= { branch: roleBranch(this.paths, invocation.agent), commit: null };
    return dir;
  }

  /** Publishes a service's ready/failed/exited events under the invocation's id. */
  private serviceEvent(invocation: InvocationRecord, servicesId: string, event: ServiceEvent): void {
    if (event.type === 'service.state') return;
    this.emit({ ...event, invocation: invocation.id, agent: invocation.agent, servicesId });
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

function cancelled(): SdkError {
  return new SdkError('cancelled', 'the run was cancelled before this invocation finished', {
    remedy: 'continue it with `scienceevolve resume`',
  });
}
