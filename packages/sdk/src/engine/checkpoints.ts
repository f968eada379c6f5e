/**
 * Invocation checkpoints (SPEC §10.3): what a harness saved after its last completed step, in
 * `runs/<runId>/checkpoints/<invocationId>.json` beside the run's record. A retried attempt and a resumed
 * invocation continue from it, so tool calls whose results were recorded are not run again.
 */
import { join } from 'node:path';
import { SdkError } from '../errors.js';
import { type CheckpointFile, CheckpointFileSchema } from '../schemas/checkpoints.js';
import { type RecordSource, notJsonError, parseRecord, recordError } from '../schemas/parseRecord.js';
import { readJsonFile, writeFileAtomic } from '../store/atomicFile.js';
import type { ProjectPaths } from '../store/projectStore.js';

export type { CheckpointFile } from '../schemas/checkpoints.js';

/** `runs/<runId>/checkpoints/<invocationId>.json`. */
export function checkpointPath(paths: ProjectPaths, runId: string, invocationId: string): string {
  return join(paths.runDir(runId), 'checkpoints', `${invocationId}.json`);
}

/**
 * Writes an invocation's checkpoints one after the other (each atomically), so the file always holds the
 * latest state even when a harness saves again before the previous write finished. A state is serialized
 * when {@link CheckpointWriter.save} is called; saves made while a write is in progress share the one write
 * queued behind it (the newest state wins), so a harness that saves faster than the disk syncs never
 * builds a backlog.
 */
export class CheckpointWriter {
  private queue: Promise<void> = Promise.resolve();
  /** The write queued behind the one in progress, not started yet, and the text it will write. */
  private next: { write: Promise<void>; text: string } | undefined;
  /** The text of the last state handed to {@link save}. */
  private last: string | undefined;

  constructor(
    readonly path: string,
    private readonly owner: Omit<CheckpointFile, 'format' | 'savedAt' | 'state' | 'attempt'>,
  ) {}

  /**
   * Saves `state` for `attempt`: serialized now (later changes to the object are not saved); resolves once
   * this state, or a newer one, is durable. Throws `invalid_checkpoint` for a state that is not JSON.
   */
  save(attempt: number, state: unknown): Promise<void> {
    let text: string | undefined;
    try {
      text = JSON.stringify(state);
    } catch (error) {
      return Promise.reject(notJson(this.owner.invocation, error));
    }
    if (text === undefined) return Promise.reject(notJson(this.owner.invocation, undefined));
    const head: Omit<CheckpointFile, 'state'> = {
      format: 1,
      ...this.owner,
      attempt,
      savedAt: new Date().toISOString(),
    };
    // The state's JSON is spliced in as serialized: one serialization per save, however long the state.
    const file = `${JSON.stringify(head).slice(0, -1)},"state":${text}}\n`;
    this.last = file;
    if (this.next !== undefined) {
      this.next.text = file;
      return this.next.write;
    }
    const next = { text: file } as { text: string; write: Promise<void> };
    next.write = this.queue.then((): Promise<void> => {
      this.next = undefined;
      return writeFileAtomic(this.path, next.text);
    });
    this.next = next;
    this.queue = next.write.catch(() => {});
    return next.write;
  }

  /** The file the last {@link CheckpointWriter.save} wrote (or is writing), or undefined before the first save. */
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
 * The invocation's last checkpoint state read from its file, or undefined when it never saved one; a file
 * that cannot be read, is not JSON or is not this invocation's checkpoint is `invalid_checkpoint`.
 */
export async function readCheckpoint(
  paths: ProjectPaths,
  runId: string,
  invocationId: string,
): Promise<{ state: unknown } | undefined> {
  const path = checkpointPath(paths, runId, invocationId);
  let file: unknown;
  try {
    file = await readJsonFile<unknown>(path);
  } catch (error) {
    throw damagedCheckpoint(path, invocationId, error);
  }
  return checkpointState(file, runId, invocationId, path);
}
