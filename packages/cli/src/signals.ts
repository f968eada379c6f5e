/**
 * Waiting for SIGINT/SIGTERM (or a time) so a command can collect what it started before it exits — and a
 * bound on that wait: a signal always ends the CLI. Once a command has been told to stop, it gets
 * {@link FORCE_EXIT_AFTER_MS} to collect and return; a further signal ends it at once. What it leaves
 * running then is its supervisor's to collect (services carry the supervisor's marker).
 */
import { constants } from 'node:os';

/** The signals a command waits for. */
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Milliseconds a command has, after the first signal, to collect what it started and return before the
 * CLI exits anyway: 30,000 (a service's grace and kill wait are 2 s + 5 s by default).
 */
export const FORCE_EXIT_AFTER_MS = 30_000;

/** Options of {@link untilSignal}. */
export interface SignalWaitOptions {
  /**
   * The signal, counted from the first one the process received, that exits at once: default 2 (a second
   * Ctrl-C or SIGTERM). The queue worker gives 3: its first signal drains, its second hands the jobs back.
   */
  exitOnSignal?: number;
  /**
   * Milliseconds after the first signal before the CLI exits anyway; `null` for no bound (the worker, whose
   * drain waits for the jobs in hand). Default {@link FORCE_EXIT_AFTER_MS}.
   */
  exitAfterMs?: number | null;
}

/** A wait that ends on SIGINT, SIGTERM or SIGHUP. */
export interface SignalWait {
  /** Resolves on a signal, or after `ms` milliseconds when given. */
  wait(ms?: number): Promise<void>;
  /** The signal received, if any. */
  readonly signal: NodeJS.Signals | undefined;
  /** Removes the handlers. */
  dispose(): void;
}

/** The exit code of a process ended by `signal`: 128 + its number (130 for SIGINT, 143 for SIGTERM). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 15);
}

/** Every live wait, told of each signal by the one process listener. */
const waits = new Set<{ receive(signal: NodeJS.Signals): void; options: Required<SignalWaitOptions> }>();
let received = 0;
let forceTimer: NodeJS.Timeout | undefined;

function exitNow(signal: NodeJS.Signals, why: string): never {
  process.stderr.write(`${why}: exiting now (what is left running is collected by the supervisor)\n`);
  process.exit(signalExitCode(signal));
}

/** The one listener of each signal: counts it, ends the CLI when the live waits' bounds say so, tells the waits. */
function onSignal(signal: NodeJS.Signals): void {
  received += 1;
  const bounds = [...waits].map((w) => w.options);
  const exitOn = Math.min(...bounds.map((b) => b.exitOnSignal));
  if (received >= exitOn) exitNow(signal, `received ${signal} again`);
  if (received === 1 && forceTimer === undefined) {
    const limits = bounds.map((b) => b.exitAfterMs);
    if (!limits.includes(null)) {
      const ms = Math.min(...(limits as number[]));
      // Unref'd: a command that returns in time exits normally.
      forceTimer = setTimeout(() => exitNow(signal, `still not stopped ${ms} ms after ${signal}`), ms).unref();
    }
  }
  for (const w of waits) w.receive(signal);
}

/**
 * Installs handlers at once, so a signal that arrives while services are still starting is not lost: the
 * command finishes starting, then collects and exits instead of dying with its services up — within
 * `exitAfterMs` of the first signal, and at once on the `exitOnSignal`-th (see {@link SignalWaitOptions}).
 */
export function untilSignal(options: SignalWaitOptions = {}): SignalWait {
  let got: NodeJS.Signals | undefined;
  const waiters = new Set<() => void>();
  const entry = {
    options: {
      exitOnSignal: options.exitOnSignal ?? 2,
      exitAfterMs: options.exitAfterMs === undefined ? FORCE_EXIT_AFTER_MS : options.exitAfterMs,
    },
    receive(signal: NodeJS.Signals) {
      got = signal;
      for (const w of waiters) w();
    },
  };
  if (waits.size === 0) for (const s of SIGNALS) process.on(s, onSignal);
  waits.add(entry);
  return {
    get signal() {
      return got;
    },
    wait(ms?: number) {
      if (got !== undefined) return Promise.resolve();
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
      if (waits.delete(entry) && waits.size === 0) for (const s of SIGNALS) process.off(s, onSignal);
      for (const w of waiters) w();
    },
  };
}
