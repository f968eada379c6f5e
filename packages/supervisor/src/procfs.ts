/**
 * The process table, read from Linux's `/proc`: one stat reader, liveness, start time, process group, the
 * marker in a process's environment, and the scan for marked processes. Everything in the SDK and the
 * supervisor that asks about processes asks here (`@scienceevolve/supervisor/procfs`), so "alive" has one
 * meaning. Why that meaning: docs/decisions/kill-path.md.
 *
 * Elsewhere than Linux there is no `/proc`: liveness falls back to `kill(pid, 0)`, and the scans find
 * nothing (the marker sweep is a Linux feature).
 */
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';

/** The environment variable that carries a service's marker (SPEC §5.3). */
export const MARKER_ENV = 'SCIENCEEVOLVE_MARKER';

/** One row of the process table: what `/proc/<pid>/stat` says. */
export interface ProcessEntry {
  pid: number;
  /** The parent's pid (0 for the kernel's own; 1, or a subreaper's pid, for an orphan). */
  ppid: number;
  /** Its process group id. */
  pgid: number;
  /** The one-letter state (`R`, `S`, `D`, `T`, `Z`, `X`, …). */
  state: string;
  /** Start time in clock ticks since boot (field 22): with the pid, it names one process for good. */
  startTime: string;
  /**
   * True for a zombie (`Z`) or a dying entry (`X`): the process has exited and only waits for its parent
   * to reap it. It holds no memory, no files, no ports, and no signal reaches it.
   */
  exited: boolean;
}

/** One process found by {@link scanMarkedProcesses}. */
export interface MarkedProcess {
  pid: number;
  /** Its process group id. */
  pgid: number;
  marker: string;
}

let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * Reads a small /proc file into a reused buffer and returns a view of it, valid until the next call;
 * `undefined` when the process is gone or the file unreadable. Collection runs when the machine may be
 * loaded: open/read/close into one buffer costs a third of `readFileSync`'s CPU (no fstat, no allocation).
 */
function readProcFile(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    let length = 0;
    for (;;) {
      const n = readSync(fd, scratch, length, scratch.length - length, null);
      if (n === 0) return scratch.subarray(0, length);
      length += n;
      if (length === scratch.length) {
        const bigger = Buffer.allocUnsafe(scratch.length * 2);
        scratch.copy(bigger);
        scratch = bigger;
      }
    }
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * What `/proc/<pid>/stat` says about `pid`, or `undefined` when there is no such entry (gone, or not
 * Linux). The command name (field 2) may hold spaces and parentheses, so fields are counted after its
 * last closing parenthesis.
 */
export function readStat(pid: number): ProcessEntry | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const stat = readProcFile(`/proc/${pid}/stat`)?.toString('latin1');
  if (stat === undefined) return undefined;
  // rest[0] is field 3 (state), rest[1] field 4 (ppid), rest[2] field 5 (pgrp), rest[19] field 22 (starttime).
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 20);
  const state = rest[0] ?? '';
  const ppid = Number(rest[1]);
  const pgid = Number(rest[2]);
  const startTime = rest[19];
  if (state === '' || !Number.isInteger(ppid) || !Number.isInteger(pgid) || startTime === undefined) return undefined;
  return { pid, ppid, pgid, state, startTime, exited: state === 'Z' || state === 'X' };
}

let procfs: boolean | undefined;

/** True when this machine has a Linux `/proc` (decided once: `/proc/self/stat` is readable). */
export function hasProcfs(): boolean {
  procfs ??= readStat(process.pid) !== undefined;
  return procfs;
}

/**
 * True while `pid` is a process that has not exited. On Linux: it has a `/proc` entry that is not a zombie
 * (`Z`) or dying (`X`); no entry means it is gone (reaped, or never was). Elsewhere: `kill(pid, 0)`
 * succeeds, or fails with EPERM (it exists, as another user's).
 *
 * Why a zombie counts as gone: it has already exited, holds nothing but its table entry, and cannot be
 * signalled; where nobody reaps orphans (some containers' init) it would otherwise count as alive for
 * ever. `kill(pid, 0)` succeeds on a zombie, so ESRCH alone cannot be the test; a test that waits for ESRCH
 * also waits for the reaping.
 */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (hasProcfs()) {
    const entry = readStat(pid);
    return entry !== undefined && !entry.exited;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The start time of a process in clock ticks since boot (field 22 of its stat), or `undefined` when it is gone (or this is not Linux). */
export function processStartTime(pid: number): string | undefined {
  return readStat(pid)?.startTime;
}

/** The process group id of `pid` (field 5 of its stat), or `undefined` when it is gone. */
export function processGroupOf(pid: number): number | undefined {
  return readStat(pid)?.pgid;
}

const MARKER_KEY = Buffer.from(`${MARKER_ENV}=`);

/** The marker in a process's environment, or `undefined` (gone, not readable, or unmarked). */
export function markerOf(pid: number): string | undefined {
  const environ = readProcFile(`/proc/${pid}/environ`);
  if (environ === undefined) return undefined;
  let at = environ.indexOf(MARKER_KEY);
  // Only at the start of an entry (after a NUL): a value may contain the text too.
  while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(MARKER_KEY, at + 1);
  if (at === -1) return undefined;
  let end = environ.indexOf(0, at);
  if (end === -1) end = environ.length;
  return environ.toString('utf8', at + MARKER_KEY.length, end);
}

/** The pids listed in `/proc` (empty when there is no `/proc`). */
export function procPids(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

/**
 * The process table as of the last {@link ProcessTable.refresh}: the pids in `/proc`, each row read when
 * first asked for, and each process's marker read once. A process's environment is fixed at its start,
 * so a marker is cached by pid and start time (a reused pid is a new process, read again). The terminate
 * loop refreshes one table at every poll, so only new processes cost an environment read, and a marker
 * scan reads a stat only for the processes that carry a marker (a first scan costs one environment read
 * per process, which matters on a loaded machine when every millisecond delays a SIGTERM).
 */
export class ProcessTable {
  #pids: number[] = [];
  /** Rows read since the last refresh; `null`: read, and gone. */
  #rows = new Map<number, ProcessEntry | null>();
  /** `startTime` undefined: the environment was read before the stat; the next stat read fills it in. */
  readonly #markers = new Map<number, { startTime: string | undefined; marker: string | undefined }>();

  /** A table read now. */
  constructor() {
    this.refresh();
  }

  /** Lists `/proc` again; rows are read again when next asked for. */
  refresh(): void {
    this.#pids = procPids();
    this.#rows = new Map();
    const listed = new Set(this.#pids);
    for (const pid of this.#markers.keys()) if (!listed.has(pid)) this.#markers.delete(pid);
  }

  /** The row of `pid` (read once per refresh), or `undefined` when it has no entry. */
  get(pid: number): ProcessEntry | undefined {
    let row = this.#rows.get(pid);
    if (row === undefined) {
      row = readStat(pid) ?? null;
      this.#rows.set(pid, row);
    }
    return row ?? undefined;
  }

  /** Every listed process that has not exited. */
  *live(): IterableIterator<ProcessEntry> {
    for (const pid of this.#pids) {
      const row = this.get(pid);
      if (row !== undefined && !row.exited) yield row;
    }
  }

  /** The marker of a listed process (its environment read once per process), or `undefined`. */
  markerOf(pid: number): string | undefined {
    const cached = this.#markers.get(pid);
    if (cached !== undefined) {
      const row = this.get(pid);
      if (row === undefined || row.exited) return undefined;
      // Read before its stat: taken as the same process (a pid is reused only after the pid space wrapped).
      cached.startTime ??= row.startTime;
      if (cached.startTime === row.startTime) return cached.marker;
    }
    const marker = markerOf(pid);
    this.#markers.set(pid, { startTime: this.#rows.get(pid)?.startTime, marker });
    return marker;
  }

  /** Every live listed process (not this one, not pid 1) whose marker `match` accepts. */
  marked(match: (marker: string) => boolean): MarkedProcess[] {
    const found: MarkedProcess[] = [];
    for (const pid of this.#pids) {
      if (pid <= 1 || pid === process.pid) continue;
      const marker = this.markerOf(pid);
      if (marker === undefined || !match(marker)) continue;
      const row = this.get(pid);
      if (row !== undefined && !row.exited) found.push({ pid, pgid: row.pgid, marker });
    }
    return found;
  }
}

/** Every process in `/proc` that has not exited (Linux only; empty elsewhere). */
export function listProcesses(): ProcessEntry[] {
  return [...new ProcessTable().live()];
}

/**
 * Every live process (not this one) whose environment carries a marker accepted by `match`, read from
 * `/proc` (readable for processes of the same user). A process that cleared its own environment
 * (`env -i`) cannot be found this way. Zombies are skipped: they have exited.
 */
export function scanMarkedProcesses(match: (marker: string) => boolean): MarkedProcess[] {
  return new ProcessTable().marked(match);
}
