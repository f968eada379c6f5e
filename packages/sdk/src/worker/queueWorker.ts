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
import { RunHarnesses } from '../harness/harnessFor.js';
import { hostSupervisor, sweepProjectStrays } from '../invocation/hostSupervision.js';
import {
  runAttempt,
  servicesIdOf,
  specEngineOptions,
  specWorktrees,
  taskLogLine,
  tasksOfJobLog,
  withLoggedTasks,
} from '../engine/attemptSeam.js';
import { JobRefusal } from '../queue/jobRefusal.js';
import { type ConsumedJob, type ConsumerSettings, JobHandBack, startQueueConsumer } from '../queue/queueConsumer.js';
import { ATTEMPT_FORMAT, type AttemptOutcome, type AttemptSpec, AttemptSpecSchema } from '../schemas/attempt.js';
import { ProjectPaths, openProject } from '../store/projectStore.js';
import { checkProjectId } from '../store/projectId.js';
import { storeSource } from '../store/sourceStore.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import { definitionDigest } from '../workflow/digest.js';
import { parseWorkflow } from '../workflow/validate.js';

/** Options of {@link startQueueWorker}. @internal */
export interface QueueWorkerOptions extends Omit<ConsumerSettings, 'onLog' | 'workerId'> {
  /** The worker's own data dir (definitions by digest, invocation copies and logs, its supervisor's log). */
  dataDir: string;
  /** Where `envFrom` and `apiKeyEnv` names are resolved. Default `process.env` (never modified). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Receives one line per job taken, finished or refused, and per queue problem (no secrets). */
  onLog?: (line: string) => void;
}

/** A running queue worker. @internal */
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

/** Sweeps strays of dead hosts in every project of the data dir, then starts taking jobs. @internal */
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
    let result: AttemptOutcome;
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
 * the attempt's, returned in its outcome.
 */
async function runJob(
  job: ConsumedJob,
  worker: string,
  options: QueueWorkerOptions,
  signal: AbortSignal,
): Promise<AttemptOutcome> {
  let spec: AttemptSpec;
  let paths: ProjectPaths;
  let version: WorkflowVersion;
  let harnesses: RunHarnesses;
  let engineOptions: ReturnType<typeof specEngineOptions>;
  let invocationDir: string;
  try {
    spec = checkJob(job);
    // A job taken again (its first taker died): the tasks its takers accepted, re-attached to, never re-called.
    spec = { ...spec, openTasks: await jobTasks(job, spec) };
    engineOptions = specEngineOptions(spec.options, job.id);
    paths = await openProject(options.dataDir, spec.project);
    invocationDir = paths.invocationDir(
      spec.run,
      servicesIdOf(spec.invocation.id, spec.invocation.attempts.length + 1),
    );
    version = await storeDefinitions(paths, spec);
    // Git-on works in a clone of the run's remote; Git-off needs the run's workspace at the same path.
    if (spec.git === null) await checkWorkspace(spec.workspace);
    harnesses = await RunHarnesses.load({
      script: spec.script === null ? undefined : (spec.script as Record<string, unknown>),
    });
  } catch (error) {
    if (isSdkError(error)) throw new JobRefusal(toSdkError(error));
    throw error;
  }
  // The run's positions in its script when the attempt starts (the agent's own is in its checkpoint).
  if (spec.positions !== null) harnesses.scripted?.restore(spec.positions);
  // A job taken again after its worker died may find that worker's copy here (same data dir): start clean.
  await rm(invocationDir, { recursive: true, force: true });
  const graceMs = engineOptions.graceMs;
  return runAttempt(spec, {
    id: worker,
    paths,
    version,
    harnesses,
    options: { ...engineOptions, hostEnv: options.hostEnv ?? process.env, signal },
    worktrees: specWorktrees(spec, paths),
    signal,
    registry: () => hostSupervisor(paths, { graceMs }),
    // In Redis before the task is polled: whoever takes the job (or the invocation) next re-attaches.
    onTaskAccepted: (event) => job.log(taskLogLine(event)),
  });
}

/** The spec's open tasks, with those the job's earlier takers logged (checked: `invalid_job` otherwise). */
async function jobTasks(job: ConsumedJob, spec: AttemptSpec): Promise<NonNullable<AttemptSpec['openTasks']>> {
  const number = spec.invocation.attempts.length + 1;
  const logged = tasksOfJobLog(await job.logs(), {
    job: job.id,
    run: spec.run,
    invocation: spec.invocation.id,
    agent: spec.invocation.agent,
    attempt: number,
    servicesId: servicesIdOf(spec.invocation.id, number),
  });
  return withLoggedTasks(spec.openTasks ?? [], logged);
}

/**
 * The job's spec, parsed before anything is written (anything may put a job on the queue).
 *
 * @throws SdkError `invalid_job` for a job that is not an attempt spec of this version.
 */
function checkJob(job: ConsumedJob): AttemptSpec {
  const parsed = AttemptSpecSchema.safeParse(job.data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || 'the job';
    // An id that is not one directory name (`..`, a slash) is the store's `unsafe_path`: a refusal either way.
    if (issue?.code === 'custom' && issue.params?.code === 'unsafe_path') {
      throw new SdkError('unsafe_path', `job ${job.id}: ${where} ${issue.message}`.slice(0, 400), {
        remedy: 'keep other writers off the queue: the coordinator only submits ids it made',
        data: { job: job.id, field: where },
      });
    }
    throw new SdkError(
      'invalid_job',
      `job ${job.id} is not an invocation job of this version (format ${ATTEMPT_FORMAT}): ${where}: ${issue?.message ?? 'bad shape'}`.slice(
        0,
        400,
      ),
      {
        remedy:
          'run workers of the same ScienceEvolve version as the coordinator, and keep other writers off the queue',
        data: { job: job.id },
      },
    );
  }
  checkProjectId(parsed.data.project);
  return parsed.data;
}

/**
 * Validates the job's workflow and stores every definition under its digest, recomputed here: a definition
 * whose content does not give the digest the job names is refused with `digest_mismatch`.
 */
async function storeDefinitions(paths: ProjectPaths, data: AttemptSpec): Promise<WorkflowVersion> {
  const workflow = parseWorkflow(data.version.workflow);
  const digests: Record<string, unknown> = data.version.digests;
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
    acceptedAt: new Date().toISOString(),
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
