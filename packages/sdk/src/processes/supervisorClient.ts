/**
 * The host's side of supervision (SPEC §6): starts the supervisor process, tells it of every marker and
 * process group the service runtime uses, and replaces it within milliseconds if it dies, so that a host
 * crash (SIGKILL included) never leaves a service running.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { CgroupRef } from '@scienceevolve/supervisor/cgroup';
import { MARKER_ENV } from '@scienceevolve/supervisor/procfs';
import { type HostMessage, isSupervisorMessage, type SupervisorMessage } from '@scienceevolve/supervisor/protocol';
import { DEFAULT_GRACE_MS } from '@scienceevolve/supervisor/terminate';
import { SdkError } from '../errors.js';
import type { ProcessRegistry } from './processRegistry.js';
import { defaultSupervisorEntry } from './supervisorEntry.js';
import { timerMs } from '../workflow/durations.js';

/** Options of {@link SupervisorClient.start}. */
export interface SupervisorClientOptions {
  /** The supervisor's log file, in the data dir (its directory is created). The supervisor never writes to a terminal. */
  logPath: string;
  /** Milliseconds between SIGTERM and SIGKILL when the supervisor collects. Default {@link DEFAULT_GRACE_MS} (2,000). */
  graceMs?: number;
  /** Milliseconds a supervisor has to answer a start or an `intent` before it is taken for hung and replaced. Default 5000. */
  ackTimeoutMs?: number;
  /** Supervisor restarts allowed within {@link restartWindowMs} before the client gives up (`supervisor_failed`). Default 5. */
  maxRestarts?: number;
  /** Milliseconds of the window in which {@link maxRestarts} is counted. Default 10,000. */
  restartWindowMs?: number;
  /** Receives every lifecycle event, for the host's log. Must not throw. */
  onEvent?: (event: SupervisorEvent) => void;
  /** The supervisor's entry file. Default: {@link defaultSupervisorEntry}. */
  entry?: string;
  /**
   * A supervisor process forked ahead with {@link forkSupervisor} (same entry), taken as the first
   * generation when it is still alive and connected; otherwise a new one is forked. Nothing of the host's
   * state reaches it before the start (hello, then the state, then the sync), as with a fresh fork.
   */
  adopt?: ChildProcess;
}

/**
 * Forks a supervisor process and sends it nothing: a client adopts it (`adopt`) and sends the hello and the
 * host's state. Detached in a session of its own, stdio ignored, one IPC channel, and unref'd both ways (the
 * host never waits for it): a supervisor that is never adopted exits when the host does, having recorded
 * nothing. Throws when the system refuses the fork.
 */
export function forkSupervisor(entry: string = defaultSupervisorEntry()): ChildProcess {
  const env = { ...process.env };
  // The supervisor must not look like a service of this host (or of a host that started this one).
  delete env[MARKER_ENV];
  const child = fork(entry, [], {
    // detached: the child calls setsid(), leaving the host's session and process group, so the host's
    // terminal signals (Ctrl-C, hang-up) and a kill(-hostPgid) do not reach the supervisor.
    detached: true,
    // No stdio to a terminal; the IPC channel is the only link, and its closing is the signal.
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    // The host may run under tsx or --inspect; the supervisor is plain built JavaScript.
    execArgv: [],
    env,
    // The supervisor outlives the host: it must not pin a directory the host may delete.
    cwd: '/',
    serialization: 'json',
  });
  // Unref'd both ways: the host's event loop must not wait for the supervisor (it is meant to outlive
  // the host) nor for the channel; while an ack is awaited the channel is ref'd again (#request).
  child.unref();
  child.channel?.unref();
  // Until a client adopts it, a failed kill or send must not become an uncaught exception.
  child.on('error', () => {});
  return child;
}

/** What happened to the supervisor, for the host's log. */
export type SupervisorEvent =
  /** A supervisor was started (`generation` 1 is the first; later ones replace one that died). */
  | { type: 'started'; pid: number; generation: number }
  /** A supervisor answered and holds the host's whole state. */
  | { type: 'ready'; pid: number; generation: number; markers: number; groups: number }
  /** The supervisor died or its channel closed while the host still needed it. */
  | { type: 'lost'; pid: number | undefined; exitCode: number | null; signal: NodeJS.Signals | null }
  /** The client gave up: supervisors kept dying, or one never answered. */
  | { type: 'failed'; error: SdkError }
  /** {@link SupervisorClient.close} ended supervision. */
  | { type: 'closed' };

/**
 * The client's life.
 * - `starting`: a supervisor was forked and has not yet confirmed the host's whole state;
 * - `ready`: the supervisor holds every marker and group;
 * - `failed`: supervisors kept dying (or hung); every `intent` rejects with `supervisor_failed`;
 * - `closed`: {@link SupervisorClient.close} was called.
 */
export type SupervisorClientState = 'starting' | 'ready' | 'failed' | 'closed';

/** Rejects an ack that a dead supervisor will never send; `intent` retries on the next supervisor. */
class SupervisorLost extends Error {}

interface Pending {
  child: ChildProcess;
  resolve: () => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * The host's handle on its supervisor, and the {@link ProcessRegistry} the service runtime reports to.
 *
 * Use: `const supervisor = await SupervisorClient.start({ logPath })` once per host process, before the
 * first service; then for each service `await supervisor.intent(marker)` before spawning it,
 * `supervisor.register(pgid, marker)` right after the spawn, `supervisor.release(pgid)` once the host
 * collected the group itself, `supervisor.releaseMarker(marker)` when the invocation is over, and
 * `await supervisor.close()` at an orderly end. The supervisor and its channel are unref'd: the host exits
 * normally without calling `close()`, and the supervisor then collects whatever is still registered.
 */
export class SupervisorClient implements ProcessRegistry {
  readonly #options: Required<Omit<SupervisorClientOptions, 'onEvent' | 'entry' | 'adopt'>> & {
    entry: string;
    onEvent: (event: SupervisorEvent) => void;
  };
  #state: SupervisorClientState = 'starting';
  #child: ChildProcess | undefined;
  #generation = 0;
  /** Resolves when the current supervisor holds the whole state; rejects with `supervisor_failed`. */
  #ready: Promise<void> = Promise.resolve();
  #failure: SdkError | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #markers = new Set<string>();
  readonly #groups = new Map<number, string>();
  /** Service cgroups announced with each marker, re-sent to a replacement supervisor. */
  readonly #cgroups = new Map<string, CgroupRef[]>();
  readonly #startTimes: number[] = [];
  /** A supervisor forked ahead, taken by the first #spawn when still usable. */
  #adopt: ChildProcess | undefined;

  private constructor(options: SupervisorClientOptions) {
    this.#options = {
      logPath: options.logPath,
      graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
      ackTimeoutMs: options.ackTimeoutMs ?? 5000,
      maxRestarts: options.maxRestarts ?? 5,
      restartWindowMs: options.restartWindowMs ?? 10_000,
      entry: options.entry ?? defaultSupervisorEntry(),
      onEvent: options.onEvent ?? (() => {}),
    };
    this.#adopt = options.adopt;
  }

  /**
   * Starts a supervisor and resolves once it answered. Rejects with `supervisor_failed` when it does not
   * answer within `ackTimeoutMs` or dies on start.
   */
  static async start(options: SupervisorClientOptions): Promise<SupervisorClient> {
    const client = new SupervisorClient(options);
    client.#spawn();
    await client.#ready;
    return client;
  }

  /** The client's state. */
  get state(): SupervisorClientState {
    return this.#state;
  }

  /** The supervisor's log file. */
  get logPath(): string {
    return this.#options.logPath;
  }

  /** The current supervisor's pid (`undefined` after close). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** How many supervisors were started: 1, plus one per replacement. */
  get generation(): number {
    return this.#generation;
  }

  /**
   * Announces a marker before a service carrying it is spawned. Resolves once a supervisor holding the
   * host's whole state acknowledged it: if the supervisor died, a new one is started and given every
   * live group and marker first. Rejects with `supervisor_failed` after close or when supervisors keep
   * dying; the host must then not start the service.
   */
  async intent(marker: string, cgroup?: CgroupRef): Promise<void> {
    this.#throwIfUnusable();
    this.#markers.add(marker);
    if (cgroup !== undefined) {
      const refs = this.#cgroups.get(marker) ?? [];
      refs.push(cgroup);
      this.#cgroups.set(marker, refs);
    }
    for (;;) {
      await this.#ready;
      this.#throwIfUnusable();
      const child = this.#child;
      if (child === undefined) continue;
      try {
        await this.#request(child, (id) => ({
          type: 'intent',
          id,
          marker,
          ...(cgroup === undefined ? {} : { cgroup }),
        }));
        return;
      } catch (error) {
        // A supervisor that died meanwhile is being replaced; the replacement got this marker in its state.
        if (!(error instanceof SupervisorLost)) throw error;
      }
    }
  }

  /** Records a started process group (`pgid` = the leader's pid). Fire-and-forget: a replacement supervisor receives it with the whole state. */
  register(pgid: number, marker: string): void {
    if (this.#state === 'closed') return;
    this.#markers.add(marker);
    this.#groups.set(pgid, marker);
    this.#post({ type: 'register', pgid, marker });
  }

  /** Forgets a group the host collected itself. */
  release(pgid: number): void {
    if (this.#state === 'closed') return;
    if (this.#groups.delete(pgid)) this.#post({ type: 'release', pgid });
  }

  /** Forgets a marker the host will use no more (every group of it was collected). */
  releaseMarker(marker: string): void {
    if (this.#state === 'closed') return;
    this.#cgroups.delete(marker);
    if (this.#markers.delete(marker)) this.#post({ type: 'releaseMarker', marker });
  }

  /**
   * Ends supervision: closes the channel and waits for the supervisor to exit (at most `graceMs` + 5 s).
   * The supervisor collects whatever is still registered or intended on its way out, as if the host had
   * exited, so release what the host stopped itself first. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#transition('closed');
    const child = this.#child;
    this.#child = undefined;
    this.#rejectPending(undefined, new SdkError('supervisor_failed', 'the supervisor client was closed'));
    try {
      if (child !== undefined && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timerMs(this.#options.graceMs + 5000));
          timer.unref();
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        // Referenced while waiting, so an otherwise idle host does not exit before the supervisor did.
        child.ref();
        if (child.connected) child.disconnect();
        await exited;
        child.unref();
      }
    } finally {
      this.#options.onEvent({ type: 'closed' });
    }
  }

  #transition(to: SupervisorClientState): void {
    this.#state = to;
  }

  #throwIfUnusable(): void {
    if (this.#state === 'closed') {
      throw new SdkError('supervisor_failed', 'the supervisor client is closed; no service may be started', {
        remedy: 'Start a new SupervisorClient before starting services.',
        data: { logPath: this.#options.logPath },
      });
    }
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** Forks a supervisor and sends it the whole state; `#ready` settles when it confirmed. */
  #spawn(): void {
    const now = performance.now();
    this.#startTimes.push(now);
    while ((this.#startTimes[0] ?? now) < now - this.#options.restartWindowMs) this.#startTimes.shift();
    // Starts in the window = the first (or an earlier) start + restarts.
    if (this.#generation > 0 && this.#startTimes.length > this.#options.maxRestarts + 1) {
      this.#fail(
        `the supervisor (${this.#options.entry}) died ${this.#startTimes.length - 1} times within ${this.#options.restartWindowMs} ms`,
      );
      return;
    }

    let child: ChildProcess;
    const early = this.#adopt;
    this.#adopt = undefined;
    if (early?.connected && early.exitCode === null && early.signalCode === null) {
      // Forked ahead (forkSupervisor): it has booted meanwhile and received nothing yet.
      child = early;
    } else {
      if (early !== undefined && early.exitCode === null && early.signalCode === null) early.kill('SIGKILL');
      try {
        child = forkSupervisor(this.#options.entry);
      } catch (error) {
        this.#fail(`the supervisor (${this.#options.entry}) could not be started`, error);
        return;
      }
    }
    this.#child = child;
    this.#generation += 1;
    const generation = this.#generation;
    this.#transition('starting');

    const lost = (exitCode: number | null, signal: NodeJS.Signals | null) => this.#lost(child, exitCode, signal);
    child.on('exit', lost);
    child.on('disconnect', () => lost(null, null));
    child.on('error', () => lost(null, null));
    child.on('message', (message: unknown) => this.#onMessage(message));
    this.#options.onEvent({ type: 'started', pid: child.pid ?? 0, generation });

    // The channel is ordered: hello, then the whole state, then a sync whose ack says it is all recorded.
    this.#post({ type: 'hello', graceMs: this.#options.graceMs, logPath: this.#options.logPath, hostPid: process.pid });
    for (const marker of this.#markers) {
      this.#post({ type: 'intent', id: this.#nextId++, marker });
      for (const cgroup of this.#cgroups.get(marker) ?? [])
        this.#post({ type: 'intent', id: this.#nextId++, marker, cgroup });
    }
    for (const [pgid, marker] of this.#groups) this.#post({ type: 'register', pgid, marker });
    const ready = this.#request(child, (id) => ({ type: 'sync', id })).then(
      () => {
        if (this.#child !== child || this.#state === 'closed') return;
        this.#transition('ready');
        this.#options.onEvent({
          type: 'ready',
          pid: child.pid ?? 0,
          generation,
          markers: this.#markers.size,
          groups: this.#groups.size,
        });
      },
      (error: unknown) => {
        // Lost before it confirmed: #lost already started a replacement (or failed); wait for that one.
        if (error instanceof SupervisorLost) return this.#ready;
        throw error;
      },
    );
    // Marked handled here; every awaiter of #ready still sees a rejection.
    ready.catch(() => {});
    this.#ready = ready;
  }

  #lost(child: ChildProcess, exitCode: number | null, signal: NodeJS.Signals | null): void {
    if (this.#child !== child || this.#state === 'closed' || this.#state === 'failed') return;
    this.#child = undefined;
    this.#options.onEvent({ type: 'lost', pid: child.pid, exitCode, signal });
    // The replacement first, so that #ready already names it when the waiters below retry.
    this.#spawn();
    this.#rejectPending(child, new SupervisorLost());
    // A supervisor that closed its channel but lingers would collect the host's live groups: end it.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  #fail(message: string, cause?: unknown): void {
    const error = new SdkError('supervisor_failed', `${message}; see ${this.#options.logPath}`, {
      remedy: 'Read the supervisor log; no service is started without a supervisor.',
      data: { logPath: this.#options.logPath, entry: this.#options.entry },
      cause,
    });
    this.#failure = error;
    this.#child = undefined;
    this.#transition('failed');
    this.#rejectPending(undefined, error);
    this.#ready = Promise.reject(error);
    this.#ready.catch(() => {});
    this.#options.onEvent({ type: 'failed', error });
  }

  #onMessage(message: unknown): void {
    if (!isSupervisorMessage(message)) return;
    this.#settle(message);
  }

  #settle(message: SupervisorMessage): void {
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    this.#updateRef(pending.child);
    pending.resolve();
  }

  /** Sends a message that is answered by an `ack`, and resolves on it. */
  #request(child: ChildProcess, make: (id: number) => HostMessage): Promise<void> {
    const id = this.#nextId++;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A supervisor that does not answer is taken for hung: killing it makes #lost replace it.
        if (this.#pending.has(id)) child.kill('SIGKILL');
      }, this.#options.ackTimeoutMs);
      timer.unref();
      this.#pending.set(id, { child, resolve, reject, timer });
      this.#updateRef(child);
      this.#send(child, make(id));
    });
  }

  /** Sends to the current supervisor, if any; a replacement receives the whole state anyway. */
  #post(message: HostMessage): void {
    const child = this.#child;
    if (child !== undefined) this.#send(child, message);
  }

  #send(child: ChildProcess, message: HostMessage): void {
    if (!child.connected) return;
    // The callback catches a send on a channel that closed meanwhile; 'disconnect'/'exit' handle the loss.
    child.send(message, (error) => {
      if (error) this.#lost(child, null, null);
    });
  }

  #rejectPending(child: ChildProcess | undefined, error: Error): void {
    for (const [id, pending] of this.#pending) {
      if (child !== undefined && pending.child !== child) continue;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    if (child !== undefined) this.#updateRef(child);
  }

  /** The channel keeps the host alive only while an ack is awaited, so `await intent()` cannot be cut short. */
  #updateRef(child: ChildProcess): void {
    const waiting = [...this.#pending.values()].some((p) => p.child === child);
    if (waiting) child.channel?.ref();
    else child.channel?.unref();
  }
}
