/**
 * The time a service start may take: the caller's deadline and/or abort signal, as one AbortSignal and a
 * number of milliseconds left for each request. The invocation layer owns the 35-second total (SPEC §5.5).
 */
import { timerMs } from '../workflow/durations.js';

/** Milliseconds a start may take when the caller gives no deadline: 35,000. */
export const DEFAULT_STARTUP_BUDGET_MS = 35_000;

/** The budget of one start: when it runs out or the caller aborts, {@link StartBudget.signal} aborts. */
export class StartBudget {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly detach: (() => void) | undefined;
  /** Absolute end of the budget in epoch milliseconds (`Date.now()` scale). */
  readonly deadline: number;
  /** Milliseconds the budget had at creation. */
  readonly totalMs: number;
  /** `deadline` when the budget ran out, `cancelled` when the caller's signal aborted. */
  reason: 'deadline' | 'cancelled' | undefined;

  /**
   * @param options.deadline absolute epoch milliseconds; default now + {@link DEFAULT_STARTUP_BUDGET_MS}
   * @param options.signal the caller's abort; an abort whose reason is a `TimeoutError` counts as the
   *   deadline passing
   */
  constructor(options: { deadline?: number | undefined; signal?: AbortSignal | undefined }) {
    const now = Date.now();
    // Without a deadline the default budget still bounds the start: a signal alone may never fire.
    this.deadline = options.deadline ?? now + DEFAULT_STARTUP_BUDGET_MS;
    this.totalMs = this.deadline - now;
    const signal = options.signal;
    if (signal !== undefined) {
      const onAbort = () => this.abort(isTimeoutReason(signal.reason) ? 'deadline' : 'cancelled');
      if (signal.aborted) onAbort();
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        this.detach = () => signal.removeEventListener('abort', onAbort);
      }
    }
    if (!this.controller.signal.aborted) {
      const ms = this.deadline - now;
      if (ms <= 0) this.abort('deadline');
      // Unref'd: a budget never keeps the host alive by itself; whoever awaits the start holds other handles.
      else this.timer = setTimeout(() => this.abort('deadline'), timerMs(ms)).unref();
    }
  }

  /** Aborts when the budget runs out or the caller aborts. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Milliseconds left (at least 1, so it can be given as a request timeout). */
  remainingMs(): number {
    return Math.max(1, this.deadline - Date.now());
  }

  /** Stops the timer and forgets the caller's signal. */
  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.detach?.();
  }

  private abort(reason: 'deadline' | 'cancelled'): void {
    if (this.controller.signal.aborted) return;
    this.reason = reason;
    this.controller.abort(new Error(reason === 'deadline' ? 'startup budget ran out' : 'start was cancelled'));
  }
}

function isTimeoutReason(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError';
}
