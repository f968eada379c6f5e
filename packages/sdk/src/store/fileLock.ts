/**
 * A lock file that a dead holder does not keep. The lock is created with its content in one step (a
 * temporary file hard-linked to the lock's name, which fails if the name exists), so a lock file is never
 * seen empty. A waiter that finds the holder gone (or its pid reused by another process) takes the lock
 * over under a second, short-lived guard file, re-checking under the guard, so that two waiters that both
 * judged the same lock stale cannot both remove it (the second would remove the first's live lock).
 * Release removes the lock only while it is still this holder's.
 */
import { randomBytes } from 'node:crypto';
import { link, open, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { PRIVATE_FILE_MODE } from '../fileModes.js';
import { processStartTime } from '@scienceevolve/supervisor/procfs';
import { SdkError } from '../errors.js';
import { LockHolderSchema } from '../schemas/store.js';

/** Options of {@link withFileLock}. */
export interface FileLockOptions {
  /** Milliseconds to wait for a live holder before giving up. Default 30,000. */
  timeoutMs?: number;
  /** Milliseconds between tries. Default 10. */
  pollMs?: number;
}

/** Milliseconds after which a takeover guard is itself taken for a crashed waiter's: 5,000. */
const GUARD_STALE_MS = 5000;

/** Runs `fn` holding the lock at `path`. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const me = JSON.stringify({
    pid: process.pid,
    start: processStartTime(process.pid) ?? '',
    nonce: randomBytes(8).toString('hex'),
  });
  for (;;) {
    if (await tryCreate(path, me)) break;
    if (await holderIsGone(path)) {
      await takeOver(path);
      continue;
    }
    if (Date.now() > deadline) {
      throw new SdkError('io_error', `timed out waiting for the lock ${path}`, {
        remedy: 'another process holds it; wait for it to finish, or remove the file if no such process exists',
        data: { path },
      });
    }
    await sleep(options.pollMs ?? 10);
  }
  try {
    return await fn();
  } finally {
    // Only our own lock: never a lock someone else holds now.
    if ((await readFile(path, 'utf8').catch(() => undefined)) === me) await rm(path, { force: true });
  }
}

/** Creates the lock with `content` in one step; false when it exists. */
async function tryCreate(path: string, content: string): Promise<boolean> {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
  try {
    await link(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Removes a stale lock under the takeover guard, after checking again that it is still stale. */
async function takeOver(path: string): Promise<void> {
  const guard = `${path}.takeover`;
  try {
    const handle = await open(guard, 'wx', PRIVATE_FILE_MODE);
    await handle.close();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another waiter is taking over; a guard left by a waiter that crashed meanwhile expires.
    const age = await stat(guard).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > GUARD_STALE_MS) await rm(guard, { force: true });
    await sleep(5);
    return;
  }
  try {
    if (await holderIsGone(path)) await rm(path, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

async function holderIsGone(path: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return false; // removed meanwhile: try to take it again
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Locks are created with their content in one step, so this is not ours to understand: a damaged file.
    return true;
  }
  const parsed = LockHolderSchema.safeParse(value);
  if (!parsed.success) return true;
  const holder = parsed.data;
  const start = processStartTime(holder.pid);
  return start === undefined || (holder.start !== undefined && holder.start !== '' && start !== holder.start);
}
