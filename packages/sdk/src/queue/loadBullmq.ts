/**
 * BullMQ, loaded on first use. It and ioredis (which BullMQ connects with) are optional dependencies of the
 * SDK (docs/decisions/optional-dependencies.md): without them, everything but the Redis queue works, and the
 * queue stops with `missing_dependency` naming the packages to install.
 */
import { missingDependency } from '../errors.js';

/** BullMQ's module; `missing_dependency` when it or ioredis is not installed. */
export async function loadBullmq(): Promise<typeof import('bullmq')> {
  try {
    return await import('bullmq');
  } catch (error) {
    throw (
      missingDependency(error, ['bullmq', 'ioredis'], 'the Redis queue (run --queue, resume --queue, worker)') ?? error
    );
  }
}
