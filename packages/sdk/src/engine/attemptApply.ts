/**
 * The coordinator's side of the attempt seam (docs/decisions/attempt-seam.md): the {@link AttemptSpec} of
 * an invocation's next attempt is built from the run's record, and the {@link AttemptOutcome} that comes
 * back is applied to it — the same functions whether the attempt ran in this host (a function call, its
 * events replayed as they happen) or on a queue worker (a BullMQ job, its events replayed from the result).
 */
import { rm } from 'node:fs/promises';
import { mainProposedDigests } from '../invocation/sandboxPolicy.js';
import { isSdkError, toSdkError } from '../errors.js';
import { type RunEventInput, addUsage, emptyUsage } from '../events/runEvents.js';
import type { RunHarnesses } from '../harness/harnessFor.js';
import { ATTEMPT_FORMAT, type AttemptOutcome, type AttemptSpec } from '../schemas/attempt.js';
import { writeJsonAtomic } from '../store/atomicFile.js';
import type { ProjectPaths } from '../store/projectStore.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import { type AttemptResult, servicesIdOf } from './attempt.js';
import { checkpointLogPath } from './checkpointLog.js';
import { checkpointPath, damagedCheckpoint, readCheckpointFile } from './checkpoints.js';
import type { EngineOptions } from './engineOptions.js';
import { setInvocationState } from './invocationState.js';
import { journaledJson, journaledSteps } from './journaledSteps.js';
import { runGitRemote } from './remoteWorktrees.js';
import { type AttemptRecord, type InvocationRecord, type RunFile, type RunRecord, now } from './runRecord.js';
import { openTasks } from './taskResume.js';

/** Whether two object types are the same: the same keys, each assignable to the other. */
type Same<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? [keyof A] extends [keyof B]
      ? [keyof B] extends [keyof A]
        ? true
        : false
      : false
    : false
  : false;
/**
 * The invocation and attempt records an attempt spec and outcome carry are the run record's own
 * (engine/runRecord.ts): a field added to one and not the other fails to compile here.
 */
const recordsMatch: [
  Same<AttemptSpec['invocation'], InvocationRecord>,
  Same<AttemptSpec['invocation']['attempts'][number], AttemptRecord>,
] = [true, true];
void recordsMatch;

/** What building a spec and applying an outcome need of the engine of the run. */
export interface AttemptCoordinator {
  readonly paths: ProjectPaths;
  readonly file: RunFile;
  readonly record: RunRecord;
  readonly harnesses: RunHarnesses;
  readonly options: EngineOptions;
  /** Journals an event of the run. */
  emit(event: RunEventInput): void;
  /**
   * The run's journal as it is now, read once per spec: what it holds of the invocation's steps (a
   * checkpoint is checked against it) and the tasks accepted for it and never answered.
   */
  journalEvents(): Promise<readonly unknown[]>;
  /** The workflow version in force. */
  currentVersion(): Promise<WorkflowVersion>;
}

/** The spec of the next attempt, with the version it names; or why it cannot be built. */
export type BuiltSpec =
  | { spec: AttemptSpec; version: WorkflowVersion; unreadable?: undefined }
  /** The invocation's checkpoint file cannot be read: the next attempt would read the same file. */
  | { spec?: undefined; version: WorkflowVersion; unreadable: unknown };

/** The spec of `invocation`'s next attempt, from the run's record, checkpoint, journal and version. */
export async function buildAttemptSpec(
  host: AttemptCoordinator,
  invocation: InvocationRecord,
  restarted: boolean,
): Promise<BuiltSpec> {
  const version = await host.currentVersion();
  const run = host.record.run;
  const path = checkpointPath(host.paths, run, invocation.id);
  let checkpoint: unknown = null;
  const events = await host.journalEvents();
  let journaled = { responses: [] as string[], calls: [] as { callId: string; tool: string; resultDigest: string }[] };
  try {
    // The file as it is, its log applied: the runner checks that it is this invocation's before its harness
    // reads it.
    checkpoint = (await readCheckpointFile(path, invocation.id)) ?? null;
    if (checkpoint !== null) journaled = journaledJson(journaledSteps(events, invocation.id));
  } catch (error) {
    const coded = isSdkError(error) && error.code === 'invalid_checkpoint';
    return { version, unreadable: coded ? error : damagedCheckpoint(path, invocation.id, error) };
  }
  const options = host.options;
  return {
    version,
    spec: {
      format: ATTEMPT_FORMAT,
      run,
      project: host.record.project,
      workspace: host.record.workspace,
      invocation: structuredClone(invocation),
      restarted,
      version: { version: version.version, digests: { ...version.digests }, workflow: version.workflow },
      mainProposed: [...(await mainProposedDigests(host.paths, version))],
      checkpoint,
      journaled,
      openTasks: openTasks(events, invocation.id),
      script: host.harnesses.script ?? null,
      positions: host.harnesses.scripted?.snapshot() ?? null,
      git: version.workflow.orchestration.git ? { remote: await runGitRemote(host.record.workspace) } : null,
      options: {
        ...(options.startupBudgetMs === undefined ? {} : { startupBudgetMs: options.startupBudgetMs }),
        ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
        ...(options.forwardTimeoutMs === undefined ? {} : { forwardTimeoutMs: options.forwardTimeoutMs }),
      },
    },
  };
}

/**
 * The attempt as the run's record shows it while it runs (replaced by the outcome's when it ends):
 * `runtimePath` where its runner keeps its copies ('' when that is another machine, filled in at the end).
 */
export function startedAttempt(
  invocation: InvocationRecord,
  version: WorkflowVersion,
  restarted: boolean,
  runtimePath: string,
  queue?: { job: string; workers: string[] },
): AttemptRecord {
  const number = invocation.attempts.length + 1;
  return {
    attempt: number,
    servicesId: servicesIdOf(invocation.id, number),
    runtimePath,
    version: version.version,
    restarted,
    startedAt: now(),
    finishedAt: null,
    outcome: null,
    error: null,
    ...(queue === undefined ? {} : { queue }),
  };
}

/** An attempt whose checkpoint cannot be read fails, not retried (the next would read the same file). */
export async function failUnreadable(
  host: AttemptCoordinator,
  attempt: AttemptRecord,
  unreadable: unknown,
): Promise<AttemptResult> {
  attempt.outcome = 'failed';
  attempt.finishedAt = now();
  attempt.error = toSdkError(unreadable, 'invalid_checkpoint').toJSON();
  await host.file.save();
  return { attempt, retryable: false };
}

/**
 * Replays one event of an attempt into the run: journaled, and what it changes of the record changed —
 * the invocation's state through the one state setter, its checkpoint's path, its and the run's usage.
 * Returns whether the record changed (the caller saves it).
 */
export function replayAttemptEvent(
  host: AttemptCoordinator,
  invocation: InvocationRecord,
  event: RunEventInput,
): boolean {
  switch (event.type) {
    case 'invocation.state': {
      const before = invocation.state;
      // The transition as its runner made it (its time), journaled by the one setter.
      setInvocationState(invocation, event.to, (e) => host.emit({ ...e, time: event.time }));
      return invocation.state !== before;
    }
    case 'invocation.checkpoint':
      host.emit(event);
      if (invocation.checkpoint === checkpointPath(host.paths, host.record.run, invocation.id)) return false;
      invocation.checkpoint = checkpointPath(host.paths, host.record.run, invocation.id);
      return true;
    case 'model.called':
      invocation.usage ??= emptyUsage();
      host.record.usage ??= emptyUsage();
      addUsage(invocation.usage, event.usage);
      addUsage(host.record.usage, event.usage);
      host.emit(event);
      return true;
    default:
      host.emit(event);
      return false;
  }
}

/**
 * Applies an attempt's outcome to its invocation: its events (unless they were replayed as they
 * happened), its attempt record in place of `started`, its state, workspace, Git result and output, its
 * checkpoint (written to the run's checkpoint file), and the scripted harness's position it holds.
 * The usage of its model calls came with its `model.called` events.
 */
export async function applyAttemptOutcome(
  host: AttemptCoordinator,
  invocation: InvocationRecord,
  started: AttemptRecord,
  outcome: AttemptOutcome,
  replayed: boolean,
  queue?: { job: string; workers: string[] },
): Promise<AttemptResult> {
  if (!replayed) for (const event of outcome.events) replayAttemptEvent(host, invocation, event as RunEventInput);
  const final: AttemptRecord = { ...outcome.attempt, ...(queue === undefined ? {} : { queue }) };
  const index = invocation.attempts.indexOf(started);
  if (index === -1) invocation.attempts.push(final);
  else invocation.attempts[index] = final;
  setInvocationState(invocation, outcome.state, (e) => host.emit(e));
  invocation.workspace = outcome.workspace;
  invocation.git = outcome.git;
  if (final.outcome === 'succeeded') invocation.output = outcome.output ?? '';
  if (outcome.checkpoint !== null) {
    const path = checkpointPath(host.paths, host.record.run, invocation.id);
    await writeJsonAtomic(path, outcome.checkpoint);
    // The file now holds the attempt's last state: the log beside it continued the file as it was (a
    // reader ignores it, by its base digest) and goes.
    await rm(checkpointLogPath(path), { force: true }).catch(() => {});
    invocation.checkpoint = path;
    // The scripted harness's position is in its checkpoint, like any harness's state.
    if (final.outcome === 'succeeded') host.harnesses.settle(invocation.agent, outcome.checkpoint.state);
  }
  await host.file.save();
  return { attempt: final, retryable: outcome.retryable };
}
