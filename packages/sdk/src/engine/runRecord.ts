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
import { type RecordSource, notJsonError, parseRecord, recordError } from '../schemas/parseRecord.js';
import { isPathId } from '../schemas/pathId.js';
import { type CorruptRun, type RunRecord, RunRecordSchema } from '../schemas/runRecord.js';
import type { RunStatus } from '../schemas/states.js';
import { writeFileAtomic } from '../store/atomicFile.js';
import type { ProjectPaths } from '../store/projectStore.js';

// The record's types are its schema's (`schemas/runRecord.ts`): one source for the writer, the reader and
// the documentation.
export type { AttemptRecord, CorruptRun, InvocationRecord, RunRecord } from '../schemas/runRecord.js';
export type { ErrorRecord, UsageTotals } from '../schemas/records.js';
export type { InvocationState, RunStatus } from '../schemas/states.js';

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

/**
 * Reads one run's record; undefined when there is none. A file that is not JSON (a truncated write by
 * anything but the SDK, whose writes are atomic) or not a run record of this run (checked against
 * `RunRecordSchema`) throws `store_tampered` naming the run, the file and the field.
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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw notJsonError(runSource(path, runId, undefined), `${(error as Error).message}; ${text.length} characters`);
  }
  const source = runSource(path, runId, value);
  const record = parseRecord(RunRecordSchema, value, source);
  if (record.run !== runId) throw recordError(source, `field "run" names another run`);
  return record;
}

/** Where a run record is read from, and its damage as `store_tampered`. */
function runSource(path: string, runId: string, value: unknown): RecordSource {
  const invocations = (value as { invocations?: unknown } | null)?.invocations;
  const of = Array.isArray(invocations) ? ` of ${invocations.length}` : '';
  return {
    file: path,
    code: 'store_tampered',
    what: `the record of run ${runId}`,
    subject: `run ${runId}: ${path}`,
    remedy: 'restore the file from a backup, or remove the run directory if the run is not needed',
    data: { run: runId },
    // An invocation entry is named by its place too: `invocation 2 of 3 (field "invocations.1.state")`.
    field: (at) =>
      at[0] === 'invocations' && typeof at[1] === 'number'
        ? `invocation ${at[1] + 1}${of} (field "${at.map(String).join('.')}")`
        : at.length === 0
          ? 'the document'
          : `field "${at.map(String).join('.')}"`,
  };
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
    if (!isPathId(name)) {
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
