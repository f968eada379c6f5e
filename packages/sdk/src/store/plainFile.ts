/**
 * The one way to open a file of a run's folder for reading. A run's folder is writable by the services the
 * run started, so a journal or a log there may have been replaced by a symlink (to a file outside the data
 * dir) or a FIFO (whose open would block the reader). The viewer and the journal's reader go through
 * {@link openPlainFile}: no symlink is followed, a FIFO does not block the open, and the handle is checked to
 * be a plain file (and, when the caller looked at the path before, the very file it looked at).
 */
import { constants, type Stats } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

/** A plain file opened for reading, with what the handle (not the path) says of it. @internal */
export interface PlainFile {
  handle: FileHandle;
  info: Stats;
}

/**
 * Opens `path` read-only without following a symlink in its last component and without blocking on a FIFO,
 * then checks the handle: a plain file, and the same file as `sameAs` (device and inode) when given.
 * Resolves undefined when the path is missing, a symlink, not a plain file, or another file than `sameAs`;
 * the caller closes the handle.
 * @internal
 */
export async function openPlainFile(path: string, sameAs?: Pick<Stats, 'dev' | 'ino'>): Promise<PlainFile | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    // ENOENT, ELOOP (a symlink), EACCES: nothing the viewer may read.
    return undefined;
  }
  const info = await handle.stat().catch(() => undefined);
  if (
    info === undefined ||
    !info.isFile() ||
    (sameAs !== undefined && (info.ino !== sameAs.ino || info.dev !== sameAs.dev))
  ) {
    await handle.close().catch(() => {});
    return undefined;
  }
  return { handle, info };
}

/** The whole text of `path` when {@link openPlainFile} opens it, else undefined. @internal */
export async function readPlainFile(path: string): Promise<string | undefined> {
  const file = await openPlainFile(path);
  if (file === undefined) return undefined;
  try {
    return await file.handle.readFile('utf8');
  } finally {
    await file.handle.close();
  }
}
