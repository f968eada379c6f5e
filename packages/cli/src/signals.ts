/** Waiting for SIGINT/SIGTERM (or a time) so a command can collect what it started before it exits. */

/** A wait that ends on SIGINT, SIGTERM or SIGHUP. */
export interface SignalWait {
  /** Resolves on a signal, or after `ms` milliseconds when given. */
  wait(ms?: number): Promise<void>;
  /** The signal received, if any. */
  readonly signal: NodeJS.Signals | undefined;
  /** Removes the handlers. */
  dispose(): void;
}

/**
 * Installs handlers at once, so a signal that arrives while services are still starting is not lost: the
 * command finishes starting, then collects and exits instead of dying with its services up.
 */
export function untilSignal(): SignalWait {
  let received: NodeJS.Signals | undefined;
  const waiters = new Set<() => void>();
  const handler = (signal: NodeJS.Signals) => {
    received = signal;
    for (const w of waiters) w();
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, handler);
  return {
    get signal() {
      return received;
    },
    wait(ms?: number) {
      if (received !== undefined) return Promise.resolve();
      return new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const done = () => {
          if (timer) clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        waiters.add(done);
        if (ms !== undefined) timer = setTimeout(done, ms);
      });
    },
    dispose() {
      for (const s of signals) process.off(s, handler);
      for (const w of waiters) w();
    },
  };
}
