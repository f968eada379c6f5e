/**
 * `scienceevolve worker`: a long-running process on any machine that takes invocation jobs from the queue
 * and runs each as the host would (SPEC §5, §6, §10): the job's definitions are stored by digest in the
 * worker's own data dir (each digest recomputed: a mismatch fails the job with `digest_mismatch`), the
 * workspace is checked (Git-off across machines needs a shared path: `workspace_unreachable` otherwise),
 * and the same attempt as a local one runs — services under this process's own supervisor, the agent's
 * harness, collection whatever happens. Strays of an earlier, dead worker are swept at start.
 */
import { startTelemetry, telemetry } from '../events/telemetry.js';
import { workflowDigest } from '../store/storeChain.js';
import { hostname } from 'node:os';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { SdkError, isSdkError, toSdkError } from '../errors.js';
import { type RunEventInput, emptyUsage } from '../events/runEvents.js';
import { RunHarnesses } from '../harness/harnessFor.js';
import { hostSupervisor, sweepProjectStrays } from '../invocation/hostSupervision.js';
import { type AttemptHost, runAttempt } from '../engine/attempt.js';
import { type EngineOptions, checkEngineDurations } from '../engine/engineOptions.js';
import { setInvocationState } from '../engine/invocationState.js';
import {
  type InvocationJob,
  type InvocationJobResult,
  JOB_FORMAT,
  type JobEngineOptions,
} from '../engine/queuedAttempt.js';
import { readJsonFile, writeJsonAtomic } from '../store/atomicFile.js';
import { type CheckpointFile, checkpointPath } from '../engine/checkpoints.js';
import { fromJournaledJson, isJournaledJson } from '../engine/journaledSteps.js';
import { RunFile, type RunRecord, now, thisHost } from '../engine/runRecord.js';
import { RemoteRoleWorktrees } from '../engine/remoteWorktrees.js';
import { RoleWorktrees } from '../engine/worktrees.js';
import { JobRefusal } from '../queue/jobRefusal.js';
import { type ConsumedJob, type ConsumerSettings, JobHandBack, startQueueConsumer } from '../queue/queueConsumer.js';
import { ProjectPaths, openProject } from '../store/projectStore.js';
import { checkProjectId } from '../store/projectId.js';
import { storeSource } from '../store/sourceStore.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import { definitionDigest } from '../workflow/digest.js';
import { parseWorkflow } from '../workflow/validate.js';

/** Options of {@link startQueueWorker}. */
export interface QueueWorkerOptions extends Omit<ConsumerSettings, 'onLog' | 'workerId'> {
  /** The worker's own data dir (definitions by digest, invocation copies and logs, its supervisor's log). */
  dataDir: string;
  /** Where `envFrom` and `apiKeyEnv` names are resolved. Default `process.env` (never modified). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Receives one line per job taken, finished or refused, and per queue problem (no secrets). */
  onLog?: (line: string) => void;
}

/** A running queue worker. */
export interface QueueWorker {
  /** `<hostname>:<pid>`: how runs record which worker ran an attempt. */
  readonly id: string;
  /**
   * Stops taking jobs. Drain (`force: false`): the jobs in hand finish and return their results. Force
   * (also after a drain began): the attempts in hand are cancelled (their services collected) and their
   * jobs go back to the queue's waiting list, for another worker to take as if never taken — no failure,
   * no retry counted.
   */
  close(force?: boolean): Promise<void>;
}

/** Sweeps strays of dead hosts in every project of the data dir, then starts taking jobs. */
export async function startQueueWorker(options: QueueWorkerOptions): Promise<QueueWorker> {
  const id = `${hostname()}:${process.pid}`;
  const log = options.onLog ?? (() => {});
  const abort = new AbortController();
  // With export on, each job is a span under the run's trace (the job carries its context).
  await startTelemetry();
  await sweepDataDir(options.dataDir);
  const consumer = await startQueueConsumer({ ...options, onLog: log, workerId: id }, async (job) => {
    await job.log(`taken by ${id}`);
    log(`job ${job.id} taken`);
    let result: InvocationJobResult;
    try {
      result = await runJob(job, id, options, abort.signal);
    } catch (error) {
      // Stopped with a second signal: back to the queue (a refusal stays one: every worker would refuse).
      if (abort.signal.aborted && !(error instanceof JobRefusal)) throw new JobHandBack();
      throw error;
    }
    log(`job ${job.id} ${result.attempt.outcome}${result.attempt.error ? ` (${result.attempt.error.code})` : ''}`);
    // An attempt the stop interrupted goes back to the queue; one that ended first reports as it ended.
    if (abort.signal.aborted && result.attempt.outcome === 'interrupted') throw new JobHandBack();
    return result;
  });
  log(`worker ${id} takes jobs from ${consumer.publicUrl}`);
  return {
    id,
    close: async (force = false) => {
      if (force) {
        // The attempts in hand are cancelled (their services collected), then their jobs handed back.
        abort.abort(
          new SdkError('cancelled', `queue worker ${id} was stopped`, {
            remedy: 'the job goes back to the queue for another worker',
          }),
        );
      }
      try {
        await consumer.close();
      } finally {
        // What the jobs' background flushes have not delivered yet, within the flush bound.
        await telemetry()?.flush();
      }
    },
  };
}

/** The start sweep: strays an earlier host of each project of this data dir left behind (SPEC §6). */
async function sweepDataDir(dataDir: string): Promise<void> {
  let projects: string[];
  try {
    projects = await readdir(join(dataDir, 'projects'));
  } catch {
    return;
  }
  for (const project of projects) {
    await sweepProjectStrays(new ProjectPaths(dataDir, project));
  }
}

/**
 * One job: checked, stored, run. A job this worker refuses (its shape, options, definitions' digests, the
 * workspace — an {@link SdkError} before the attempt starts) would be refused by every worker: it fails at
 * once with its coded error ({@link JobRefusal}), never retried. Coded failures of the attempt itself are
 * the attempt's, returned as a result.
 */
async function runJob(
  job: ConsumedJob,
  worker: string,
  options: QueueWorkerOptions,
  signal: AbortSignal,
): Promise<InvocationJobResult> {
  let data: InvocationJob;
  let paths: ProjectPaths;
  let version: WorkflowVersion;
  try {
    data = checkJob(job);
    paths = await openProject(options.dataDir, data.project);
    version = await storeDefinitions(paths, data);
    // Git-on works in a clone of the run's remote; Git-off needs the run's workspace at the same path.
    if (data.git === null) await checkWorkspace(data.workspace);
  } catch (error) {
    if (isSdkError(error)) throw new JobRefusal(toSdkError(error));
    throw error;
  }
  const invocation = data.invocation;
  const events: RunEventInput[] = [];
  const emit = (event: RunEventInput) => events.push({ ...event, time: event.time ?? now() });
  const record: RunRecord = {
    format: 1,
    run: data.run,
    project: data.project,
    status: 'running',
    requirement: '',
    workspace: data.workspace,
    version: version.version,
    script: null,
    host: thisHost(),
    startedAt: now(),
    finishedAt: null,
    output: null,
    error: null,
    resumes: 0,
    usage: emptyUsage(),
    invocations: [invocation],
  };
  const number = invocation.attempts.length + 1;
  const servicesId = number === 1 ? invocation.id : `${invocation.id}-${number}`;
  // A job taken again after its worker died may find that worker's copy here (same data dir): start clean.
  await rm(paths.invocationDir(data.run, servicesId), { recursive: true, force: true });
  const cpPath = checkpointPath(paths, data.run, invocation.id);
  if (data.checkpoint !== null) await writeJsonAtomic(cpPath, data.checkpoint);
  else await rm(cpPath, { force: true });
  const harnesses = await RunHarnesses.load({
    script: data.script === null ? undefined : (data.script as Record<string, unknown>),
  });
  if (data.positions !== null) harnesses.scripted?.restore(data.positions);
  const engineOptions: EngineOptions = {
    ...jobOptions(data.options),
    hostEnv: options.hostEnv ?? process.env,
    signal,
  };
  const fixed = version;
  const host: AttemptHost = {
    paths,
    // The worker's own record of the attempt, beside its copies: `invocations/<servicesId>/attempt.json`.
    file: new RunFile(join(paths.invocationDir(data.run, servicesId), 'attempt.json'), record),
    record,
    harnesses,
    options: engineOptions,
    worktrees:
      data.git === null ? new RoleWorktrees(paths, data.workspace) : new RemoteRoleWorktrees(paths, data.git.remote),
    signal,
    emit,
    // What the coordinator journaled of the invocation: the worker's own journal starts empty.
    journaled: async () => fromJournaledJson(data.journaled ?? { responses: [], calls: [] }),
    setState: (inv, to) => setInvocationState(inv, to, emit),
    currentVersion: async () => fixed,
    // The worker has no version history: who proposed each definition comes with the job.
    mainProposed: new Set(Array.isArray(data.mainProposed) ? data.mainProposed : []),
    registry: () => hostSupervisor(paths, { graceMs: engineOptions.graceMs }),
    delegateTo: async () => {
      throw new SdkError('usage', 'a worker invocation cannot delegate', { remedy: 'only Main delegates' });
    },
  };
  const { attempt, retryable } = await runAttempt(host, invocation, data.restarted);
  const checkpoint = (await readJsonFile<CheckpointFile>(cpPath)) ?? null;
  const positions = harnesses.scripted?.snapshot();
  return {
    format: JOB_FORMAT,
    worker,
    attempt,
    retryable,
    events,
    state: invocation.state,
    output: invocation.output,
    git: invocation.git,
    workspace: invocation.workspace,
    usage: record.usage ?? emptyUsage(),
    checkpoint,
    position:
      positions !== undefined && Object.hasOwn(positions, invocation.agent) ? positions[invocation.agent]! : null,
  };
}

/** The job's shape, checked before anything is written (anything may put a job on the queue). */
function checkJob(job: ConsumedJob): InvocationJob {
  const d = job.data as Partial<InvocationJob> | null;
  const inv = d?.invocation;
  const valid =
    typeof d === 'object' &&
    d !== null &&
    d.format === JOB_FORMAT &&
    typeof d.run === 'string' &&
    /^[A-Za-z0-9._-]{1,100}$/.test(d.run) &&
    typeof d.project === 'string' &&
    typeof d.workspace === 'string' &&
    typeof d.restarted === 'boolean' &&
    typeof inv === 'object' &&
    inv !== null &&
    typeof inv.id === 'string' &&
    /^[A-Za-z0-9._-]{1,100}$/.test(inv.id) &&
    typeof inv.agent === 'string' &&
    typeof inv.task === 'string' &&
    Array.isArray(inv.attempts) &&
    typeof d.version === 'object' &&
    d.version !== null &&
    typeof d.version.version === 'number' &&
    typeof d.version.digests === 'object' &&
    d.version.digests !== null &&
    typeof d.options === 'object' &&
    d.options !== null &&
    (d.checkpoint === null || (typeof d.checkpoint === 'object' && d.checkpoint !== undefined)) &&
    (d.journaled === undefined || isJournaledJson(d.journaled)) &&
    (d.positions === null || (typeof d.positions === 'object' && d.positions !== undefined)) &&
    (d.git === null || (typeof d.git === 'object' && d.git !== undefined && typeof d.git.remote === 'string'));
  if (!valid) {
    throw new SdkError('invalid_job', `job ${job.id} is not an invocation job of this version (format ${JOB_FORMAT})`, {
      remedy: 'run workers of the same ScienceEvolve version as the coordinator, and keep other writers off the queue',
      data: { job: job.id },
    });
  }
  checkProjectId(d.project as string);
  jobOptions(d.options as Record<string, unknown>, job.id);
  return d as InvocationJob;
}

/**
 * The engine options a job may carry, and only those, checked as `run` checks them
 * ({@link checkEngineDurations}: whole milliseconds from the option's floor to 2^31 − 1). Anything else the
 * job's `options` holds is not spread into this worker's engine options.
 *
 * @throws SdkError `invalid_job` for a value out of range or not a number.
 */
function jobOptions(options: JobEngineOptions | Record<string, unknown>, jobId = '?'): JobEngineOptions {
  const out: Record<string, unknown> = {};
  for (const key of ['startupBudgetMs', 'graceMs', 'forwardTimeoutMs'] as const) {
    if (Object.hasOwn(options, key)) out[key] = (options as Record<string, unknown>)[key];
  }
  try {
    checkEngineDurations(out as EngineOptions);
  } catch (error) {
    throw new SdkError('invalid_job', `job ${jobId} has bad options: ${(error as Error).message}`, {
      remedy: 'run workers of the same ScienceEvolve version as the coordinator, and keep other writers off the queue',
      data: { job: jobId },
    });
  }
  return out as JobEngineOptions;
}

/**
 * Validates the job's workflow and stores every definition under its digest, recomputed here: a definition
 * whose content does not give the digest the job names is refused with `digest_mismatch`.
 */
async function storeDefinitions(paths: ProjectPaths, data: InvocationJob): Promise<WorkflowVersion> {
  const workflow = parseWorkflow(data.version.workflow);
  const digests = data.version.digests as Record<string, unknown>;
  const checked: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, definition] of Object.entries(workflow.mcpDefinitions)) {
    const named = Object.hasOwn(digests, name) ? digests[name] : undefined;
    const actual = definitionDigest(definition);
    if (named !== actual) {
      throw new SdkError(
        'digest_mismatch',
        `definition "${name}" of run ${data.run} does not match its digest: the job names ${typeof named === 'string' ? named.slice(0, 12) : '(none)'}…, its content gives ${actual.slice(0, 12)}…`,
        {
          remedy:
            'the job was altered on its way (or written by another version): start the invocation again from the coordinator; check who else writes to the queue',
          data: { definition: name, run: data.run, expected: named, actual },
        },
      );
    }
    checked[name] = actual;
    await storeSource(paths, name, definition);
  }
  return {
    version: data.version.version,
    acceptedAt: now(),
    by: 'operator',
    digests: { ...checked },
    changedMcps: [],
    changedAgents: [],
    // In memory only, never written to this worker's store: the coordinator's chain is not this store's.
    previous: null,
    workflowDigest: workflowDigest(workflow),
    workflow,
  };
}

/** Git-off across machines needs the run's workspace at the same path here. */
async function checkWorkspace(workspace: string): Promise<void> {
  let isDir = false;
  try {
    isDir = (await stat(workspace)).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) {
    throw new SdkError('workspace_unreachable', `the run's workspace ${workspace} is not a directory on this worker`, {
      remedy:
        'mount the workspace at the same path on every worker machine (a shared filesystem), or run this worker where the coordinator runs',
      data: { workspace },
    });
  }
}
