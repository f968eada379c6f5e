/**
 * Collecting marked processes: the one algorithm both the supervisor (when its host is gone) and the
 * host's start-up sweep use. A round finds what is ours, sends SIGTERM, waits out the grace, sends
 * SIGKILL to what is left and waits until it is gone; rounds repeat until a scan finds nothing, so a
 * process forked during the grace is collected too.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import {
  DEFAULT_GRACE_MS,
  MARKER_ENV,
  type MarkedProcess,
  parseMarker,
  processGroupOf,
  processStartTime,
} from './protocol.js';

/** One row of the process table. */
export interface ProcessEntry {
  pid: number;
  /** Its process group id. */
  pgid: number;
  /** A zombie has exited and waits to be reaped by its parent: it holds no resources and cannot be signalled. */
  zombie: boolean;
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

/** The pgid and zombie state from `/proc/<pid>/stat`, or `undefined` when it is gone. */
function readStat(pid: number): { pgid: number; zombie: boolean } | undefined {
  const stat = readProcFile(`/proc/${pid}/stat`)?.toString('latin1');
  if (stat === undefined) return undefined;
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
  const pgid = Number(rest[2]);
  if (!Number.isInteger(pgid)) return undefined;
  return { pgid, zombie: rest[0] === 'Z' || rest[0] === 'X' };
}

function procPids(): number[] {
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

/** Every process in `/proc` with its group and whether it is a zombie (Linux only; empty elsewhere). */
export function listProcesses(): ProcessEntry[] {
  const rows: ProcessEntry[] = [];
  for (const pid of procPids()) {
    const stat = readStat(pid); // undefined: exited between readdir and read
    if (stat !== undefined) rows.push({ pid, ...stat });
  }
  return rows;
}

const MARKER_KEY = Buffer.from(`${MARKER_ENV}=`);

/**
 * Every live, non-zombie process (not this one) whose environment carries a marker accepted by `match`.
 * The same as `scanMarkedProcesses` (protocol.ts), at a third of its cost: the environment is read first, and the
 * stat only of the few processes that carry a marker.
 */
export function findMarked(match: (marker: string) => boolean): MarkedProcess[] {
  const found: MarkedProcess[] = [];
  for (const pid of procPids()) {
    if (pid <= 1 || pid === process.pid) continue;
    const environ = readProcFile(`/proc/${pid}/environ`);
    if (environ === undefined) continue;
    let at = environ.indexOf(MARKER_KEY);
    // Only at the start of an entry (after a NUL): a value may contain the text too.
    while (at > 0 && environ[at - 1] !== 0) at = environ.indexOf(MARKER_KEY, at + 1);
    if (at === -1) continue;
    let end = environ.indexOf(0, at);
    if (end === -1) end = environ.length;
    const marker = environ.toString('utf8', at + MARKER_KEY.length, end);
    if (!match(marker)) continue;
    const stat = readStat(pid);
    if (stat === undefined || stat.zombie) continue;
    found.push({ pid, pgid: stat.pgid, marker });
  }
  return found;
}

/** True while `pid` exists and is not a zombie. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // No /proc (not Linux): kill(pid, 0) succeeded, so count it as alive.
    return true;
  }
}

/** A group the host registered: collected while it still belongs to `marker` (see {@link collectMarked}). */
export interface KnownGroup {
  /** The group id, which is the leader's pid. */
  pgid: number;
  marker: string;
  /** The leader's start time when it was registered ({@link processStartTime}), so a reused pid is told apart. */
  leaderStart?: string | undefined;
}

/** Options of {@link collectMarked}. */
export interface CollectOptions {
  /** Accepts the markers whose processes are collected wherever they are (their own group, or one they `setsid` into). */
  matches: (marker: string) => boolean;
  /** Groups the host registered; collected even when no member carries a marker any more, if the leader is the one registered. */
  groups?: readonly KnownGroup[];
  /** Milliseconds between a round's first SIGTERM and SIGKILL. Default {@link DEFAULT_GRACE_MS} (2000). */
  graceMs?: number;
  /** Milliseconds to wait for processes to vanish after SIGKILL before giving up on them. Default 2000. */
  killWaitMs?: number;
  /** Milliseconds between checks of the process table while waiting. Default 5. */
  pollMs?: number;
  /** Rounds (scan, SIGTERM, grace, SIGKILL) before giving up on processes that keep appearing. Default 5. */
  maxRounds?: number;
  /** Receives one line per step. */
  log?: (line: string) => void;
}

/** What {@link collectMarked} did. */
export interface CollectReport {
  /** Every marked process found, in every round. */
  found: MarkedProcess[];
  /** The groups signalled as a whole (`kill(-pgid)`). */
  groups: number[];
  /** The processes signalled alone (their group was not verifiably ours). */
  pids: number[];
  /** True when some process outlived the grace and got SIGKILL. */
  forced: boolean;
  /** Processes still alive at the end (only a process stuck in the kernel or one given up on after {@link CollectOptions.maxRounds}). */
  survivors: number[];
  /** Rounds run (0 when nothing was found). */
  rounds: number;
  /** Milliseconds from the call to the end. */
  durationMs: number;
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    // Not unref'd: the caller awaits this, and an unref'd timer could let the process exit mid-collection.
    setTimeout(resolve, ms);
  });

function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    // ESRCH: already gone. EPERM: not ours to signal; nothing more can be done about it.
  }
}

/**
 * Collects every process that is ours: the registered groups that still belong to their marker, and
 * every live process whose environment carries an accepted marker. A group is signalled as a whole
 * (`kill(-pgid)`) only when it is verifiably ours: its leader is the very process that was registered
 * (same start time), or one of its live members carries an accepted marker. While any member is alive
 * the kernel does not hand that pgid out as a new pid, so a verified group cannot be someone else's.
 * The group of the caller and the group of a marker's own host are never signalled as a whole (a
 * service that failed to get a group of its own shares the host's, with the host's shell pipeline in
 * it); their marked members are signalled one by one instead.
 *
 * Resolves when nothing accepted is left alive, or with `survivors` when something would not die.
 * Never throws for a process that vanished or cannot be signalled.
 */
export async function collectMarked(options: CollectOptions): Promise<CollectReport> {
  const started = performance.now();
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const killWaitMs = options.killWaitMs ?? 2000;
  const pollMs = options.pollMs ?? 5;
  const maxRounds = options.maxRounds ?? 5;
  const log = options.log ?? (() => {});
  const ownGroup = processGroupOf(process.pid);
  const report: CollectReport = {
    found: [],
    groups: [],
    pids: [],
    forced: false,
    survivors: [],
    rounds: 0,
    durationMs: 0,
  };
  let registered = [...(options.groups ?? [])];

  for (let round = 1; round <= maxRounds; round++) {
    const groups = new Set<number>();
    const pids = new Set<number>();
    // Registered groups whose leader is the one registered are signalled before the (slower) /proc scan:
    // that is the common case, and it is a few milliseconds sooner.
    for (const group of registered) {
      const leaderIsRegistered =
        group.leaderStart !== undefined &&
        processStartTime(group.pgid) === group.leaderStart &&
        processGroupOf(group.pgid) === group.pgid;
      if (leaderIsRegistered && group.pgid !== ownGroup) groups.add(group.pgid);
    }
    // A negative pid signals the whole process group: the leader and every descendant that stayed in it,
    // including those that the leader's death would otherwise orphan.
    for (const pgid of groups) signal(-pgid, 'SIGTERM');
    // The grace runs from the first SIGTERM of the round: what the scan finds later gets that much less,
    // so that the scan's time (tens of ms on a loaded machine) is not added to every collection.
    const graceEnds = performance.now() + graceMs;

    const marked = findMarked(options.matches);
    const late = new Set<number>();
    // A registered group whose leader is gone is still ours while a member carries the marker.
    for (const group of registered) {
      if (!groups.has(group.pgid) && group.pgid !== ownGroup && marked.some((p) => p.pgid === group.pgid)) {
        late.add(group.pgid);
      }
    }
    // A registered group is looked for in the first round only: later its pgid may be a new process's.
    registered = [];
    for (const p of marked) {
      const hostPid = parseMarker(p.marker)?.hostPid;
      if (p.pgid === ownGroup || p.pgid === hostPid || p.pgid <= 1) pids.add(p.pid);
      else if (!groups.has(p.pgid)) late.add(p.pgid);
    }
    for (const pgid of late) {
      groups.add(pgid);
      signal(-pgid, 'SIGTERM');
    }
    for (const pid of pids) signal(pid, 'SIGTERM');
    if (groups.size === 0 && pids.size === 0) {
      report.survivors = report.survivors.filter(isProcessAlive);
      break;
    }

    report.rounds = round;
    report.found.push(...marked);
    report.groups.push(...groups);
    report.pids.push(...pids);
    log(
      `round ${round}: ${marked.length} marked process(es) [${marked.map((p) => p.pid).join(' ')}]; ` +
        `SIGTERM sent to group(s) [${[...groups].join(' ')}] and process(es) [${[...pids].join(' ')}]`,
    );
    const alive = () =>
      listProcesses().filter(
        (row) => !row.zombie && (groups.has(row.pgid) || pids.has(row.pid)) && row.pid !== process.pid,
      );

    let left = alive();
    while (left.length > 0 && performance.now() < graceEnds) {
      await sleep(Math.min(pollMs, Math.max(1, graceEnds - performance.now())));
      left = alive();
    }
    if (left.length > 0) {
      report.forced = true;
      log(`round ${round}: grace of ${graceMs} ms over; SIGKILL to [${left.map((r) => r.pid).join(' ')}]`);
      for (const row of left) {
        if (groups.has(row.pgid)) signal(-row.pgid, 'SIGKILL');
        signal(row.pid, 'SIGKILL');
      }
      const killEnds = performance.now() + killWaitMs;
      while (left.length > 0 && performance.now() < killEnds) {
        await sleep(pollMs);
        left = alive();
      }
    }
    report.survivors = left.map((r) => r.pid);
    log(
      left.length === 0
        ? `round ${round}: all gone after ${Math.round(performance.now() - started)} ms`
        : `round ${round}: still alive after SIGKILL: [${report.survivors.join(' ')}]`,
    );
  }
  report.durationMs = performance.now() - started;
  return report;
}
