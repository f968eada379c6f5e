/**
 * A worker invocation's attempt as a queue job (the scale-out backend): the coordinator sends the attempt
 * (the invocation, the workflow version with its definitions and their digests, its checkpoint and, for the
 * scripted harness, the script and positions) as one BullMQ job, a queue worker runs the same attempt
 * (`runAttempt`) under its own supervisor, and the coordinator applies what came back: the same attempt
 * record, events, output, usage and checkpoint as a local attempt. Jobs carry no secret value: `envFrom`
 * and `apiKeyEnv` are names, resolved on the worker.
 *
 * Job ids are `<run>__<invocation>__<attempt>`: a resumed coordinator finds the job of an interrupted
 * attempt and waits for it (or takes its result) instead of running it again.
 */
import { mainProposedDigests } from '../invocation/sandboxPolicy.js';
import { SdkError, toSdkError } from '../errors.js';
import type { InvocationState, RunEventInput, UsageTotals } from '../events/runEvents.js';
import { emptyUsage } from '../events/runEvents.js';
import { InvocationStateSchema } from '../schemas/states.js';
import type { QueueClient } from '../queue/queueClient.js';
import { writeJsonAtomic } from '../store/atomicFile.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import type { AttemptHost, AttemptResult } from './attempt.js';
import { type CheckpointFile, checkpointPath, readCheckpointFile } from './checkpoints.js';
import { type JournaledStepsJson, journaledJson } from './journaledSteps.js';
import { checkJobEvents } from './jobEvents.js';
import { fetchRoleBranch, runGitRemote } from './remoteWorktrees.js';
import { type AttemptRecord, type InvocationRecord, now } from './runRecord.js';
import { roleBranch } from './worktrees.js';

/** The version of the job and result shapes; a worker refuses a job of another. */
export const JOB_FORMAT = 1;

/** Engine settings an attempt takes to the worker (milliseconds; the worker's defaults when absent). */
export interface JobEngineOptions {
  startupBudgetMs?: number;
  graceMs?: number;
  forwardTimeoutMs?: number;
}

/** One attempt of a worker invocation, as a queue job carries it. */
export interface InvocationJob {
  format: typeof JOB_FORMAT;
  run: string;
  project: string;
  /** The run's workspace (Git-off: a path every worker must see). */
  workspace: string;
  /** The invocation as the coordinator records it, before this attempt. */
  invocation: InvocationRecord;
  restarted: boolean;
  /** The workflow version in force: its definitions travel with their digests (checked by the worker). */
  version: Pick<WorkflowVersion, 'version' | 'digests' | 'workflow'>;
  /**
   * The digests of the version whose definitions Main proposed (first stored by a version Main accepted),
   * read from the coordinator's history: a worker has no history, and `sandbox: "auto"` sandboxes these.
   */
  mainProposed: string[];
  /** The invocation's checkpoint file, or null. */
  checkpoint: CheckpointFile | null;
  /**
   * What the coordinator's journal holds of the invocation's steps, which the worker's harness checks the
   * checkpoint against (absent in jobs of earlier versions: nothing journaled).
   */
  journaled?: JournaledStepsJson;
  /** The run's script (scripted harness) and every agent's position, or null. */
  script: unknown;
  positions: Record<string, number> | null;
  options: JobEngineOptions;
  /** Git-on: the run's git remote (URL or path) the worker fetches the role's branch from and pushes to. */
  git: { remote: string } | null;
}

/** What a worker returns for a job. */
export interface InvocationJobResult {
  format: typeof JOB_FORMAT;
  /** `<hostname>:<pid>` of the worker that ran it. */
  worker: string;
  attempt: AttemptRecord;
  retryable: boolean;
  /** The attempt's events, in order, with their times. */
  events: RunEventInput[];
  state: InvocationState;
  output: string | null;
  git: InvocationRecord['git'];
  workspace: string;
  /** Usage of this attempt's model calls. */
  usage: UsageTotals;
  /** The invocation's checkpoint after the attempt, or null. */
  checkpoint: CheckpointFile | null;
  /** The scripted harness's position of the agent after the attempt, or null. */
  position: number | null;
}

/** The job of attempt `attempt` of `invocation` in `run`. */
export function jobIdOf(run: string, invocation: string, attempt: number): string {
  return `${run}__${invocation}__${attempt}`;
}

/** What a queued attempt needs of the engine beyond a local attempt. */
export interface QueuedAttemptHost extends AttemptHost {
  readonly queue: QueueClient;
  /** Stops the run (interrupted, `error` recorded): Redis is gone, so nothing more can be delegated. */
  stop(error: SdkError): void;
}

/** One attempt of a worker invocation through the queue; re-attaches to the job of an interrupted one. */
export async function runQueuedAttempt(
  host: QueuedAttemptHost,
  invocation: InvocationRecord,
  restarted: boolean,
): Promise<AttemptResult> {
  const last = invocation.attempts.at(-1);
  if (restarted && last?.queue !== undefined && last.outcome === 'interrupted') {
    // The coordinator died (or Redis went away) while this job was queued or running: its job may still
    // run, or may have finished; either way it is not run again.
    let state: string;
    try {
      state = await host.queue.state(last.queue.job);
    } catch (error) {
      return queueLost(host, last, error);
    }
    if (state !== 'failed' && state !== 'missing') {
      last.outcome = null;
      last.finishedAt = null;
      last.error = null;
      await host.file.save();
      return awaitJob(host, invocation, last);
    }
  }
  const version = await host.currentVersion();
  const number = invocation.attempts.length + 1;
  const job = jobIdOf(host.record.run, invocation.id, number);
  let checkpoint: CheckpointFile | null = null;
  let journaled: JournaledStepsJson = { responses: [], calls: [] };
  let unreadable: unknown;
  try {
    // Read and checked as a local attempt reads it (one read); the worker gets the checked file, with what
    // the coordinator journaled of the invocation to check its state against.
    checkpoint = (await readCheckpointFile(host.paths, host.record.run, invocation.id)) ?? null;
    if (checkpoint !== null) journaled = journaledJson(await host.journaled(invocation.id));
  } catch (error) {
    unreadable = error;
  }
  const payload: InvocationJob = {
    format: JOB_FORMAT,
    run: host.record.run,
    project: host.record.project,
    workspace: host.record.workspace,
    invocation: structuredClone(invocation),
    restarted,
    version: { version: version.version, digests: version.digests, workflow: version.workflow },
    mainProposed: [...(await mainProposedDigests(host.paths, version))],
    checkpoint,
    journaled,
    script: host.harnesses.script ?? null,
    positions: host.harnesses.scripted?.snapshot() ?? null,
    git: version.workflow.orchestration.git ? { remote: await runGitRemote(host.record.workspace) } : null,
    options: {
      ...(host.options.startupBudgetMs === undefined ? {} : { startupBudgetMs: host.options.startupBudgetMs }),
      ...(host.options.graceMs === undefined ? {} : { graceMs: host.options.graceMs }),
      ...(host.options.forwardTimeoutMs === undefined ? {} : { forwardTimeoutMs: host.options.forwardTimeoutMs }),
    },
  };
  const attempt: AttemptRecord = {
    attempt: number,
    servicesId: number === 1 ? invocation.id : `${invocation.id}-${number}`,
    // Where the worker runs it; filled from the worker's record when the job returns.
    runtimePath: '',
    version: version.version,
    restarted,
    startedAt: now(),
    finishedAt: null,
    outcome: null,
    error: null,
    queue: { job, workers: [] },
  };
  invocation.attempts.push(attempt);
  await host.file.save();
  if (host.signal.aborted) return interrupted(host, attempt, host.signal.reason);
  if (unreadable !== undefined) {
    // The next attempt would read the same file: not retried (as for a local attempt).
    attempt.outcome = 'failed';
    attempt.finishedAt = now();
    attempt.error = toSdkError(unreadable, 'invalid_checkpoint').toJSON();
    await host.file.save();
    return { attempt, retryable: false };
  }
  try {
    await host.queue.submit(job, payload);
  } catch (error) {
    return queueLost(host, attempt, error);
  }
  return awaitJob(host, invocation, attempt);
}

/** Waits for the attempt's job and applies its result to the invocation. */
async function awaitJob(
  host: QueuedAttemptHost,
  invocation: InvocationRecord,
  attempt: AttemptRecord,
): Promise<AttemptResult> {
  const job = attempt.queue!.job;
  let outcome: Awaited<ReturnType<QueueClient['wait']>>;
  try {
    outcome = await host.queue.wait(job, host.signal);
  } catch (error) {
    if (host.signal.aborted) return interrupted(host, attempt, host.signal.reason);
    return queueLost(host, attempt, error);
  }
  if (outcome.status === 'failed' && outcome.refused !== undefined) {
    // A worker refused the job: every worker would. Its own code, not retried.
    const { code, message, remedy } = outcome.refused;
    attempt.outcome = 'failed';
    attempt.finishedAt = now();
    attempt.queue!.workers = await takers(host, job);
    attempt.error = new SdkError(code, message, {
      ...(remedy === undefined ? {} : { remedy }),
      data: { job, invocation: invocation.id, workers: attempt.queue!.workers },
    }).toJSON();
    await host.file.save();
    return { attempt, retryable: false };
  }
  if (outcome.status !== 'completed') {
    const error = new SdkError(
      'worker_lost',
      outcome.status === 'missing'
        ? `the job ${job} of invocation ${invocation.id} is no longer in the queue`
        : `the job ${job} of invocation ${invocation.id} failed on the queue: ${outcome.reason}`,
      {
        remedy: 'check the queue workers (their logs say why); the invocation is retried with a new job',
        data: { job, invocation: invocation.id },
      },
    );
    attempt.outcome = 'failed';
    attempt.finishedAt = now();
    attempt.error = error.toJSON();
    attempt.queue!.workers = await takers(host, job);
    await host.file.save();
    return { attempt, retryable: true };
  }
  const workers = await takers(host, job);
  let result: InvocationJobResult;
  try {
    result = checkResult(
      outcome.value,
      job,
      host.record.run,
      invocation,
      attempt,
      roleBranch(host.paths, invocation.agent),
    );
  } catch (error) {
    attempt.outcome = 'failed';
    attempt.finishedAt = now();
    attempt.error = toSdkError(error).toJSON();
    attempt.queue!.workers = workers;
    await host.file.save();
    return { attempt, retryable: false };
  }
  for (const event of result.events) {
    // The worker's transitions of its copy are the record's own: the same `invocation.state` events.
    if (event.type === 'invocation.state') invocation.state = event.to;
    host.emit(event);
  }
  const final: AttemptRecord = {
    ...result.attempt,
    queue: { job, workers: workers.length > 0 ? workers : [result.worker] },
  };
  const index = invocation.attempts.indexOf(attempt);
  if (index === -1) invocation.attempts.push(final);
  else invocation.attempts[index] = final;
  invocation.state = result.state;
  invocation.workspace = result.workspace;
  invocation.git = result.git;
  if (final.outcome === 'succeeded') invocation.output = result.output ?? '';
  if (final.outcome === 'succeeded' && result.git?.commit) {
    // Git-on: the worker pushed the role's branch to the run's remote; the coordinator's repository gets it.
    try {
      await fetchRoleBranch(host.record.workspace, await runGitRemote(host.record.workspace), result.git.branch);
    } catch {
      // The commit is on the remote either way; `git fetch` in the workspace brings it.
    }
  }
  invocation.usage ??= emptyUsage();
  host.record.usage ??= emptyUsage();
  mergeUsage(invocation.usage, result.usage);
  mergeUsage(host.record.usage, result.usage);
  if (result.checkpoint !== null) {
    const path = checkpointPath(host.paths, host.record.run, invocation.id);
    await writeJsonAtomic(path, result.checkpoint);
    invocation.checkpoint = path;
  }
  if (result.position !== null) {
    host.harnesses.scripted?.restoreAgent(invocation.agent, { [invocation.agent]: result.position });
  }
  await host.file.save();
  return { attempt: final, retryable: result.retryable };
}

/** The workers that took the job, from the lines they logged on it (`taken by <worker>`). */
async function takers(host: QueuedAttemptHost, job: string): Promise<string[]> {
  try {
    const lines = await host.queue.logs(job);
    return lines.flatMap((line) => {
      const match = /^taken by (\S+)$/.exec(line);
      return match === null ? [] : [match[1]!];
    });
  } catch {
    return [];
  }
}

/** The states an invocation can be in (a result naming another is refused): the one list, the schema's. */
const INVOCATION_STATES = InvocationStateSchema.options;

/**
 * The job's result, checked: anything in Redis may have been written by something else. Its events are
 * checked one by one ({@link checkJobEvents}).
 */
function checkResult(
  value: unknown,
  job: string,
  run: string,
  invocation: InvocationRecord,
  attempt: AttemptRecord,
  branch: string,
): InvocationJobResult {
  const r = value as Partial<InvocationJobResult> | null;
  const state = (s: unknown) => typeof s === 'string' && (INVOCATION_STATES as readonly string[]).includes(s);
  const valid =
    typeof r === 'object' &&
    r !== null &&
    r.format === JOB_FORMAT &&
    typeof r.worker === 'string' &&
    typeof r.attempt === 'object' &&
    r.attempt !== null &&
    typeof r.attempt.attempt === 'number' &&
    ['succeeded', 'failed', 'interrupted'].includes(String(r.attempt.outcome)) &&
    r.attempt.attempt === attempt.attempt &&
    Array.isArray(r.events) &&
    state(r.state) &&
    (r.output === null || typeof r.output === 'string') &&
    (r.position === null || (typeof r.position === 'number' && Number.isSafeInteger(r.position) && r.position >= 0)) &&
    // The coordinator fetches and force-moves this branch in the user's repository: only the role's own.
    (r.git === null ||
      (typeof r.git === 'object' &&
        r.git !== undefined &&
        r.git.branch === branch &&
        (r.git.commit === null || typeof r.git.commit === 'string'))) &&
    typeof r.usage === 'object' &&
    r.usage !== null &&
    typeof r.workspace === 'string' &&
    (r.checkpoint === null ||
      (typeof r.checkpoint === 'object' &&
        r.checkpoint !== undefined &&
        r.checkpoint.invocation === invocation.id &&
        r.checkpoint.run === run &&
        r.checkpoint.format === 1));
  if (!valid) {
    throw new SdkError(
      'invalid_job',
      `the result of job ${job} (invocation ${invocation.id}) is not a queue worker's result`,
      {
        remedy:
          'run workers of the same ScienceEvolve version as the coordinator, and keep other writers off the queue',
        data: { job, invocation: invocation.id },
      },
    );
  }
  // Each event is checked before any reaches the journal: known type, its fields, the job's own ids.
  checkJobEvents(r.events as unknown[], {
    job,
    run,
    invocation: invocation.id,
    agent: invocation.agent,
    attempt: attempt.attempt,
    servicesId: attempt.servicesId,
  });
  return r as InvocationJobResult;
}

/** Redis could not be reached: the attempt is interrupted (its job stays in the queue) and the run stops. */
async function queueLost(host: QueuedAttemptHost, attempt: AttemptRecord, error: unknown): Promise<AttemptResult> {
  const coded = toSdkError(error, 'queue_unreachable');
  host.stop(coded);
  return interrupted(host, attempt, coded);
}

async function interrupted(host: QueuedAttemptHost, attempt: AttemptRecord, reason: unknown): Promise<AttemptResult> {
  attempt.outcome = 'interrupted';
  attempt.finishedAt = now();
  attempt.error = toSdkError(reason, 'cancelled').toJSON();
  await host.file.save();
  return { attempt, retryable: false };
}

function mergeUsage(into: UsageTotals, add: Partial<UsageTotals>): void {
  for (const key of Object.keys(into) as (keyof UsageTotals)[]) {
    const n = add[key];
    if (typeof n === 'number' && Number.isFinite(n) && n >= 0) into[key] += n;
  }
}
