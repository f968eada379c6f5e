/**
 * Atomic file writes: readers see the old content or the new, never a part. Written to a temporary file
 * in the same directory (a rename is atomic only within one file system), fsynced, renamed over the
 * target, then the directory fsynced so the rename itself survives a power cut.
 */
import { randomBytes } from 'node:crypto';
import { close, fchmod, fdatasync, fsync, open as openFd, write } from 'node:fs';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../fileModes.js';
import { SdkError } from '../errors.js';

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /**
   * The file's mode, set exactly (not narrowed by the umask) before any data is written, e.g. `0o600` for a
   * secret only its owner may read. Default: `PRIVATE_FILE_MODE` (0600, `fileModes.ts`) narrowed by the umask.
   */
  mode?: number;
}

/**
 * Writes `data` to `path` atomically, creating the directory. The data goes to a new file (never one that
 * exists, never through a symlink), so an existing file's wider mode never exposes it.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fd = await openNew(tmp, dir, options.mode ?? PRIVATE_FILE_MODE);
    try {
      if (options.mode !== undefined) await fchmodAsync(fd, options.mode);
      await writeAll(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
      // The file is new: fdatasync flushes its data and the size and blocks needed to read it back, which
      // is all a reader after a power cut needs (timestamps are not).
      await fdatasyncAsync(fd);
    } finally {
      await closeAsync(fd);
    }
    await rename(tmp, path);
  } catch (error) {
    // Best effort: the write's own error is the one to report (rm fails too when the directory is a file).
    await rm(tmp, { force: true }).catch(() => {});
    throw new SdkError('io_error', `could not write ${path}: ${(error as Error).message}`, {
      remedy: 'check that the data dir is writable and has free space',
      data: { path },
      cause: error,
    });
  }
  await syncDirectory(dir);
}

// Plain file descriptors, not `fs/promises` file handles: a frequent writer (a model loop writes its
// checkpoint every turn) spent more CPU creating and closing `FileHandle` objects than in the write itself.
const openAsync = promisify(openFd);
const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);
const fchmodAsync = promisify(fchmod);
const closeAsync = promisify(close);

/** Writes all of `bytes` at the descriptor's position (a write may take fewer bytes than given). */
async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.byteLength) {
    offset += (await writeAsync(fd, bytes, offset, bytes.byteLength - offset, null)).bytesWritten;
  }
}

/**
 * Opens a new file for writing, creating its directory only when it is missing (a `mkdir` on every write
 * cost a frequent writer, such as a model loop's checkpoints, more than the write itself).
 */
async function openNew(path: string, dir: string, mode: number): Promise<number> {
  try {
    return await openAsync(path, 'wx', mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await makePrivateDir(dir);
    return await openAsync(path, 'wx', mode);
  }
}

/** Writes `value` as pretty JSON atomically. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Reads a JSON file; `undefined` when it does not exist. */
export async function readJsonFile<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SdkError('io_error', `could not read ${path}: ${(error as Error).message}`, {
      data: { path },
      cause: error,
    });
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new SdkError('io_error', `${path} is not valid JSON: ${(error as Error).message}`, {
      remedy: 'restore the file from workflow/versions or remove the damaged data dir entry',
      data: { path },
      cause: error,
    });
  }
}

/** fsyncs a directory, so that renames and creations in it are durable. Best effort where not supported. */
export async function syncDirectory(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    fd = await openAsync(dir, 'r');
    await fsyncAsync(fd);
  } catch {
    // Some file systems refuse fsync on a directory (EINVAL/EISDIR); durability then rests on the FS.
  } finally {
    if (fd !== undefined) await closeAsync(fd).catch(() => {});
  }
}

/** Whether anything is at `path` (following links); false when it cannot be seen, for whatever reason. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The UTF-8 text of a file the user named (a workflow file, a script): `io_error` naming it as `what` with its
 * path and the reason when it cannot be read, with `remedy` as the fix.
 * @internal
 */
export async function readTextFile(path: string, what: string, remedy = 'check the path'): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new SdkError('io_error', `could not read the ${what} ${path}: ${(error as Error).message}`, {
      remedy,
      data: { path },
      cause: error,
    });
  }
}
