/**
 * The one owner of how the SDK creates files and directories in the data dir (and its own log
 * directories): files 0600, directories 0700 — the user's alone, since a run's journal, checkpoints and
 * logs hold tool results — and a file is never created by opening a path something else could have
 * planted: the last component is never followed (`O_NOFOLLOW`). Data-dir files are written by rename of a
 * new temporary file (`store/atomicFile.ts`), appended with {@link openAppendSync}, or, for logs that start
 * empty, made with {@link openFreshSync}. See docs/data-dir.md ("Permissions").
 */
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  statSync,
  statfsSync,
  unlinkSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import { chmod, stat } from 'node:fs/promises';
import { SdkError } from './errors.js';

/** Mode of every file the SDK creates in the data dir: 0600 (read and write for the owner only). */
export const PRIVATE_FILE_MODE = 0o600;

/** Mode of every directory the SDK creates in the data dir: 0700. */
export const PRIVATE_DIR_MODE = 0o700;

/**
 * Creates `dir` and its missing parents, each 0700 (existing ones are left as they are). Bounded: see
 * {@link makeDirs}. Throws `io_error` naming the path and the fix.
 */
export async function makePrivateDir(dir: string): Promise<void> {
  // Fast path: a directory that exists (most calls) costs one stat.
  if ((await stat(dir).catch(() => undefined))?.isDirectory()) return;
  makeDirs(dir, PRIVATE_DIR_MODE);
}

/** {@link makePrivateDir}, synchronously. */
export function makePrivateDirSync(dir: string): void {
  makeDirs(dir, PRIVATE_DIR_MODE);
}

/** Levels of missing directories {@link makeDirs} creates at most in one call: 64. */
export const MAX_NEW_DIR_LEVELS = 64;

/**
 * `statfs` types of pseudo-filesystems, which cannot hold a data dir, a workspace or a log: proc, sysfs,
 * cgroup (v1 and v2), debugfs, tracefs, securityfs, devpts, bpf, configfs, pstore, efivarfs, selinuxfs,
 * binfmt_misc, mqueue, fusectl, nsfs.
 */
const PSEUDO_FS_TYPES = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x1cd1, 'devpts'],
  [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'],
  [0x6165676c, 'pstore'],
  [0xde5e81e4, 'efivarfs'],
  [0xf97cff8c, 'selinuxfs'],
  [0x42494e4d, 'binfmt_misc'],
  [0x19800202, 'mqueue'],
  [0x65735543, 'fusectl'],
  [0x6e736673, 'nsfs'],
]);

/** The pseudo-filesystem `path` (an existing path) sits on, by its `statfs` type or its place (`/proc`, `/sys`). */
export function pseudoFilesystemOf(path: string): string | undefined {
  const absolute = resolve(path);
  for (const root of ['/proc', '/sys']) {
    if (absolute === root || absolute.startsWith(`${root}/`)) return root === '/proc' ? 'proc' : 'sysfs';
  }
  try {
    return PSEUDO_FS_TYPES.get(Number(statfsSync(absolute).type));
  } catch {
    return undefined;
  }
}

/** An `io_error` for a directory that could not be made: what is wrong with which path, and the fix. */
function dirError(dir: string, at: string, error: unknown): SdkError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'EACCES' || code === 'EPERM'
      ? `this user may not create ${at} (${code}: permission denied)`
      : code === 'EEXIST' || code === 'ENOTDIR'
        ? `${at} is a file, not a directory (${code})`
        : code === 'EROFS'
          ? `${at} is on a read-only file system (EROFS)`
          : code === 'ENOSPC'
            ? `the file system of ${at} is full (ENOSPC)`
            : `${at}: ${(error as Error).message}`;
  const remedy =
    code === 'EACCES' || code === 'EPERM'
      ? `choose a directory this user may write (one under your home directory), or give this user write permission on ${dirname(at)}`
      : code === 'EEXIST' || code === 'ENOTDIR'
        ? `remove or rename the file ${at}, or choose another directory`
        : code === 'ENOSPC'
          ? 'free space on that file system, or choose a directory on another one'
          : 'choose a directory on a writable disk';
  return new SdkError('io_error', `could not create the directory ${dir}: ${why}`, {
    remedy,
    data: { path: dir, at, ...(code === undefined ? {} : { errno: code }) },
    cause: error,
  });
}

/**
 * Creates `dir` and its missing parents with `mode`, one level at a time and never more than
 * {@link MAX_NEW_DIR_LEVELS} levels: Node's own recursive `mkdir` loops for ever under `/proc` (the kernel
 * answers ENOENT for the child of a directory that exists, so it makes the parent again and again). A
 * missing directory under a pseudo-filesystem ({@link pseudoFilesystemOf}) is refused at once; a file in the
 * way, a directory this user may not write, a read-only or full file system is `io_error` naming the path
 * and the fix.
 */
export function makeDirs(dir: string, mode = 0o777): void {
  const target = resolve(dir);
  const missing: string[] = [];
  let current = target;
  for (;;) {
    let info: ReturnType<typeof statSync> | undefined;
    try {
      info = statSync(current);
    } catch (error) {
      // ENOTDIR: a file further up is in the way; the walk up finds it and names it.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw dirError(target, current, error);
    }
    if (info !== undefined) {
      if (!info.isDirectory())
        throw dirError(target, current, Object.assign(new Error('not a directory'), { code: 'ENOTDIR' }));
      break;
    }
    missing.push(current);
    const parent = dirname(current);
    if (parent === current) break;
    if (missing.length > MAX_NEW_DIR_LEVELS) {
      throw new SdkError(
        'io_error',
        `could not create the directory ${target}: over ${MAX_NEW_DIR_LEVELS} of its levels are missing`,
        {
          remedy: 'create the parent directories first, or choose a shorter path',
          data: { path: target },
        },
      );
    }
    current = parent;
  }
  if (missing.length === 0) return;
  const pseudo = pseudoFilesystemOf(current);
  if (pseudo !== undefined) {
    throw new SdkError(
      'io_error',
      `could not create the directory ${target}: ${current} is on a pseudo-filesystem (${pseudo}), which cannot hold it`,
      {
        remedy: 'choose a directory on a real disk (one under your home directory)',
        data: { path: target, at: current, filesystem: pseudo },
      },
    );
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level, { mode });
    } catch (error) {
      // Made meanwhile by someone else: fine when it is a directory.
      if (
        (error as NodeJS.ErrnoException).code === 'EEXIST' &&
        statSync(level, { throwIfNoEntry: false })?.isDirectory()
      )
        continue;
      throw dirError(target, level, error);
    }
  }
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
 * Creates `path` as a new, empty 0600 file for writing, or returns undefined when anything is already there
 * (a file, a link, a directory: nothing is removed or followed) or it cannot be created. `flags`: more
 * `open(2)` flags, e.g. `O_DSYNC`.
 */
export function openNewSync(path: string, flags = 0): number | undefined {
  try {
    return openSync(path, NEW | flags, PRIVATE_FILE_MODE);
  } catch {
    return undefined;
  }
}

/**
 * Opens `path` as a new, empty 0600 file for writing (a log that starts empty each time). Whatever is at
 * the path is removed first, never followed: a planted symlink is unlinked (its target untouched), a
 * planted file replaced. `O_CREAT | O_EXCL | O_NOFOLLOW`, so a link planted between the removal and the
 * open is never written through: the open fails and is tried again (3 times), then `io_error`. `flags`:
 * more `open(2)` flags, e.g. `O_DSYNC`.
 */
export function openFreshSync(path: string, flags = 0): number {
  let last: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return openSync(path, NEW | flags, PRIVATE_FILE_MODE);
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

/** How {@link readPrivateFileSync} names a secret's file in its errors. */
export interface PrivateFileLabel {
  /** The file as a message names it: `the queue file /x`, `the client secret file /x of remote service "s"`. */
  subject: string;
  /** What the file holds, for the fixes: `the queue URL`, `the client secret`. */
  holds: string;
  /** Said after an insecure file's reason: why that matters (`it holds the queue's password`). Default none. */
  stakes?: string;
  /** Data of every error (`path` is always there). */
  data?: Record<string, unknown>;
}

/**
 * The text of a file that holds a secret (a queue URL with its password, a client secret, a private key):
 * opened without following a symbolic link and without blocking on a FIFO, checked on the open handle — a
 * regular file, owned by this process's user, no permission for group or others (0600 or stricter) — and
 * read, at most `maxBytes`. Errors name the file and the fix, never its content: `insecure_file` (a link,
 * not a regular file, another owner, a loose mode), `io_error` (it cannot be opened), `usage` (too long).
 */
export function readPrivateFileSync(path: string, maxBytes: number, label: PrivateFileLabel): string {
  const data = { ...label.data, path };
  const insecure = (why: string, fix: string) =>
    new SdkError('insecure_file', `${label.subject} ${why}${label.stakes === undefined ? '' : `; ${label.stakes}`}`, {
      remedy: fix,
      data,
    });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') {
      throw insecure('is a symbolic link (links are not followed)', 'name the file itself, not a link to it');
    }
    throw new SdkError('io_error', `${label.subject} cannot be opened (${code ?? (error as Error).message})`, {
      remedy:
        code === 'ENOENT' ? `write ${label.holds} into it, then chmod 600 it` : 'check the path and its permissions',
      data,
      cause: error,
    });
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw insecure('is not a regular file', `write ${label.holds} into a regular file (chmod 600)`);
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) {
      throw insecure(
        `is owned by uid ${info.uid}, not by this user (uid ${uid})`,
        `chown ${uid} ${path} && chmod 600 ${path}`,
      );
    }
    if ((info.mode & 0o077) !== 0) {
      const mode = (info.mode & 0o777).toString(8).padStart(4, '0');
      throw insecure(`has mode ${mode}: others than its owner may read or change it`, `chmod 600 ${path}`);
    }
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) {
        throw new SdkError('usage', `${label.subject} is longer than ${maxBytes} bytes`, {
          remedy: `it holds ${label.holds} only`,
          data,
        });
      }
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}
