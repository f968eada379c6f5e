/**
 * The attempt seam (docs/decisions/attempt-seam.md): all a runner elsewhere than the host that owns the
 * run (the queue worker today; a Temporal activity or an SQS consumer tomorrow) needs of the engine. It
 * takes an {@link AttemptSpec}, resolves it on its own machine, runs it with {@link runAttempt} and sends
 * back the {@link AttemptOutcome}; the coordinator applies that outcome as it applies a local attempt's.
 * `worker/` imports nothing else of `engine/` (a dependency-cruiser rule holds that).
 */
import { SdkError } from '../errors.js';
import type { AttemptOptions, AttemptSpec } from '../schemas/attempt.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { type EngineOptions, checkEngineDurations } from './engineOptions.js';
import { RemoteRoleWorktrees } from './remoteWorktrees.js';
import { RoleWorktrees } from './worktrees.js';

export { type AttemptRunner, runAttempt, servicesIdOf } from './attempt.js';
export { taskLogLine, tasksOfJobLog, withLoggedTasks } from './queuedTasks.js';

/**
 * The engine options a spec may carry, and only those, checked as `run` checks them
 * ({@link checkEngineDurations}: whole milliseconds from the option's floor to 2^31 − 1).
 *
 * @throws SdkError `invalid_job` for a value out of range or not a number.
 */
export function specEngineOptions(options: AttemptOptions, jobId: string): EngineOptions {
  const out: EngineOptions = {};
  if (options.startupBudgetMs !== undefined) out.startupBudgetMs = options.startupBudgetMs;
  if (options.graceMs !== undefined) out.graceMs = options.graceMs;
  if (options.forwardTimeoutMs !== undefined) out.forwardTimeoutMs = options.forwardTimeoutMs;
  try {
    checkEngineDurations(out);
  } catch (error) {
    throw new SdkError('invalid_job', `job ${jobId} has bad options: ${(error as Error).message}`, {
      remedy: 'run workers of the same ScienceEvolve version as the coordinator, and keep other writers off the queue',
      data: { job: jobId },
    });
  }
  return out;
}

/**
 * Where a runner on another machine gets the role's worktree: Git-on, a clone of the run's remote (the
 * role's branch fetched, and pushed back after the commit); Git-off, the run's workspace at the same path.
 */
export function specWorktrees(spec: AttemptSpec, paths: ProjectPaths): RoleWorktrees {
  return spec.git === null ? new RoleWorktrees(paths, spec.workspace) : new RemoteRoleWorktrees(paths, spec.git.remote);
}
