/**
 * An invocation's checkpoint log, `runs/<runId>/checkpoints/<invocationId>.log` beside its checkpoint file:
 * the states a harness saved since the file was last written, one appended record a save (one synced write,
 * no rename, no directory sync), each holding only what changed — the previous state's JSON
 * text is kept up to the first character that differs, and the rest is written. Its lines are framed and
 * checksummed by `store/appendLog.ts`; its first line names the digest of the file it continues
 * (`CheckpointLogHeaderSchema`), so a file rewritten since (folded by the writer, written by the end of the
 * attempt, restored or edited by hand) makes the log stale, and it is ignored. Why, and the order of the
 * writes: docs/decisions/checkpoint-writes.md.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  type CheckpointLogRecord,
  CheckpointLogHeaderSchema,
  CheckpointLogRecordSchema,
} from '../schemas/checkpoints.js';
import { type RecordSource, parseRecord, recordError } from '../schemas/parseRecord.js';
import { frameLine, splitLog } from '../store/appendLog.js';

/** The log beside the checkpoint file `path` (`<invocationId>.json` → `<invocationId>.log`). */
export function checkpointLogPath(path: string): string {
  return `${path.endsWith('.json') ? path.slice(0, -'.json'.length) : path}.log`;
}

/** sha256 (hex) of a checkpoint file's bytes: the base a log names. */
export function fileDigest(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The header line of a log continuing the file whose digest is `base`. */
export function logHeader(base: string): Buffer {
  return frameLine(JSON.stringify({ format: 1, base }));
}

/**
 * The record line of `state` (its JSON text) after `previous` (the state text of the log's last record, or
 * undefined for the first record, which then holds the whole state).
 */
export function logRecord(previous: string | undefined, state: string, attempt: number, savedAt: string): Buffer {
  const keep = previous === undefined ? 0 : commonPrefix(previous, state);
  // A state's JSON (JSON.stringify's) holds no tab or newline: the fields, a tab, the text.
  return frameLine(`{"keep":${keep},"attempt":${attempt},"savedAt":${JSON.stringify(savedAt)}}\t${state.slice(keep)}`);
}

/** Characters compared at once (natively) before the last, differing, chunk is searched one by one. */
const CHUNK = 1024;

/**
 * How many leading characters `b` shares with `a`, never ending between the two halves of a surrogate pair
 * (the text after it is written as UTF-8, which cannot hold half a pair).
 */
export function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i + CHUNK <= n && a.slice(i, i + CHUNK) === b.slice(i, i + CHUNK)) i += CHUNK;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i > 0 && i < b.length) {
    const code = b.charCodeAt(i - 1);
    if (code >= 0xd800 && code <= 0xdbff) i--;
  }
  return i;
}

/** The state a checkpoint log holds: its last record's state (parsed JSON), attempt and time. */
export interface LoggedState {
  state: unknown;
  attempt: number;
  savedAt: string;
  /** Records replayed. */
  records: number;
}

/** Where a log came from, for its errors. */
function logSource(path: string, invocation: string): RecordSource {
  return {
    file: path,
    code: 'invalid_checkpoint',
    what: `a checkpoint log of invocation ${invocation}`,
    subject: `the checkpoint log ${path}`,
    remedy:
      'remove the log to continue the invocation from its checkpoint file (the steps the log held then run again), or remove both to start it from its start, or restore the log',
    data: { invocation },
  };
}

/** The bytes of the log at `path`, or undefined when there is none; `invalid_checkpoint` when it cannot be read. */
export async function readLogBytes(path: string, invocation: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw recordError(logSource(path, invocation), `it could not be read (${(error as Error).message})`, error);
  }
}

/**
 * The state the log `bytes` (read from `path`) holds over the checkpoint file whose bytes have digest `base`;
 * undefined when it continues another file (stale), or holds no complete record (a torn tail is left out: it
 * was never reported durable; a whole header naming another file makes the log stale even when a record
 * after it is damaged). A log damaged before its last line, or whose records do not replay to JSON, is
 * `invalid_checkpoint` naming the log. The state is parsed by `JSON.parse` (own data properties only).
 */
export function replayCheckpointLog(
  bytes: Uint8Array,
  base: string,
  path: string,
  invocation: string,
): LoggedState | undefined {
  const source = logSource(path, invocation);
  const split = splitLog(bytes);
  const headerOf = (head: string) =>
    parseRecord(CheckpointLogHeaderSchema, parseJson(head, source, 'line 1'), {
      ...source,
      subject: `line 1 of the checkpoint log ${path}`,
      what: 'a checkpoint log header',
    });
  if (split.damaged !== undefined) {
    const { line, offset, problem } = split.damaged;
    // A whole header that names another file: none of the log applies, damaged or not (it is stale).
    const head = line > 0 ? splitLog(bytes.subarray(0, offset)).lines?.[0] : undefined;
    if (head !== undefined && headerOf(head).base !== base) return undefined;
    throw recordError(source, `line ${line + 1} (at byte ${offset}) is damaged: ${problem}`);
  }
  const [head, ...records] = split.lines;
  if (head === undefined) return undefined;
  const header = headerOf(head);
  if (header.base !== base) return undefined;
  if (records.length === 0) return undefined;
  const text = new Rope();
  let last: CheckpointLogRecord | undefined;
  for (const [index, line] of records.entries()) {
    const where = `line ${index + 2}`;
    const tab = line.indexOf('\t');
    if (tab === -1) throw recordError(source, `${where} is not a record (no tab after its fields)`);
    const record = parseRecord(CheckpointLogRecordSchema, parseJson(line.slice(0, tab), source, where), {
      ...source,
      subject: `${where} of the checkpoint log ${path}`,
      what: 'a checkpoint log record',
    });
    if (record.keep > text.length) {
      throw recordError(source, `${where} keeps ${record.keep} characters of a state of ${text.length}`);
    }
    text.cut(record.keep);
    text.push(line.slice(tab + 1));
    last = record;
  }
  let state: unknown;
  try {
    state = JSON.parse(text.toString());
  } catch (error) {
    throw recordError(
      source,
      `its ${records.length} records do not give a JSON state (${(error as Error).message})`,
      error,
    );
  }
  return { state, attempt: last!.attempt, savedAt: last!.savedAt, records: records.length };
}

function parseJson(text: string, source: RecordSource, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw recordError(source, `${where} is not JSON (${(error as Error).message})`, error);
  }
}

/**
 * A text built by cutting its end and appending (what replaying a log does): pieces kept apart, so a cut
 * near the end costs what it removes, not the whole text.
 */
class Rope {
  private readonly pieces: string[] = [];
  length = 0;

  cut(keep: number): void {
    while (this.length > keep) {
      const last = this.pieces.pop() as string;
      this.length -= last.length;
      if (this.length < keep) {
        this.pieces.push(last.slice(0, keep - this.length));
        this.length = keep;
      }
    }
  }

  push(piece: string): void {
    if (piece === '') return;
    this.pieces.push(piece);
    this.length += piece.length;
  }

  toString(): string {
    return this.pieces.join('');
  }
}
