/**
 * What the supervisor knows and does: it records the markers and groups its host tells it of, and when
 * the host is gone it collects them all. Kept apart from `main.ts` (the process wiring) so the logic
 * reads on its own.
 */
import { appendFileSync, closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { type CgroupRef, cgroupSupport, deadHostCgroups, removeEmptyDirs } from './cgroup.js';
import { processStartTime } from './procfs.js';
import type { HostMessage, SupervisorMessage } from './protocol.js';
import { cappedDurationMs, collectMarked, DEFAULT_GRACE_MS, type KnownGroup } from './terminate.js';

/**
 * The supervisor's life. Every transition is logged.
 * - `waiting`: started, no `hello` yet (log lines are buffered until the log path is known);
 * - `watching`: recording what the host tells, the host's channel open;
 * - `collecting`: the channel closed, collecting everything recorded;
 * - `done`: nothing is left; the process exits.
 */
export type SupervisorState = 'waiting' | 'watching' | 'collecting' | 'done';

/** Options of {@link Supervisor}. */
export interface SupervisorOptions {
  /** Sends a message to the host; returns nothing useful (the channel may be closing). */
  send: (message: SupervisorMessage) => void;
}

/** The supervisor's state machine; `main.ts` feeds it the channel's messages and its end. */
export class Supervisor {
  #state: SupervisorState = 'waiting';
  #graceMs = DEFAULT_GRACE_MS;
  #logPath: string | undefined;
  #hostPid: number | undefined;
  #buffered: string[] = [];
  readonly #markers = new Set<string>();
  readonly #groups = new Map<number, KnownGroup>();
  /** Service cgroups by marker (dirs[0] → ref), forgotten with the marker. */
  readonly #cgroups = new Map<string, Map<string, CgroupRef>>();
  readonly #send: (message: SupervisorMessage) => void;

  constructor(options: SupervisorOptions) {
    this.#send = options.send;
    this.log(`supervisor ${process.pid} started (state waiting)`);
  }

  /** The current state. */
  get state(): SupervisorState {
    return this.#state;
  }

  /** Appends a timestamped line to the log file (never to a terminal: the supervisor has none). */
  log(line: string): void {
    const text = `${new Date().toISOString()} supervisor[${process.pid}] ${line}\n`;
    if (this.#logPath === undefined) {
      this.#buffered.push(text);
      return;
    }
    try {
      appendPrivate(this.#logPath, text);
    } catch {
      // A log that cannot be written must not stop the collection.
    }
  }

  #transition(to: SupervisorState, why: string): void {
    this.log(`state ${this.#state} -> ${to}: ${why}`);
    this.#state = to;
  }

  /** Records one message from the host. Messages after the channel closed are ignored. */
  handle(message: HostMessage): void {
    if (this.#state === 'collecting' || this.#state === 'done') return;
    switch (message.type) {
      case 'hello': {
        // Capped where it enters: the host's number is used as a timer's bound.
        this.#graceMs = cappedDurationMs(message.graceMs, DEFAULT_GRACE_MS);
        this.#hostPid = message.hostPid;
        this.#logPath = message.logPath;
        try {
          mkdirSync(dirname(message.logPath), { recursive: true, mode: 0o700 });
          appendPrivate(message.logPath, this.#buffered.join(''));
        } catch {
          // Same as in log(): carry on without a log.
        }
        this.#buffered = [];
        this.#transition('watching', `host ${message.hostPid}, grace ${this.#graceMs} ms`);
        return;
      }
      case 'intent':
        this.#markers.add(message.marker);
        if (message.cgroup !== undefined) {
          const refs = this.#cgroups.get(message.marker) ?? new Map<string, CgroupRef>();
          refs.set(message.cgroup.dirs[0] as string, message.cgroup);
          this.#cgroups.set(message.marker, refs);
        }
        this.log(`intent ${message.marker}${message.cgroup === undefined ? '' : ` cgroup ${message.cgroup.dirs[0]}`}`);
        this.#send({ type: 'ack', id: message.id });
        return;
      case 'register':
        this.#markers.add(message.marker);
        this.#groups.set(message.pgid, {
          pgid: message.pgid,
          marker: message.marker,
          leaderStart: processStartTime(message.pgid),
        });
        this.log(`register group ${message.pgid} ${message.marker}`);
        return;
      case 'release':
        if (this.#groups.delete(message.pgid)) this.log(`release group ${message.pgid}`);
        return;
      case 'releaseMarker':
        this.#cgroups.delete(message.marker);
        if (this.#markers.delete(message.marker)) this.log(`release marker ${message.marker}`);
        return;
      case 'sync':
        this.log(`sync: ${this.#markers.size} marker(s), ${this.#groups.size} group(s)`);
        this.#send({ type: 'ack', id: message.id });
        return;
      default:
        message satisfies never;
    }
  }

  /**
   * The host's channel closed: the host exited, crashed or was killed (the kernel closes the socket
   * in every case, SIGKILL included). Collects every registered group and every process carrying one
   * of the recorded markers, then resolves; the caller exits.
   */
  async hostGone(): Promise<void> {
    if (this.#state === 'collecting' || this.#state === 'done') return;
    this.#transition(
      'collecting',
      `host ${this.#hostPid ?? '?'} channel closed; ${this.#groups.size} group(s), ${this.#markers.size} marker(s)`,
    );
    // A registered group's marker is swept for even if the host released the marker (the group it did not).
    const markers = new Set([...this.#markers, ...[...this.#groups.values()].map((g) => g.marker)]);
    // The cgroups of every marker still recorded: their members are collected whatever they did to their
    // group or environment, then the cgroups are removed.
    const cgroups = [...markers].flatMap((m) => [...(this.#cgroups.get(m)?.values() ?? [])]);
    const report = await collectMarked({
      matches: (marker) => markers.has(marker),
      groups: [...this.#groups.values()],
      cgroups,
      graceMs: this.#graceMs,
      log: (line) => this.log(line),
    });
    this.#transition(
      'done',
      `collected ${report.found.length} process(es) in ${report.groups.length} group(s) in ${Math.round(report.durationMs)} ms` +
        (report.forced ? ' (SIGKILL needed)' : '') +
        (report.survivors.length > 0 ? `; survivors [${report.survivors.join(' ')}]` : '') +
        (report.cgroups.length > 0 ? `; ${report.cgroups.length} control group(s) removed` : ''),
    );
    // The host's invocation and host directories, now empty (a dead host's directory is never reused).
    if (cgroups.length > 0 && cgroupSupport().mechanism !== 'process-group') removeEmptyDirs(deadHostCgroups().dirs);
  }
}

/**
 * Appends to a log the user alone may read (0600), never through a link planted at its path (`O_NOFOLLOW`:
 * a symlink makes the append fail, and the supervisor carries on without its log). The SDK's rule for
 * data-dir files (its `fileModes.ts`), restated here because this package depends on nothing.
 */
function appendPrivate(path: string, text: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    appendFileSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
