/** An async iterator over a run's public events: every event from the first, then each new one until the run ends. */
import type { RunEvent } from './runEvents.js';

/** A buffered, multi-reader stream of events. Each reader starts at the first event. */
export class EventStream implements AsyncIterable<RunEvent> {
  private readonly events: RunEvent[] = [];
  private readonly wakers = new Set<() => void>();
  private ended = false;

  /** Adds an event (ignored after {@link end}). */
  push(event: RunEvent): void {
    if (this.ended) return;
    this.events.push(event);
    this.wake();
  }

  /** Ends the stream: readers finish after the last event. Idempotent. */
  end(): void {
    this.ended = true;
    this.wake();
  }

  /** Every event so far. */
  get all(): readonly RunEvent[] {
    return this.events;
  }

  private wake(): void {
    for (const wake of [...this.wakers]) wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    let next = 0;
    for (;;) {
      while (next < this.events.length) yield this.events[next++]!;
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.wakers.delete(wake);
          resolve();
        };
        this.wakers.add(wake);
      });
    }
  }
}
