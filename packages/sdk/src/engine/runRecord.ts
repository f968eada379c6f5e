/**
 * A run's durable state, `runs/<runId>/run.json` (SPEC §4, §10): written atomically before anything
 * depends on it and after every transition, so `status` and `resume` can read it at any moment.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isHostAlive } from '@scienceevolve/supervisor/protocol';
import { processStartTime } from '@scienceevolve/supervisor/procfs';
import { SdkError, toSdkError } from '../errors.js';
import { writeFileAtomic } from '../store/atomicFile.js';
import type { ErrorRecord, InvocationState, RunStatus, UsageTotals } from '../events/runEvents.js';
import type { ProjectPaths } from '../store/projectStore.js';

export type { ErrorRecord, InvocationState, RunStatus, UsageTotals } from '../events/runEvents.js';

/** One attempt of an invocation: its own services, its own runtime directory. */
export interface AttemptRecord {
  /** 1, 2, … across retries and resumes. */
  attempt: number;
  /** The id its services run under (the invocation id for the first attempt, `<id>-<n>` after). */
  servicesId: string;
  /** `runs/<runId>/invocations/<servicesId>`: the copies of the services and their stderr logs. */
  runtimePath: string;
  /** The accepted workflow version the attempt started. */
  version: number;
  /** True for an attempt started by `resume`. */
  restarted: boolean;
  startedAt: string;
  finishedAt: string | null;
  outcome: 'succeeded' | 'failed' | 'interrupted' | null;
  error: ErrorRecord | null;
  /** True when the attempt continued from the invocation's checkpoint. */
  fromCheckpoint?: boolean;
  /** Tool calls that reached the attempt's surface, as the engine counted them. */
  toolCalls?: number;
  /** Tool calls that reached the surface as the harness reported them (agent CLIs), or null when it did not say. */
  toolCallsReached?: number | null;
  /** Milliseconds the attempt's longest-waiting service start queued at the admission gate (absent: none). */
  startQueuedMs?: number;
  /**
   * Queue backend (`--queue`): the attempt's job and the queue workers that took it, in order (more than
   * one when a worker died and another took the job over). Absent for an attempt run in the host.
   */
  queue?: { job: string; workers: string[] };
}

/** One invocation (an agent working one task). */
export interface InvocationRecord {
  id: string;
  agent: string;
  /** The invocation that delegated this one (Main's), or null for Main's own. */
  parent: string | null;
  task: string;
  state: InvocationState;
  /** True when `resume` continued it (from its checkpoint when it had one, else from its start). */
  restarted: boolean;
  /** The directory it worked in (the shared workspace, or its role's worktree when Git-on). */
  workspace: string;
  /** Git-on: the role's branch and the commit made at the end of the invocation (null: nothing changed). */
  git: { branch: string; commit: string | null } | null;
  attempts: AttemptRecord[];
  startedAt: string;
  finishedAt: string | null;
  output: string | null;
  error: ErrorRecord | null;
  /** Usage of the invocation's model calls, across its attempts. */
  usage?: UsageTotals;
  /** `runs/<run>/checkpoints/<id>.json` once the harness saved a checkpoint, else null. */
  checkpoint?: string | null;
}

/** `run.json`. */
export interface RunRecord {
  format: 1;
  run: string;
  project: string;
  status: RunStatus;
  requirement: string;
  /** The absolute workspace. */
  workspace: string;
  /** The accepted version when the run started. */
  version: number;
  /** The run's copy of its script (`runs/<runId>/script.json`), or null. */
  script: string | null;
  /** The host working the run now (the last one for a finished run). */
  host: { pid: number; start: string };
  startedAt: string;
  finishedAt: string | null;
  /** Main's final answer. */
  output: string | null;
  error: ErrorRecord | null;
  /** How many times `resume` continued the run. */
  resumes: number;
  /** Usage of every model call of the run. */
  usage?: UsageTotals;
  /** The OpenTelemetry trace id of the run's latest host (started or resumed) when export was on. */
  traceId?: string;
  invocations: InvocationRecord[];
}

/** A new run id: time-ordered and unique. */
export function newRunId(): string {
  return `run-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/** `runs/<runId>/run.json`. */
export function runRecordPath(paths: ProjectPaths, runId: string): string {
  return join(paths.runDir(runId), 'run.json');
}

/** `runs/<runId>/events.jsonl`. */
export function runEventsPath(paths: ProjectPaths, runId: string): string {
  return join(paths.runDir(runId), 'events.jsonl');
}

/** A run whose `run.json` could not be read or is not a run record: `status` reports it, never skips it. */
export interface CorruptRun {
  /** The run id (its directory's name). */
  run: string;
  /** The damaged `run.json`. */
  path: string;
  /** What is wrong with it. */
  message: string;
}

const STATUSES: readonly string[] = ['running', 'succeeded', 'failed', 'cancelled', 'interrupted'];

/**
 * Reads one run's record; undefined when there is none. A file that is not JSON (a truncated write by
 * anything but the SDK, whose writes are atomic) or not a run record of this run throws `store_tampered`
 * naming the run and the file.
 */
export async function readRunRecord(paths: ProjectPaths, runId: string): Promise<RunRecord | undefined> {
  const path = runRecordPath(paths, runId);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SdkError('io_error', `could not read ${path} (run ${runId}): ${(error as Error).message}`, {
      remedy: 'check the permissions of the data dir',
      data: { path, run: runId },
      cause: error,
    });
  }
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (error) {
    throw damaged(path, runId, `is not valid JSON (${(error as Error).message}; ${text.length} characters)`);
  }
  const r = record as Partial<RunRecord>;
  const valid =
    typeof record === 'object' &&
    record !== null &&
    r.format === 1 &&
    r.run === runId &&
    typeof r.status === 'string' &&
    STATUSES.includes(r.status) &&
    Array.isArray(r.invocations) &&
    typeof r.host === 'object' &&
    r.host !== null &&
    typeof r.host.pid === 'number' &&
    typeof r.startedAt === 'string' &&
    typeof r.resumes === 'number';
  if (!valid) throw damaged(path, runId, `is not the record of run ${runId}`);
  // What status and resume read of each invocation: a damaged entry is reported here, not met as a crash.
  const invocations = r.invocations as unknown[];
  const bad = invocations.findIndex((i) => !validInvocation(i));
  if (bad >= 0)
    throw damaged(
      path,
      runId,
      `is damaged: invocation ${bad + 1} of ${invocations.length} is not an invocation record`,
    );
  return record as RunRecord;
}

const INVOCATION_STATES: readonly string[] = ['starting', 'running', 'succeeded', 'failed', 'interrupted'];

function validInvocation(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const i = value as Partial<InvocationRecord>;
  return (
    typeof i.id === 'string' &&
    typeof i.agent === 'string' &&
    typeof i.state === 'string' &&
    INVOCATION_STATES.includes(i.state) &&
    Array.isArray(i.attempts) &&
    i.attempts.every((a) => typeof a === 'object' && a !== null)
  );
}

function damaged(path: string, runId: string, what: string): SdkError {
  return new SdkError('store_tampered', `run ${runId}: ${path} ${what}`, {
    remedy: 'restore the file from a backup, or remove the run directory if the run is not needed',
    data: { path, run: runId },
  });
}

/** Every run of a project, oldest first, and the runs whose `run.json` is damaged. */
export async function listRunRecords(paths: ProjectPaths): Promise<{ records: RunRecord[]; corrupt: CorruptRun[] }> {
  let names: string[];
  try {
    names = await readdir(paths.runsDir);
  } catch {
    return { records: [], corrupt: [] };
  }
  const records: RunRecord[] = [];
  const corrupt: CorruptRun[] = [];
  for (const name of names.sort()) {
    // Only directory names the SDK makes are runs; another entry counts only when it holds a run.json.
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
      if (existsSync(join(paths.runsDir, name, 'run.json'))) {
        const path = join(paths.runsDir, name, 'run.json');
        corrupt.push({ run: name, path, message: `${path} is in a directory that is no run id` });
      }
      continue;
    }
    try {
      const record = await readRunRecord(paths, name);
      // A directory without run.json is not a run (a `services probe` or `serve` directory, or a run
      // being created).
      if (record !== undefined) records.push(record);
    } catch (error) {
      corrupt.push({ run: name, path: runRecordPath(paths, name), message: toSdkError(error).message });
    }
  }
  return { records, corrupt };
}

/** The status a reader should see: a `running` run whose host is gone is `interrupted`. */
export function effectiveStatus(record: RunRecord): RunStatus {
  if (record.status !== 'running') return record.status;
  return isHostAlive({ hostPid: record.host.pid, hostStart: record.host.start }) ? 'running' : 'interrupted';
}

/** Writes a run's record atomically; writes are queued so the file always holds the latest state. */
export class RunFile {
  private queue: Promise<void> = Promise.resolve();
  /** The write queued behind the one in progress, not started yet: later saves share it. */
  private next: Promise<void> | undefined;

  constructor(
    readonly path: string,
    readonly record: RunRecord,
  ) {}

  /**
   * Writes the record as it is now, or newer. Resolves when this state (or a later one) is on disk. Saves
   * made while a write is in progress share the one write queued behind it, which takes the record as it
   * is when it starts: a burst of saves costs two writes, not one each.
   */
  save(): Promise<void> {
    if (this.next !== undefined) return this.next;
    const write = this.queue.then(() => {
      this.next = undefined;
      return writeFileAtomic(this.path, `${JSON.stringify(this.record, null, 2)}\n`);
    });
    this.next = write;
    // The queue keeps going after a failed write; the callers of that save see the failure.
    this.queue = write.catch(() => {});
    return write;
  }
}

/** The current host as a run record names it: its pid and start time (a reused pid is not the same host). */
export function thisHost(): { pid: number; start: string } {
  return { pid: process.pid, start: processStartTime(process.pid) ?? '0' };
}

/** The time now, ISO 8601. */
export function now(): string {
  return new Date().toISOString();
}
