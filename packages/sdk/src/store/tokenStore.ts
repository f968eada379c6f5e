/**
 * The token store (SPEC §8): one file per sign-in, `<dataDir>/auth/<projectId>/<key>.json`, where `key` is
 * a hash of the resource (the service URL); the file names the resource (as shown: no query values) and the
 * authorization server (`issuer`) that issued its tokens, so a sign-in is keyed by project, issuer and
 * resource. Files are 0600 in 0700 directories, written atomically, read without following a link; the data
 * dir is hidden from sandboxed services, so no service reads them. A refresh holds `<key>.json.lock`
 * (a lock a dead holder does not keep), so two processes never refresh the same sign-in at once.
 */
import { createHash } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SdkError } from '../errors.js';
import { makePrivateDir } from '../fileModes.js';
import { writeJsonAtomic } from './atomicFile.js';
import type { RecordFile } from '../schemas/recordFile.js';
import { withFileLock } from './fileLock.js';
import { readPlainFile } from './plainFile.js';
import { checkProjectId } from './projectId.js';

/** Milliseconds a refresh waits for another process's refresh of the same sign-in: 60,000 (60 s). */
export const SIGN_IN_LOCK_TIMEOUT_MS = 60_000;

/** One stored sign-in's file. */
export type TokenStoreFile = RecordFile;

/** The directory of a project's sign-ins. */
export function tokenStoreDir(dataDir: string, projectId: string): string {
  return join(dataDir, 'auth', checkProjectId(projectId));
}

/** The store key of a resource URL: its origin, path and query, hashed (the query may hold a secret). */
export function resourceKey(url: string): string {
  let canonical = url;
  try {
    const parsed = new URL(url);
    canonical = `${parsed.origin}${parsed.pathname}${parsed.search}`;
  } catch {
    // an invalid URL has no sign-in to find; hashed as given
  }
  return createHash('sha256').update(canonical).digest('hex').slice(0, 40);
}

/** The sign-in file of `url` in `projectId`. */
export function tokenStoreFile(dataDir: string, projectId: string, url: string): TokenStoreFile {
  const path = join(tokenStoreDir(dataDir, projectId), `${resourceKey(url)}.json`);
  return {
    path,
    read: () => readRecord(path),
    write: (record) => writeJsonAtomic(path, record),
    remove: async () => {
      await rm(path, { force: true });
    },
    withLock: async (fn) => {
      await makePrivateDir(dirname(path));
      return withFileLock(`${path}.lock`, fn, { timeoutMs: SIGN_IN_LOCK_TIMEOUT_MS });
    },
  };
}

/** Every sign-in file of `projectId` (path and parsed record), for `auth status`. */
export async function listTokenStoreFiles(
  dataDir: string,
  projectId: string,
): Promise<Array<{ path: string; record: unknown }>> {
  const dir = tokenStoreDir(dataDir, projectId);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new SdkError('io_error', `could not read ${dir}: ${(error as Error).message}`, { data: { path: dir } });
  }
  const found: Array<{ path: string; record: unknown }> = [];
  for (const name of names.sort()) {
    if (!/^[0-9a-f]{40}\.json$/.test(name)) continue;
    const path = join(dir, name);
    const record = await readRecord(path);
    if (record !== undefined) found.push({ path, record });
  }
  return found;
}

async function readRecord(path: string): Promise<unknown> {
  const text = await readPlainFile(path);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new SdkError('io_error', `the sign-in file ${path} is not valid JSON`, {
      remedy: `remove it and sign in again (scienceevolve auth logout, then auth login)`,
      data: { path },
    });
  }
}
