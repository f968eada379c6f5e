/**
 * The engine (SPEC §10): a run takes a requirement through Main; each invocation starts its agent's
 * services, builds its surface, runs its harness and collects its services whatever happens; Main's
 * `delegate` runs a worker invocation to its end; failed invocations are retried with fresh services;
 * `resume` continues a run whose host stopped or died.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { processStartTime } from '@scienceevolve/supervisor/protocol';
import { type LocalTool, type Surface, createSurface } from '../bridge/surface.js';
import { gateEventFields } from '../bridge/serviceGate.js';
import { SdkError, toSdkError } from '../errors.js';
import { EventStream } from '../events/eventStream.js';
import { EventJournal, type PublicEvent } from '../events/journal.js';
import { harnessFor } from '../harness/harnessFor.js';
import { ScriptedHarness, parseScript, readScriptFile, resultText } from '../harness/scriptedHarness.js';
import { hostSupervisor, sweepProjectStrays } from '../invocation/hostSupervision.js';
import { type InvocationServices, newInvocationId, startInvocation } from '../invocation/invocation.js';
import type { ProcessRegistry } from '../services/processRegistry.js';
import type { ServiceEvent } from '../services/serviceEvents.js';
import { writeJsonAtomic } from '../store/atomicFile.js';
import { withFileLock } from '../store/fileLock.js';
import { ProjectPaths, openProject } from '../store/projectStore.js';
import { loadWorkflow, readWorkflowFile } from '../store/workflowLoad.js';
import { parseWorkflow } from '../workflow/validate.js';
import { type WorkflowVersion, readAccepted } from '../store/workflowVersions.js';
import { errorResult, fixedCatalog } from './fixedCatalog.js';
import {
  type AttemptRecord,
  type ErrorRecord,
  type InvocationRecord,
  RunFile,
  type RunRecord,
  type RunStatus,
  effectiveStatus,
  listRunRecords,
  newRunId,
  readRunRecord,
  runEventsPath,
  runRecordPath,
} from './runRecord.js';
import { RoleWorktrees, checkGitWorkspace, roleBranch } from './worktrees.js';

/** Bytes of a tool result's text kept in a `tool.called` event: 1 KiB. */
export const TOOL_SUMMARY_BYTES = 1024;
/** Bytes of a call's JSON arguments kept whole in a `tool.called` event: 4 KiB; longer ones are cut. */
export const TOOL_ARGUMENTS_BYTES = 4096;

/** Options shared by {@link startRun} and {@link resumeRuns}. */
export interface EngineOptions {
  /** Receives every public event as it is journaled. A throw in it is ignored. */
  onEvent?: (event: PublicEvent) => void;
  /** Milliseconds every service of one invocation together has to be ready. Default 35,000. */
  startupBudgetMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL when services are collected. Default 2,000. */
  graceMs?: number;
  /** Milliseconds a forwarded call may take. Default 60,000. */
  forwardTimeoutMs?: number;
  /** Where `envFrom` reads host variables. Default `process.env` (never modified). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Cancels the run: harnesses stop, services are collected, the run is left `interrupted` for `resume`. */
  signal?: AbortSignal;
}

/** Options of {@link startRun} and {@link runWorkflow}. */
export interface RunOptions extends EngineOptions {
  dataDir: string;
  /** The project id; derived from `workspace` when absent (SPEC §2). */
  project?: string | undefined;
  /** The directory the agents work in (created when missing; Git-on: a git repository's top). */
  workspace: string;
  /** The workflow file or document; accepted as a new version only when it differs. */
  workflow: string | Record<string, unknown>;
  /** The scripted harness's script: a file path or the document. Required when an agent is scripted. */
  script?: string | Record<string, unknown> | undefined;
  /** Main's task. */
  requirement: string;
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
  events: PublicEvent[];
  /** `runs/<runId>`: run.json, events.jsonl, script.json, and each invocation's services and logs. */
  runDir: string;
  eventsPath: string;
}

/** A run in progress. */
export interface RunHandle {
  /** The run id, known at once. */
  readonly runId: string;
  /** Every event of the run, from the first, until the run ends. Each call is a new reader. */
  events(): AsyncIterable<PublicEvent>;
  /** Settles when the run ends; rejects when it could not start (bad workflow, script or workspace). */
  readonly result: Promise<RunResult>;
}

/** Starts a run; see {@link RunHandle}. */
export function startRun(options: RunOptions): RunHandle {
  const runId = newRunId();
  const stream = new EventStream();
  const result = beginRun(runId, options, stream).finally(() => stream.end());
  // The caller may only iterate events; the rejection still reaches whoever awaits `result`.
  result.catch(() => {});
  return { runId, events: () => stream, result };
}

/** Runs a requirement through Main to its end. */
export function runWorkflow(options: RunOptions): Promise<RunResult> {
  return startRun(options).result;
}

async function beginRun(runId: string, options: RunOptions, stream: EventStream): Promise<RunResult> {
  const workspace = resolve(options.workspace);
  // Everything that can be refused is checked before the workflow is accepted or anything is written.
  const workflow =
    typeof options.workflow === 'string' ? await readWorkflowFile(options.workflow) : parseWorkflow(options.workflow);
  const script =
    options.script === undefined
      ? undefined
      : typeof options.script === 'string'
        ? await readScriptFile(options.script)
        : parseScript(options.script);
  const scripted = script === undefined ? undefined : new ScriptedHarness(script);
  for (const [agent, config] of Object.entries(workflow.agents)) harnessFor(agent, config.harness, scripted);
  if (workflow.orchestration.git) await checkGitWorkspace(workspace);
  const loaded = await loadWorkflow({ dataDir: options.dataDir, project: options.project, workspace, workflow });
  const paths = loaded.paths;
  const version = await acceptedOrThrow(paths);
  if (!workflow.orchestration.git) await mkdir(workspace, { recursive: true });
  await sweepProjectStrays(paths, { graceMs: options.graceMs });

  const runDir = paths.runDir(runId);
  await mkdir(runDir, { recursive: true });
  let scriptPath: string | null = null;
  if (script !== undefined) {
    // The run keeps its own copy, so `resume` replays the same decisions whatever happens to the file.
    scriptPath = join(runDir, 'script.json');
    await writeJsonAtomic(scriptPath, script);
  }
  const record: RunRecord = {
    format: 1,
    run: runId,
    project: paths.projectId,
    status: 'running',
    requirement: options.requirement,
    workspace,
    version: version.version,
    script: scriptPath,
    host: thisHost(),
    startedAt: now(),
    finishedAt: null,
    output: null,
    error: null,
    resumes: 0,
    invocations: [],
  };
  const file = new RunFile(runRecordPath(paths, runId), record);
  await file.save();
  const engine = new RunEngine(paths, file, scripted, options, stream);
  engine.emit({
    type: 'run.started',
    project: paths.projectId,
    version: version.version,
    workspace,
    runDir,
    git: version.workflow.orchestration.git,
  });
  return engine.driveMain(undefined);
}

/** Options of {@link resumeRuns}. */
export interface ResumeOptions extends EngineOptions {
  dataDir: string;
  project: string;
  /** One run to continue; default: every interrupted run of the project. */
  run?: string | undefined;
}

/**
 * Continues interrupted runs (SPEC §10.3): sweeps strays of dead hosts, reads each run's state and the
 * accepted version, marks what was in flight `interrupted`, and restarts Main's invocation from its start
 * with new processes (`restarted: true`; its tool calls, and its workers', may run twice). A run named by
 * `run` that already finished is returned as it is.
 */
export async function resumeRuns(options: ResumeOptions): Promise<RunResult[]> {
  if (!existsSync(new ProjectPaths(resolve(options.dataDir), options.project).root)) {
    throw new SdkError(
      'unknown_project',
      `the data dir ${resolve(options.dataDir)} has no project "${options.project}"`,
      {
        remedy: '`scienceevolve status --data-dir D` lists the projects',
        data: { project: options.project },
      },
    );
  }
  const paths = await openProject(options.dataDir, options.project);
  await acceptedOrThrow(paths);
  await sweepProjectStrays(paths, { graceMs: options.graceMs });
  let records: RunRecord[];
  if (options.run !== undefined) {
    const found = await readRunRecord(paths, options.run);
    if (found === undefined) {
      throw new SdkError('usage', `project ${paths.projectId} has no run "${options.run}"`, {
        remedy: '`scienceevolve status --data-dir D --project P` lists the runs',
        data: { project: paths.projectId, run: options.run },
      });
    }
    if (effectiveStatus(found) === 'running') {
      throw new SdkError('usage', `run ${found.run} is still running under host pid ${found.host.pid}`, {
        remedy: 'wait for it to finish, or stop that host first',
        data: { run: found.run, hostPid: found.host.pid },
      });
    }
    records = [found];
  } else {
    records = (await listRunRecords(paths)).filter((r) => effectiveStatus(r) === 'interrupted');
  }
  const results: RunResult[] = [];
  for (const record of records) {
    if (record.status === 'succeeded' || record.status === 'failed') {
      results.push(await finishedResult(paths, record));
      continue;
    }
    const result = await resumeOne(paths, record, options);
    if (result !== undefined) results.push(result);
    else if (options.run !== undefined) {
      throw new SdkError('usage', `run ${record.run} was taken by another host while this one was resuming it`, {
        remedy: '`scienceevolve status` shows which host runs it now',
        data: { run: record.run },
      });
    }
  }
  return results;
}

/** Continues one run; undefined when another host claimed it first. */
async function resumeOne(
  paths: ProjectPaths,
  found: RunRecord,
  options: ResumeOptions,
): Promise<RunResult | undefined> {
  const script = found.script === null ? undefined : await readScriptFile(found.script);
  const scripted = script === undefined ? undefined : new ScriptedHarness(script);
  const version = await acceptedOrThrow(paths);
  for (const [agent, config] of Object.entries(version.workflow.agents)) harnessFor(agent, config.harness, scripted);
  if (version.workflow.orchestration.git) await checkGitWorkspace(found.workspace);
  // Claimed under a lock: of two `resume` processes, one takes the run and the other finds it running.
  const record = await withFileLock(join(paths.runDir(found.run), '.resume.lock'), async () => {
    const current = await readRunRecord(paths, found.run);
    if (current === undefined || effectiveStatus(current) !== 'interrupted') return undefined;
    current.host = thisHost();
    current.status = 'running';
    await writeJsonAtomic(runRecordPath(paths, current.run), current);
    return current;
  });
  if (record === undefined) return undefined;
  const interrupted: string[] = [];
  for (const invocation of record.invocations) {
    if (invocation.state !== 'starting' && invocation.state !== 'running') continue;
    invocation.state = 'interrupted';
    invocation.finishedAt = now();
    const last = invocation.attempts.at(-1);
    if (last !== undefined && last.outcome === null) {
      last.outcome = 'interrupted';
      last.finishedAt = now();
    }
    interrupted.push(invocation.id);
  }
  record.status = 'running';
  record.host = thisHost();
  record.resumes += 1;
  const file = new RunFile(runRecordPath(paths, record.run), record);
  await file.save();
  const stream = new EventStream();
  try {
    const engine = new RunEngine(paths, file, scripted, options, stream);
    engine.emit({ type: 'run.resumed', resumes: record.resumes, interrupted, version: version.version });
    for (const id of interrupted) {
      const invocation = record.invocations.find((i) => i.id === id)!;
      engine.emit({
        type: 'invocation.finished',
        invocation: id,
        agent: invocation.agent,
        status: 'interrupted',
        attempts: invocation.attempts.length,
      });
    }
    const main = record.invocations.find((i) => i.agent === 'main' && i.parent === null);
    return await engine.driveMain(main);
  } finally {
    stream.end();
  }
}

/** The engine of one run in one host. */
class RunEngine {
  private registry: ProcessRegistry | undefined;
  private readonly worktrees: RoleWorktrees;
  private readonly journal: EventJournal;
  private readonly abort = new AbortController();
  private readonly detachSignal: () => void = () => {};

  constructor(
    readonly paths: ProjectPaths,
    readonly file: RunFile,
    readonly scripted: ScriptedHarness | undefined,
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
  emit(event: { type: string; time?: string; [field: string]: unknown }): void {
    const { type, time, ...rest } = event;
    const full: PublicEvent = { type, time: time ?? now(), run: this.record.run, ...rest };
    this.journal.append(full);
    this.stream.push(full);
    try {
      this.options.onEvent?.(full);
    } catch {
      // A listener's failure never breaks the run.
    }
  }

  /** Runs (or restarts) Main's invocation and finishes the run from its outcome. */
  async driveMain(restartOf: InvocationRecord | undefined): Promise<RunResult> {
    let main: InvocationRecord | undefined = restartOf;
    try {
      // A Main that already ended (succeeded, or failed after its retries) is not run again on resume.
      if (main === undefined || (main.state !== 'succeeded' && main.state !== 'failed')) {
        main = await this.invoke('main', this.record.requirement, null, main);
      }
    } finally {
      this.detachSignal();
    }
    const status: RunStatus =
      main.state === 'succeeded' ? 'succeeded' : main.state === 'interrupted' ? 'interrupted' : 'failed';
    this.record.status = status;
    this.record.output = main.output;
    // An interrupted run has no error of its own: it is waiting for `resume`.
    this.record.error = status === 'failed' ? main.error : null;
    this.record.finishedAt = status === 'interrupted' ? null : now();
    await this.file.save();
    this.emit({
      type: 'run.finished',
      status,
      output: main.output,
      ...(this.record.error ? { error: publicError(this.record.error) } : {}),
    });
    return finishedResult(this.paths, this.record);
  }

  private async currentVersion(): Promise<WorkflowVersion> {
    return acceptedOrThrow(this.paths);
  }

  /**
   * One invocation to its end: every attempt with fresh services, up to `invocationRetries` retries.
   * `restartOf` restarts an interrupted record from its start (resume).
   */
  async invoke(
    agent: string,
    task: string,
    parent: string | null,
    restartOf?: InvocationRecord,
  ): Promise<InvocationRecord> {
    const invocation: InvocationRecord = restartOf ?? {
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
      scriptPositions: this.scripted?.snapshot() ?? null,
    };
    if (restartOf === undefined) this.record.invocations.push(invocation);
    else {
      invocation.restarted = true;
      invocation.state = 'starting';
      invocation.finishedAt = null;
      invocation.error = null;
    }
    let retriesLeft: number | undefined;
    for (;;) {
      const attempt = await this.attempt(invocation, restartOf !== undefined);
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
    invocation.state =
      last.outcome === 'succeeded' ? 'succeeded' : last.outcome === 'interrupted' ? 'interrupted' : 'failed';
    invocation.finishedAt = now();
    invocation.error = last.outcome === 'succeeded' ? null : last.error;
    await this.file.save();
    this.emit({
      type: 'invocation.finished',
      invocation: invocation.id,
      agent,
      status: invocation.state,
      attempts: invocation.attempts.length,
      restarted: invocation.restarted,
      ...(invocation.git ? { branch: invocation.git.branch, commit: invocation.git.commit } : {}),
      ...(invocation.error ? { error: publicError(invocation.error) } : {}),
    });
    return invocation;
  }

  /** One attempt: services, surface, harness, collection, commit. */
  private async attempt(invocation: InvocationRecord, restarted: boolean): Promise<AttemptRecord> {
    const agent = invocation.agent;
    const number = invocation.attempts.length + 1;
    const servicesId = number === 1 ? invocation.id : `${invocation.id}-${number}`;
    const version = await this.currentVersion();
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
    };
    invocation.attempts.push(attempt);
    invocation.state = 'starting';
    await this.file.save();
    const config = version.workflow.agents[agent];
    this.emit({
      type: 'invocation.started',
      invocation: invocation.id,
      agent,
      attempt: number,
      parent: invocation.parent,
      version: version.version,
      restarted,
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
    let services: InvocationServices | undefined;
    let output: string | undefined;
    let failure: unknown;
    try {
      if (config === undefined) {
        throw new SdkError(
          'unknown_agent',
          `the accepted workflow (version ${version.version}) has no agent "${agent}"`,
          {
            remedy: 'add the agent to the workflow',
            data: { agent },
          },
        );
      }
      const harness = harnessFor(agent, config.harness, this.scripted);
      if (this.scripted !== undefined && invocation.scriptPositions !== null) {
        // A retry or restart replays the invocation's decisions from its start. Main's restart also
        // rewinds the workers, which it delegates anew; a worker's retry rewinds only itself.
        if (agent === 'main') this.scripted.restore(invocation.scriptPositions);
        else this.scripted.restoreAgent(agent, invocation.scriptPositions);
      }
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
        hostEnv: this.options.hostEnv,
        onEvent: (event) => this.serviceEvent(invocation, servicesId, event),
        signal: this.abort.signal,
      });
      invocation.state = 'running';
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
                delegate: this.delegateTool(invocation),
              }),
            ]
          : services.sessions;
      // The surface owns the forwarding limits; a service's rests and recoveries go into the journal.
      const surface = this.observe(
        createSurface(entries, {
          timeoutMs: this.options.forwardTimeoutMs,
          onEvent: (event) => this.emit({ ...gateEventFields(event), invocation: invocation.id, agent }),
        }),
        invocation,
      );
      const result = await harness.run({
        agent,
        instructions: config.instructions,
        task: invocation.task,
        surface,
        workspace,
        signal: this.abort.signal,
        invocationId: invocation.id,
        runtimePath: attempt.runtimePath,
        hostEnv: this.options.hostEnv ?? process.env,
        registry: this.registry,
        graceMs: this.options.graceMs ?? 2000,
        // Interim: checkpoints and reports are wired by the engine split (issue 10/11).
        checkpoint: undefined,
        saveCheckpoint: async () => {},
        report: () => {},
      });
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
    const { type, time, ...rest } = event;
    this.emit({ ...rest, type, time, invocation: invocation.id, agent: invocation.agent, servicesId });
  }

  /** The surface with every tool call journaled (`tool.calling`, then `tool.called`). */
  private observe(surface: Surface, invocation: InvocationRecord): Surface {
    return {
      ...surface,
      callTool: async (name, args, requestOptions) => {
        const base = { invocation: invocation.id, agent: invocation.agent, tool: name };
        this.emit({ type: 'tool.calling', ...base });
        const started = performance.now();
        const called = (ok: boolean, text: string) =>
          this.emit({
            type: 'tool.called',
            ...base,
            arguments: boundedArguments(args),
            ok,
            durationMs: Math.round(performance.now() - started),
            summary: firstBytes(text, TOOL_SUMMARY_BYTES),
          });
        try {
          const result = await surface.callTool(name, args, requestOptions);
          called(result.isError !== true, resultText(result));
          return result;
        } catch (error) {
          called(false, toSdkError(error).message);
          throw error;
        }
      },
    };
  }

  /** Main's `delegate`: a worker invocation to its end; its final answer is the result. */
  private delegateTool(main: InvocationRecord): LocalTool {
    return {
      tool: {
        name: 'delegate',
        title: 'Delegate a task to a worker',
        description:
          'Runs one worker agent on a task and returns its final answer. The worker works with its own services; Main cannot be delegated to.',
        inputSchema: {
          type: 'object',
          properties: {
            agent: { type: 'string', description: 'the worker agent (a name under "agents", not "main")' },
            task: { type: 'string', description: 'what the worker should do' },
          },
          required: ['agent', 'task'],
          additionalProperties: false,
        },
      },
      handler: async (args: Record<string, unknown>) => {
        const agent = String(args.agent);
        const task = String(args.task);
        const workflow = (await this.currentVersion()).workflow;
        const workers = Object.keys(workflow.agents).filter((a) => a !== 'main');
        if (agent === 'main' || workflow.agents[agent] === undefined) {
          return errorResult(
            new SdkError(
              'unknown_agent',
              agent === 'main' ? 'Main cannot delegate to itself' : `there is no worker "${agent}"`,
              { remedy: `delegate to one of: ${workers.join(', ') || '(no workers)'}`, data: { agent } },
            ),
          );
        }
        const worker = await this.invoke(agent, task, main.id);
        if (worker.state !== 'succeeded') {
          const error = worker.error ?? { code: 'internal', message: 'the worker did not finish' };
          return {
            isError: true,
            content: [
              {
                type: 'text',
                text: `worker "${agent}" (invocation ${worker.id}) ${worker.state} after ${worker.attempts.length} attempt(s): ${error.code}: ${error.message}`,
              },
            ],
            structuredContent: { agent, invocation: worker.id, status: worker.state, error },
          };
        }
        return {
          content: [{ type: 'text', text: worker.output ?? '' }],
          structuredContent: { agent, invocation: worker.id, status: worker.state, output: worker.output ?? '' },
        };
      },
    };
  }
}

/** A finished run's result, its events read from the journal. */
async function finishedResult(paths: ProjectPaths, record: RunRecord): Promise<RunResult> {
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

/** Every event of a journal file; a torn last line (a host killed mid-append) is skipped. */
export async function readEvents(path: string): Promise<PublicEvent[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return [];
  }
  const events: PublicEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      events.push(JSON.parse(line) as PublicEvent);
    } catch {
      // A line cut short by a crash.
    }
  }
  return events;
}

async function acceptedOrThrow(paths: ProjectPaths): Promise<WorkflowVersion> {
  const version = await readAccepted(paths);
  if (version === undefined) {
    throw new SdkError('unknown_project', `project ${paths.projectId} has no accepted workflow in ${paths.dataDir}`, {
      remedy: 'start a run with --workflow, or load one with `scienceevolve workflow load`',
      data: { project: paths.projectId },
    });
  }
  return version;
}

function thisHost(): { pid: number; start: string } {
  return { pid: process.pid, start: processStartTime(process.pid) ?? '0' };
}

function now(): string {
  return new Date().toISOString();
}

function cancelled(): SdkError {
  return new SdkError('cancelled', 'the run was cancelled before this invocation finished', {
    remedy: 'continue it with `scienceevolve resume`',
  });
}

/**
 * An error as published in events: the service layer's diagnostics keep the last lines of a service's
 * stderr (`stderrTail`) for run.json and messages, but events never carry log content (SPEC §11).
 */
export function publicError(error: ErrorRecord | null): ErrorRecord | null {
  if (error === null) return null;
  const strip = (data: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
    if (data === undefined) return undefined;
    const { stderrTail: _tail, failures, ...rest } = data;
    return Array.isArray(failures) ? { ...rest, failures: failures.map((f) => publicError(f as ErrorRecord)) } : rest;
  };
  const data = strip(error.data);
  return { ...error, ...(data === undefined ? {} : { data }) };
}

/** The first `limit` bytes of `text` in UTF-8, never cutting a character. */
export function firstBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  let end = limit;
  // Back up over continuation bytes (10xxxxxx) so the cut falls on a character boundary.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** Arguments as journaled: whole up to {@link TOOL_ARGUMENTS_BYTES} of JSON, else a marked preview. */
function boundedArguments(args: Record<string, unknown> | undefined): unknown {
  const json = JSON.stringify(args ?? {});
  if (Buffer.byteLength(json) <= TOOL_ARGUMENTS_BYTES) return args ?? {};
  return { truncated: true, bytes: Buffer.byteLength(json), preview: firstBytes(json, TOOL_SUMMARY_BYTES) };
}
