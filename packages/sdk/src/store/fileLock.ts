/**
 * A lock file that a dead holder does not keep: created with O_EXCL holding the holder's pid and start
 * time; a waiter that finds the holder gone (or the pid reused by another process) removes it and tries
 * again.
 */
import { open, readFile, rm, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { processStartTime } from '@scienceevolve/supervisor/protocol';
import { SdkError } from '../errors.js';

/** Options of {@link withFileLock}. */
export interface FileLockOptions {
  /** Milliseconds to wait for a live holder before giving up. Default 30,000. */
  timeoutMs?: number;
  /** Milliseconds between tries. Default 10. */
  pollMs?: number;
}

/** Runs `fn` holding the lock at `path`. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const me = JSON.stringify({ pid: process.pid, start: processStartTime(process.pid) ?? '' });
  for (;;) {
    try {
      const handle = await open(path, 'wx', 0o644);
      try {
        await handle.writeFile(me);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await holderIsGone(path)) {
        await rm(path, { force: true });
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
  }
  try {
    return await fn();
  } finally {
    await rm(path, { force: true });
  }
}

async function holderIsGone(path: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return false; // removed meanwhile: try to take it again
  }
  let holder: { pid?: number; start?: string };
  try {
    holder = JSON.parse(text) as { pid?: number; start?: string };
  } catch {
    // Created but not yet filled, or torn by a crash between open and write: held unless a second old.
    try {
      return Date.now() - (await stat(path)).mtimeMs > 1000;
    } catch {
      return false;
    }
  }
  if (typeof holder.pid !== 'number') return true;
  const start = processStartTime(holder.pid);
  return start === undefined || (holder.start !== undefined && holder.start !== '' && start !== holder.start);
}
