/**
 * A worker invocation's attempt as a queue job (the scale-out backend), one transport of the attempt seam
 * (docs/decisions/attempt-seam.md): the coordinator sends the attempt's {@link AttemptSpec} as one BullMQ
 * job, a queue worker runs it (`runAttempt`) under its own supervisor, and the coordinator parses the
 * {@link AttemptOutcome} that came back and applies it as it applies a local attempt's. Jobs carry no
 * secret value: `envFrom` and `apiKeyEnv` are names, resolved on the worker.
 *
 * Job ids are `<run>__<invocation>__<attempt>`: a resumed coordinator finds the job of an interrupted
 * attempt and waits for it (or takes its result) instead of running it again.
 */
import { SdkError, toSdkError } from '../errors.js';
import type { QueueClient } from '../queue/queueClient.js';
import { type AttemptOutcome, AttemptOutcomeSchema, type AttemptSpec } from '../schemas/attempt.js';
import type { AttemptResult } from './attempt.js';
import {
  type AttemptCoordinator,
  applyAttemptOutcome,
  buildAttemptSpec,
  failUnreadable,
  startedAttempt,
} from './attemptApply.js';
import { readEvents } from '../events/journal.js';
import { checkJobEvents } from './jobEvents.js';
import { TASK_LOG_PREFIX, tasksOfJobLog } from './queuedTasks.js';
import { acceptedTaskIds } from './taskResume.js';
import { fetchRoleBranch, runGitRemote } from './remoteWorktrees.js';
import { type AttemptRecord, type InvocationRecord, now, runEventsPath } from './runRecord.js';
import { roleBranch } from './worktrees.js';

/** The job of attempt `attempt` of `invocation` in `run`. */
export function jobIdOf(run: string, invocation: string, attempt: number): string {
  return `${run}__${invocation}__${attempt}`;
}

/** What a queued attempt needs of the engine beyond a local attempt. */
export interface QueuedAttemptHost extends AttemptCoordinator {
  readonly queue: QueueClient;
  /** Aborts when the run is cancelled. */
  readonly signal: AbortSignal;
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
    // The job failed meanwhile (its worker died): the tasks it accepted go into the journal, so the next
    // job's spec carries them and its worker re-attaches instead of calling the tool again.
    if (state === 'failed') {
      const refused = await journalJobTasks(host, invocation, last, await jobLog(host, last.queue.job), []);
      if (refused !== undefined) {
        last.error = refused.toJSON();
        await host.file.save();
        return { attempt: last, retryable: false };
      }
    }
  }
  const built = await buildAttemptSpec(host, invocation, restarted);
  const job = jobIdOf(host.record.run, invocation.id, invocation.attempts.length + 1);
  // Where the worker runs it ('' until the outcome names it).
  const attempt = startedAttempt(invocation, built.version, restarted, '', { job, workers: [] });
  invocation.attempts.push(attempt);
  await host.file.save();
  if (host.signal.aborted) return interrupted(host, attempt, host.signal.reason);
  // The next attempt would read the same file: not retried (as for a local attempt).
  if (built.spec === undefined) return failUnreadable(host, attempt, built.unreadable);
  try {
    await host.queue.submit(job, built.spec satisfies AttemptSpec);
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
  let finished: Awaited<ReturnType<QueueClient['wait']>>;
  try {
    finished = await host.queue.wait(job, host.signal);
  } catch (error) {
    if (host.signal.aborted) return interrupted(host, attempt, host.signal.reason);
    return queueLost(host, attempt, error);
  }
  if (finished.status === 'failed' && finished.refused !== undefined) {
    // A worker refused the job: every worker would. Its own code, not retried.
    const { code, message, remedy } = finished.refused;
    attempt.outcome = 'failed';
    attempt.finishedAt = now();
    attempt.queue!.workers = takersOf(await jobLog(host, job));
    attempt.error = new SdkError(code, message, {
      ...(remedy === undefined ? {} : { remedy }),
      data: { job, invocation: invocation.id, workers: attempt.queue!.workers },
    }).toJSON();
    await host.file.save();
    return { attempt, retryable: false };
  }
  const lines = await jobLog(host, job);
  const workers = takersOf(lines);
  if (finished.status !== 'completed') {
    // The tasks its workers accepted go into the journal: the next attempt's spec carries them.
    const refused = await journalJobTasks(host, invocation, attempt, lines, []);
    if (refused !== undefined) {
      return failed(host, attempt, refused, workers);
    }
    const error = new SdkError(
      'worker_lost',
      finished.status === 'missing'
        ? `the job ${job} of invocation ${invocation.id} is no longer in the queue`
        : `the job ${job} of invocation ${invocation.id} failed on the queue: ${finished.reason}`,
      {
        remedy: 'check the queue workers (their logs say why); the invocation is retried with a new job',
        data: { job, invocation: invocation.id },
      },
    );
    attempt.outcome = 'failed';
    attempt.finishedAt = now();
    attempt.error = error.toJSON();
    attempt.queue!.workers = workers;
    await host.file.save();
    return { attempt, retryable: true };
  }
  let outcome: AttemptOutcome;
  try {
    outcome = checkOutcome(
      finished.value,
      job,
      host.record.run,
      invocation,
      attempt,
      roleBranch(host.paths, invocation.agent),
    );
  } catch (error) {
    return failed(host, attempt, toSdkError(error), workers);
  }
  // Tasks an earlier taker of the job accepted (it died; the last taker re-attached): journaled before
  // the outcome's own events, which hold only the last taker's.
  const refused = await journalJobTasks(host, invocation, attempt, lines, outcome.events);
  if (refused !== undefined) {
    return failed(host, attempt, refused, workers);
  }
  const result = await applyAttemptOutcome(host, invocation, attempt, outcome, false, {
    job,
    workers: workers.length > 0 ? workers : [outcome.worker],
  });
  if (result.attempt.outcome === 'succeeded' && outcome.git?.commit) {
    // Git-on: the worker pushed the role's branch to the run's remote; the coordinator's repository gets it.
    try {
      await fetchRoleBranch(host.record.workspace, await runGitRemote(host.record.workspace), outcome.git.branch);
    } catch {
      // The commit is on the remote either way; `git fetch` in the workspace brings it.
    }
  }
  return result;
}

/** The lines the workers logged on the job ([] when Redis cannot give them). */
async function jobLog(host: QueuedAttemptHost, job: string): Promise<string[]> {
  try {
    return await host.queue.logs(job);
  } catch {
    return [];
  }
}

/** The workers that took the job, from the lines they logged on it (`taken by <worker>`). */
function takersOf(lines: readonly string[]): string[] {
  return lines.flatMap((line) => {
    const match = /^taken by (\S+)$/.exec(line);
    return match === null ? [] : [match[1]!];
  });
}

/**
 * Journals the `tool.task_accepted` events the job's workers logged (engine/queuedTasks.ts) that neither the
 * journal nor `outcomeEvents` holds. Returns the refusal (`invalid_job`) of a log line that is not one of the
 * job's accepted tasks, journaling none.
 */
async function journalJobTasks(
  host: QueuedAttemptHost,
  invocation: InvocationRecord,
  attempt: AttemptRecord,
  lines: readonly string[],
  outcomeEvents: readonly unknown[],
): Promise<SdkError | undefined> {
  if (!lines.some((line) => line.startsWith(TASK_LOG_PREFIX))) return undefined;
  let logged: ReturnType<typeof tasksOfJobLog>;
  try {
    logged = tasksOfJobLog(lines, {
      job: attempt.queue!.job,
      run: host.record.run,
      invocation: invocation.id,
      agent: invocation.agent,
      attempt: attempt.attempt,
      servicesId: attempt.servicesId,
    });
  } catch (error) {
    return toSdkError(error, 'invalid_job');
  }
  const known = acceptedTaskIds(await readEvents(runEventsPath(host.paths, host.record.run)), invocation.id);
  for (const id of acceptedTaskIds(outcomeEvents, invocation.id)) known.add(id);
  for (const event of logged) {
    if (known.has(event.taskId)) continue;
    known.add(event.taskId);
    host.emit(event);
  }
  return undefined;
}

/**
 * The job's result, parsed ({@link AttemptOutcomeSchema}) and checked against the job: anything in Redis may
 * have been written by something else. Its events are checked one by one ({@link checkJobEvents}).
 *
 * @throws SdkError `invalid_job` for a result that is not a worker's outcome of this job.
 */
function checkOutcome(
  value: unknown,
  job: string,
  run: string,
  invocation: InvocationRecord,
  attempt: AttemptRecord,
  branch: string,
): AttemptOutcome {
  const parsed = AttemptOutcomeSchema.safeParse(value);
  const why = !parsed.success
    ? `${parsed.error.issues[0]?.path.join('.') || 'the result'}: ${parsed.error.issues[0]?.message ?? 'bad shape'}`
    : parsed.data.attempt.attempt !== attempt.attempt
      ? `it is the outcome of attempt ${parsed.data.attempt.attempt}, not ${attempt.attempt}`
      : // The coordinator fetches and force-moves this branch in the user's repository: only the role's own.
        parsed.data.git !== null && parsed.data.git.branch !== branch
        ? "it names a branch that is not the role's own"
        : parsed.data.checkpoint !== null &&
            (parsed.data.checkpoint.invocation !== invocation.id || parsed.data.checkpoint.run !== run)
          ? "its checkpoint is not the invocation's"
          : undefined;
  if (!parsed.success || why !== undefined) {
    throw new SdkError(
      'invalid_job',
      `the result of job ${job} (invocation ${invocation.id}) is not a queue worker's result: ${why?.slice(0, 200)}`,
      {
        remedy:
          'run workers of the same ScienceEvolve version as the coordinator, and keep other writers off the queue',
        data: { job, invocation: invocation.id },
      },
    );
  }
  // Each event is checked before any reaches the journal: known type, its fields, the job's own ids.
  checkJobEvents(parsed.data.events, {
    job,
    run,
    invocation: invocation.id,
    agent: invocation.agent,
    attempt: attempt.attempt,
    servicesId: attempt.servicesId,
  });
  return parsed.data;
}

/** The attempt failed with `error`, not retried (another attempt would meet the same). */
async function failed(
  host: QueuedAttemptHost,
  attempt: AttemptRecord,
  error: SdkError,
  workers: string[],
): Promise<AttemptResult> {
  attempt.outcome = 'failed';
  attempt.finishedAt = now();
  attempt.error = error.toJSON();
  attempt.queue!.workers = workers;
  await host.file.save();
  return { attempt, retryable: false };
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
