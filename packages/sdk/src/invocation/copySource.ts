/**
 * The per-invocation copy of a persistent source (SPEC §5.2): services execute from the copy, never from
 * the persistent version. Copy-on-write clones where the file system has them (`COPYFILE_FICLONE` falls
 * back to a plain copy elsewhere).
 */
import { constants } from 'node:fs';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { makePrivateDir } from '../fileModes.js';
import { SdkError } from '../errors.js';

/** Copies the tree at `from` to `to` (which must not exist yet). */
export async function copySource(from: string, to: string): Promise<void> {
  try {
    await copyTree(from, to);
  } catch (error) {
    throw new SdkError('io_error', `could not copy the service source ${from} to ${to}: ${(error as Error).message}`, {
      remedy: 'check that the data dir is readable, writable and has free space',
      data: { from, to },
      cause: error,
    });
  }
}

async function copyTree(from: string, to: string): Promise<void> {
  await makePrivateDir(to);
  const entries = await readdir(from, { withFileTypes: true });
  // Files of one directory are copied concurrently: for many small files the per-file latency dominates.
  await Promise.all(
    entries.map((entry) => {
      const source = join(from, entry.name);
      const target = join(to, entry.name);
      if (entry.isDirectory()) return copyTree(source, target);
      return copyFile(source, target, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    }),
  );
}
