/** Small helpers for lifecycles: running every cleanup step, and waiting with a cap. */
import { timerMs } from '../workflow/durations.js';

/** Runs every step in order, each even when an earlier one threw; resolves with what was thrown. */
export async function runEach(steps: readonly (() => unknown)[]): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      errors.push(error);
    }
  }
  return errors;
}

/**
 * Resolves when `promise` settles or after `ms` milliseconds, whichever is first; never rejects. The timer
 * is cleared as soon as the promise wins, and is not unref'd: callers await it inside a stop.
 */
export async function raceDelay(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timerMs(ms));
    }),
  ]);
  if (timer !== undefined) clearTimeout(timer);
}
