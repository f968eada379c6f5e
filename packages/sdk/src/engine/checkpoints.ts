/**
 * Invocation checkpoints (SPEC §10.3): what a harness saved after its last completed step, in
 * `runs/<runId>/checkpoints/<invocationId>.json` beside the run's record. A retried attempt and a resumed
 * invocation continue from it, so tool calls whose results were recorded are not run again. The states saved
 * after the file was written are appended to a log beside it (`<invocationId>.log`, `checkpointLog.ts`);
 * {@link readCheckpointFile} reads the two as one.
 */
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { SdkError } from '../errors.js';
import { type CheckpointFile, CheckpointFileSchema } from '../schemas/checkpoints.js';
import { type RecordSource, notJsonError, parseRecord, recordError } from '../schemas/parseRecord.js';
import { appendLine, closeLog, createEmptyLog, createLog } from '../store/appendLog.js';
import { writeFileAtomic } from '../store/atomicFile.js';
import {
  checkpointLogPath,
  fileDigest,
  logHeader,
  logRecord,
  readLogBytes,
  replayCheckpointLog,
} from './checkpointLog.js';
import type { ProjectPaths } from '../store/projectStore.js';

export type { CheckpointFile } from '../schemas/checkpoints.js';

/** `runs/<runId>/checkpoints/<invocationId>.json`. */
export function checkpointPath(paths: ProjectPaths, runId: string, invocationId: string): string {
  return join(paths.runDir(runId), 'checkpoints', `${invocationId}.json`);
}

/** A save waiting for its write: the file's text, the state's, and whether it must go to the file. */
interface PendingWrite {
  write: Promise<void>;
  /** The whole file (`CheckpointFileSchema`, one line of JSON). */
  file: string;
  /** The state's JSON text. */
  state: string;
  attempt: number;
  savedAt: string;
  /** Written to the file itself ({@link CheckpointWriter.save}), not appended to the log. */
  whole: boolean;
}

/** A log is folded into the file once it is larger than this (bytes) and {@link FOLD_RATIO} × the state. */
const FOLD_MIN_BYTES = 1 << 20;
/** … and larger than this many times the state's JSON text. */
const FOLD_RATIO = 2;

/**
 * Writes an invocation's checkpoints one after the other, so what is on disk always reads as the latest
 * durable state even when a harness saves again before the previous write finished. A state is serialized
 * when {@link CheckpointWriter.save} or {@link CheckpointWriter.append} is called; saves made while a write
 * is in progress share the one write queued behind it (the newest state wins), so a harness that saves
 * faster than the disk syncs never builds a backlog.
 *
 * Two ways to write: {@link CheckpointWriter.save} writes the checkpoint file itself (atomically: a new
 * file, synced, renamed over it, the directory synced); {@link CheckpointWriter.append} — what the engine
 * hands a harness — writes the file only for the writer's first save, then appends each state to the log
 * beside it (`checkpointLog.ts`: one synced write), and folds the log into the file again when
 * it grows past twice the state (and 1 MiB). {@link readCheckpointFile} reads the two back as one.
 */
export class CheckpointWriter {
  private queue: Promise<void> = Promise.resolve();
  /** The write queued behind the one in progress, not started yet. */
  private next: PendingWrite | undefined;
  /** The file text of the last state handed to {@link save} or {@link append}. */
  private last: string | undefined;
  /** The open log: its descriptor, its size in bytes, and the state text of its last record (none yet: undefined). */
  private log: { fd: number; bytes: number; state: string | undefined } | undefined;
  /** sha256 of the file as this writer last wrote it: what its log continues. */
  private base: string | undefined;
  /**
   * Whether this writer's own log may be beside the file. A log of an earlier attempt is left to the first
   * log this writer creates (which replaces it) or to the end of the attempt: it continues another file,
   * so a reader ignores it.
   */
  private logMayExist = false;
  private closed = false;
  /** The log beside the file (`<invocationId>.log`). */
  readonly logPath: string;

  constructor(
    readonly path: string,
    private readonly owner: Omit<CheckpointFile, 'format' | 'savedAt' | 'state' | 'attempt'>,
  ) {
    this.logPath = checkpointLogPath(path);
  }

  /**
   * Saves `state` for `attempt` in the checkpoint file itself (atomically): serialized now (later changes to
   * the object are not saved); resolves once this state, or a newer one, is durable. Throws
   * `invalid_checkpoint` for a state that is not JSON.
   */
  save(attempt: number, state: unknown): Promise<void> {
    return this.enqueue(attempt, state, true);
  }

  /**
   * Saves `state` for `attempt` as {@link save} does, but appended to the checkpoint's log after the
   * writer's first save (which writes the file): one synced write a save. Resolves once this
   * state, or a newer one, is durable; what is read back ({@link readCheckpointFile}) is then this state or
   * a newer one.
   */
  append(attempt: number, state: unknown): Promise<void> {
    return this.enqueue(attempt, state, false);
  }

  /**
   * Waits for the writes in progress and closes the log. A save after it writes the file itself. Never
   * throws (a write's failure was its save's).
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    await this.dropLog();
  }

  private enqueue(attempt: number, state: unknown, whole: boolean): Promise<void> {
    let text: string | undefined;
    try {
      text = JSON.stringify(state);
    } catch (error) {
      return Promise.reject(notJson(this.owner.invocation, error));
    }
    if (text === undefined) return Promise.reject(notJson(this.owner.invocation, undefined));
    const savedAt = new Date().toISOString();
    const head: Omit<CheckpointFile, 'state'> = { format: 1, ...this.owner, attempt, savedAt };
    // The state's JSON is spliced in as serialized: one serialization per save, however long the state.
    const file = `${JSON.stringify(head).slice(0, -1)},"state":${text}}\n`;
    this.last = file;
    const queued = this.next;
    if (queued !== undefined) {
      Object.assign(queued, { file, state: text, attempt, savedAt, whole: queued.whole || whole });
      return queued.write;
    }
    const next = { file, state: text, attempt, savedAt, whole } as PendingWrite;
    next.write = this.queue.then((): Promise<void> => {
      this.next = undefined;
      return this.flush(next);
    });
    this.next = next;
    this.queue = next.write.catch(() => {});
    return next.write;
  }

  /** Writes one pending save: to the file, a new log, or the end of the open log. */
  private async flush(pending: PendingWrite): Promise<void> {
    if (pending.whole || this.closed || this.base === undefined) return this.writeFile(pending);
    if (this.log?.bytes === 0) {
      // The log created empty with the file: its header and first record in one synced write.
      const bytes = Buffer.concat([
        logHeader(this.base),
        logRecord(undefined, pending.state, pending.attempt, pending.savedAt),
      ]);
      await this.appendToLog(this.log, bytes, pending.state);
      return;
    }
    if (this.log === undefined) {
      // The log's first record holds the whole state: the log is read without the file's state.
      const bytes = Buffer.concat([
        logHeader(this.base),
        logRecord(undefined, pending.state, pending.attempt, pending.savedAt),
      ]);
      this.logMayExist = true;
      const fd = await createLog(this.logPath, bytes);
      this.log = { fd, bytes: bytes.length, state: pending.state };
      return;
    }
    const line = logRecord(this.log.state, pending.state, pending.attempt, pending.savedAt);
    if (this.log.bytes + line.length > Math.max(FOLD_MIN_BYTES, FOLD_RATIO * pending.state.length)) {
      return this.writeFile(pending);
    }
    await this.appendToLog(this.log, line, pending.state);
  }

  /** Appends `bytes` (holding `state` last) to the open log, synced. */
  private async appendToLog(log: NonNullable<CheckpointWriter['log']>, bytes: Buffer, state: string): Promise<void> {
    try {
      await appendLine(this.logPath, log.fd, bytes);
    } catch (error) {
      // Part of the line may be in the log: never append after it. The next save writes the file again.
      this.base = undefined;
      await this.dropLog();
      throw error;
    }
    log.bytes += bytes.length;
    log.state = state;
  }

  /**
   * Writes the whole checkpoint file; then the log beside it, which continued the file as it was, is stale
   * (a reader ignores it: it names the old file's digest), and this writer's own log is removed — after the
   * file is durable, so a crash in between still reads the newest state.
   */
  private async writeFile(pending: PendingWrite): Promise<void> {
    const bytes = Buffer.from(pending.file, 'utf8');
    // An appending writer's first file, with no log beside it (a fresh invocation): the log is created
    // empty now, so the file's directory sync makes its entry durable too and the next save is a plain
    // append. Not when a log is there: it may hold durable states until the new file is in place.
    const empty =
      !pending.whole && !this.closed && this.log === undefined && !this.logMayExist
        ? await createEmptyLog(this.logPath)
        : undefined;
    try {
      await writeFileAtomic(this.path, bytes);
    } catch (error) {
      // An empty log holds nothing: left for the next file write (which removes it) or the attempt's end.
      if (empty !== undefined) {
        this.logMayExist = true;
        await closeLog(empty);
      }
      throw error;
    }
    this.base = this.closed ? undefined : fileDigest(bytes);
    await this.dropLog();
    if (this.logMayExist) {
      this.logMayExist = false;
      await unlink(this.logPath).catch(() => {});
    }
    if (empty !== undefined) {
      this.log = { fd: empty, bytes: 0, state: undefined };
      this.logMayExist = true;
    }
  }

  /** Closes the open log, if any. */
  private async dropLog(): Promise<void> {
    const log = this.log;
    this.log = undefined;
    if (log !== undefined) await closeLog(log.fd);
  }

  /**
   * The whole file of the last state handed to {@link CheckpointWriter.save} or {@link CheckpointWriter.append}
   * (written, being written, or appended to the log), or undefined before the first save.
   */
  latest(): CheckpointFile | undefined {
    return this.last === undefined ? undefined : (JSON.parse(this.last) as CheckpointFile);
  }
}

function notJson(invocation: string, cause: unknown): SdkError {
  return new SdkError(
    'invalid_checkpoint',
    `the harness of invocation ${invocation} saved a checkpoint that is not JSON`,
    {
      remedy: 'a harness checkpoints plain JSON data (objects, arrays, strings, numbers, booleans, null)',
      data: { invocation },
      cause,
    },
  );
}

/** Where a checkpoint file came from, for its errors. */
function checkpointSource(path: string, invocationId: string): RecordSource {
  return {
    file: path,
    code: 'invalid_checkpoint',
    what: `a checkpoint of invocation ${invocationId}`,
    subject: `the checkpoint ${path}`,
    remedy:
      'remove the file to continue the invocation from its start (its recorded tool calls then run again), or restore it',
    data: { invocation: invocationId },
  };
}

/**
 * The harness state a checkpoint file holds (`file` as read from `path`, or null when the invocation never
 * saved one: undefined). A file that is not a checkpoint of this run's invocation is an error
 * (`invalid_checkpoint` naming the file and the field, `CheckpointFileSchema`), never silently ignored.
 */
export function checkpointState(
  file: unknown,
  runId: string,
  invocationId: string,
  path: string,
): { state: unknown } | undefined {
  if (file === null || file === undefined) return undefined;
  const source = checkpointSource(path, invocationId);
  const parsed = parseRecord(CheckpointFileSchema, file, source);
  if (parsed.run !== runId) throw recordError(source, 'field "run" names another run');
  if (parsed.invocation !== invocationId) throw recordError(source, 'field "invocation" names another invocation');
  // A state of `undefined` would read as "no checkpoint": the key must be there (JSON has no undefined).
  if (!Object.hasOwn(file as object, 'state')) throw recordError(source, 'field "state" is missing');
  return { state: parsed.state };
}

/** `invalid_checkpoint` for the checkpoint file `path` of `invocation` that could not be read or is not JSON. */
export function damagedCheckpoint(path: string, invocation: string, cause: unknown): SdkError {
  const source = checkpointSource(path, invocation);
  const detail = cause instanceof Error ? cause.message : String(cause);
  const original = cause instanceof Error && cause.cause instanceof SyntaxError ? cause.cause : cause;
  if (original instanceof SyntaxError) return notJsonError(source, original.message, cause);
  return recordError(source, `it could not be read (${detail})`, cause);
}

/**
 * The checkpoint of an invocation as stored at `path`, its log applied ({@link replayCheckpointLog}): the
 * file's object with the state, attempt and time of the log's last record when the log continues this
 * file; undefined when the invocation never saved one. Not checked against `CheckpointFileSchema` (see
 * {@link checkpointState}). A file that cannot be read or is not JSON, or a damaged log, is
 * `invalid_checkpoint` naming the file.
 */
export async function readCheckpointFile(path: string, invocationId: string): Promise<unknown> {
  // The log before the file: a writer rewrites the file before it replaces or removes the log, so a read
  // racing it finds a log that continues the file it then reads, or one that is stale against it.
  const logPath = checkpointLogPath(path);
  // A log that cannot be read matters only beside a file.
  const log = await readLogBytes(logPath, invocationId).then(
    (read) => ({ read }),
    (error: unknown) => ({ error }),
  );
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw damagedCheckpoint(path, invocationId, new Error(`could not read ${path}: ${(error as Error).message}`));
  }
  let file: unknown;
  try {
    file = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw damagedCheckpoint(path, invocationId, error);
  }
  // A file that is not an object is refused by its schema; its log would not make it one.
  if (typeof file !== 'object' || file === null || Array.isArray(file)) return file;
  if ('error' in log) throw log.error;
  const logged =
    log.read === undefined ? undefined : replayCheckpointLog(log.read, fileDigest(bytes), logPath, invocationId);
  if (logged === undefined) return file;
  // Own data properties (a spread defines them, whatever their names): nothing reaches Object.prototype.
  return { ...file, attempt: logged.attempt, savedAt: logged.savedAt, state: logged.state };
}

/**
 * The invocation's last checkpoint state read from its file and log, or undefined when it never saved one;
 * a file that cannot be read, is not JSON or is not this invocation's checkpoint, or a damaged log, is
 * `invalid_checkpoint`.
 */
export async function readCheckpoint(
  paths: ProjectPaths,
  runId: string,
  invocationId: string,
): Promise<{ state: unknown } | undefined> {
  const path = checkpointPath(paths, runId, invocationId);
  return checkpointState(await readCheckpointFile(path, invocationId), runId, invocationId, path);
}
