/**
 * Fair starts under load (the admission gate): a stdio service's start — its process loading its runtime
 * and SDK, then the handshake and listing, the CPU-heavy part of a service's life — runs only when the
 * gate admits it. The gate admits `capacity` starts at once (default: the machine's cores) and queues the
 * rest in arrival order, so a burst of invocations waits its turn instead of thrashing the machine until
 * every start runs out of budget together. A start's budget counts from its admission; the time it
 * queued is reported apart, and a separate, larger queue limit ends a hopeless wait with a coded error.
 */
import { availableParallelism } from 'node:os';
import { SdkError } from '../errors.js';
import { MAX_DURATION_MS } from '../workflow/durations.js';

/** Default of {@link StartGateOptions.queueLimitMs}: 300,000 ms (5 minutes). */
export const DEFAULT_START_QUEUE_LIMIT_MS = 300_000;

/** One admitted start: release its place when the start has ended (ready or failed). */
export interface Admission {
  /** Milliseconds the start waited in the queue (0 when admitted at once). */
  readonly queuedMs: number;
  /** Gives the place to the next start in the queue. Idempotent. */
  release(): void;
}

/** Options of one wait at the gate. */
export interface AdmitOptions {
  /** Aborts the wait (the start is cancelled before anything was launched). */
  signal?: AbortSignal;
  /** Milliseconds the start may wait in the queue before it fails with `start_queue_timeout`. Default 300,000. */
  queueLimitMs?: number;
  /** Names the waiting start in the error (`service "x" of invocation y`). */
  what?: string;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The admission gate. The SDK uses one per process ({@link sharedStartGate}) unless given its own. */
export class StartGate {
  /** How many starts may run at once. */
  readonly capacity: number;
  private running = 0;
  private readonly queue: Waiter[] = [];

  /** @param capacity - starts admitted at once, an integer ≥ 1; default the machine's cores */
  constructor(capacity: number = availableParallelism()) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new SdkError('usage', `the start gate's capacity must be a whole number ≥ 1, not ${capacity}`, {
        remedy: 'pass maxConcurrentStarts as an integer of at least 1, or leave it out for the number of cores',
        data: { option: 'maxConcurrentStarts' },
      });
    }
    this.capacity = capacity;
  }

  /** Starts running now. */
  get active(): number {
    return this.running;
  }

  /** Starts waiting now. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Waits for a place (in arrival order) and takes it.
   *
   * @throws SdkError `start_queue_timeout` after `queueLimitMs` in the queue; the signal's reason when it aborts
   */
  async admit(options: AdmitOptions = {}): Promise<Admission> {
    const { signal } = options;
    signal?.throwIfAborted();
    const queuedAt = Date.now();
    if (this.running < this.capacity && this.queue.length === 0) {
      this.running++;
      return this.admission(0);
    }
    const limitMs = Math.min(Math.max(0, options.queueLimitMs ?? DEFAULT_START_QUEUE_LIMIT_MS), MAX_DURATION_MS);
    await new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
      };
      const waiter: Waiter = {
        resolve: () => {
          settle();
          resolve();
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      const onAbort = () => waiter.reject(signal?.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      // Referenced: a start waiting for its turn is work in progress (bounded by the queue limit).
      timer = setTimeout(() => waiter.reject(this.queueTimeout(options, limitMs)), limitMs);
      this.queue.push(waiter);
    });
    return this.admission(Date.now() - queuedAt);
  }

  private admission(queuedMs: number): Admission {
    let released = false;
    return {
      queuedMs,
      release: () => {
        if (released) return;
        released = true;
        // The place passes straight to the first waiter (running stays the same), or is freed.
        const next = this.queue[0];
        if (next !== undefined) next.resolve();
        else this.running--;
      },
    };
  }

  private queueTimeout(options: AdmitOptions, limitMs: number): SdkError {
    const what = options.what ?? 'a service start';
    return new SdkError(
      'start_queue_timeout',
      `${what} waited ${limitMs} ms for its turn to start (${this.capacity} starts at a time, ${this.running} running, ${this.queue.length} waiting) and gave up`,
      {
        remedy:
          'start fewer invocations at once, raise maxConcurrentStarts if the machine has room, or raise startQueueLimitMs',
        data: { queueLimitMs: limitMs, capacity: this.capacity },
      },
    );
  }
}

let shared: StartGate | undefined;

/** The process's gate (created at first use, sized to the machine's cores). */
export function sharedStartGate(): StartGate {
  shared ??= new StartGate();
  return shared;
}
