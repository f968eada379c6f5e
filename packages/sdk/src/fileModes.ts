/**
 * The one owner of how the SDK creates files and directories in the data dir (and its own log
 * directories): files 0600, directories 0700 — the user's alone, since a run's journal, checkpoints and
 * logs hold tool results — and a file is never created by opening a path something else could have
 * planted: the last component is never followed (`O_NOFOLLOW`). Data-dir files are written by rename of a
 * new temporary file (`store/atomicFile.ts`), appended with {@link openAppendSync}, or, for logs that start
 * empty, made with {@link openFreshSync}. See docs/data-dir.md ("Permissions").
 */
import { chmodSync, closeSync, constants, lstatSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { SdkError } from './errors.js';

/** Mode of every file the SDK creates in the data dir: 0600 (read and write for the owner only). */
export const PRIVATE_FILE_MODE = 0o600;

/** Mode of every directory the SDK creates in the data dir: 0700. */
export const PRIVATE_DIR_MODE = 0o700;

/** Creates `dir` and its missing parents, each 0700 (existing ones are left as they are). */
export async function makePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** {@link makePrivateDir}, synchronously. */
export function makePrivateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Narrows an existing directory of ours to 0700 when it is wider and owned by this user (a data dir made
 * before this rule, or by hand); anything else is left. Never throws.
 */
export async function tightenDir(dir: string): Promise<void> {
  try {
    const info = await stat(dir);
    const uid = process.getuid?.();
    if (info.isDirectory() && (uid === undefined || info.uid === uid) && (info.mode & 0o077) !== 0) {
      await chmod(dir, PRIVATE_DIR_MODE);
    }
  } catch {
    // Not ours to fix, or gone: the caller's next step reports a real problem.
  }
}

/** {@link tightenDir}, synchronously. */
export function tightenDirSync(dir: string): void {
  try {
    const info = statSync(dir);
    const uid = process.getuid?.();
    if (info.isDirectory() && (uid === undefined || info.uid === uid) && (info.mode & 0o077) !== 0) {
      chmodSync(dir, PRIVATE_DIR_MODE);
    }
  } catch {
    // As above.
  }
}

const NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Opens `path` as a new, empty 0600 file for writing (a log that starts empty each time). Whatever is at
 * the path is removed first, never followed: a planted symlink is unlinked (its target untouched), a
 * planted file replaced. `O_CREAT | O_EXCL | O_NOFOLLOW`, so a link planted between the removal and the
 * open is never written through: the open fails and is tried again (3 times), then `io_error`.
 */
export function openFreshSync(path: string): number {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return openSync(path, NEW, PRIVATE_FILE_MODE);
    } catch (error) {
      last = error;
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') break;
      try {
        if (lstatSync(path).isDirectory()) break;
        unlinkSync(path);
      } catch (removal) {
        if ((removal as NodeJS.ErrnoException).code !== 'ENOENT') {
          last = removal;
          break;
        }
      }
    }
  }
  throw new SdkError('io_error', `could not create ${path}: ${(last as Error).message}`, {
    remedy: 'remove what is at that path (a directory, or a file this user may not remove) and run again',
    data: { path },
    cause: last,
  });
}

/**
 * Opens `path` for appending, creating it 0600 when missing. A symlink at the path is refused (`ELOOP`,
 * reported as `io_error`), never followed: a journal is never appended to another file.
 */
export function openAppendSync(path: string): number {
  try {
    return openSync(
      path,
      constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
      PRIVATE_FILE_MODE,
    );
  } catch (error) {
    const link = (error as NodeJS.ErrnoException).code === 'ELOOP';
    throw new SdkError(
      'io_error',
      `could not append to ${path}: ${link ? 'it is a symbolic link' : (error as Error).message}`,
      {
        remedy: link
          ? 'something replaced the file with a link; remove the link (the file it points to was not touched)'
          : 'check that the data dir is writable and has free space',
        data: { path },
        cause: error,
      },
    );
  }
}

/** Closes `fd`, ignoring errors (teardown). */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed.
  }
}
