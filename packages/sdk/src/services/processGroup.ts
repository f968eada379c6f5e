/**
 * Collecting a service's process group (SPEC §5.7, §6): SIGTERM to the whole group, SIGKILL after the
 * grace, and a sweep for processes that carry the invocation's marker but left the group (`setsid`), until
 * `/proc` shows none of them alive. Linux semantics: a process group id is the pid of its leader, and a
 * group outlives its leader as long as any member lives.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { DEFAULT_GRACE_MS, type MarkedProcess, scanMarkedProcesses } from '@scienceevolve/supervisor/protocol';

/** Default milliseconds between SIGTERM and SIGKILL: 2,000 (the supervisor's default, the same grace). */
export { DEFAULT_GRACE_MS };

/** Milliseconds to wait, after SIGKILL, for the kernel to take the processes away: 5,000. */
export const KILL_WAIT_MS = 5000;

/** Milliseconds between two looks at `/proc` while waiting: 20. */
const POLL_MS = 20;

/**
 * Process groups of the live stdio services of this process, by marker. The marker names the invocation,
 * not the service, so several services share it; a sweep must not take a sibling service's processes.
 */
const liveGroups = new Map<string, Set<number>>();

/** Records that `pgid` is a live service group of `marker` (see {@link sweepCandidates}). */
export function trackGroup(marker: string, pgid: number): void {
  let groups = liveGroups.get(marker);
  if (groups === undefined) {
    groups = new Set();
    liveGroups.set(marker, groups);
  }
  groups.add(pgid);
}

/** Forgets `pgid` (the group is being, or has been, collected). */
export function untrackGroup(marker: string, pgid: number): void {
  const groups = liveGroups.get(marker);
  groups?.delete(pgid);
  if (groups?.size === 0) liveGroups.delete(marker);
}

/** What `/proc/<pid>/stat` says about a process, or `undefined` when it is gone. */
interface ProcStat {
  state: string;
  ppid: number;
  pgid: number;
}

function procStat(pid: number): ProcStat | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Field 2 (the command name) may hold spaces and parentheses: count fields after its closing parenthesis.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: rest[0] ?? '', ppid: Number(rest[1]), pgid: Number(rest[2]) };
}

/**
 * True while `pid` is a live process. A zombie is not alive: it holds nothing but a table entry, and where
 * the init process does not reap orphans (some containers) it would otherwise count as alive forever.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/** The live (non-zombie) members of process group `pgid`. */
export function liveGroupMembers(pgid: number): number[] {
  try {
    // Cheap first look: ESRCH for the whole group means no member at all, not even a zombie.
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return [];
  }
  const members: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return members;
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    const stat = procStat(pid);
    if (stat !== undefined && stat.pgid === pgid && stat.state !== 'Z') members.push(pid);
  }
  return members;
}

/**
 * The marked processes that belong to the service of group `pgid`: in the group itself, or outside every
 * other live service group of the same marker and not descended from one. A process that left the group
 * with `setsid` while its parent was still alive is found through its parent; one whose parent already
 * died has been re-parented and cannot be told apart from a live sibling's daemon, so it is taken only
 * when no sibling group of the marker is alive (the invocation's final sweep takes the rest).
 */
export function sweepCandidates(marker: string, pgid: number): MarkedProcess[] {
  const siblings = new Set(liveGroups.get(marker) ?? []);
  siblings.delete(pgid);
  return scanMarkedProcesses((m) => m === marker).filter((p) => {
    if (p.pgid === pgid) return true;
    if (siblings.has(p.pgid)) return false;
    let pid = p.pid;
    for (let depth = 0; depth < 64; depth++) {
      const stat = procStat(pid);
      if (stat === undefined || stat.ppid <= 1) return siblings.size === 0;
      if (siblings.has(stat.pgid)) return false;
      if (stat.pgid === pgid) return true;
      pid = stat.ppid;
    }
    return true;
  });
}

/**
 * Sends `signal` to every process of group `pgid`. `process.kill(-pgid)` addresses the group; the guard
 * matters: `kill(-1)` would signal every process this user may signal, and `kill(-0)` our own group.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  if (!Number.isInteger(pgid) || pgid <= 1) throw new Error(`refusing to signal process group ${pgid}`);
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already empty. EPERM cannot happen for our own children.
  }
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Gone in the meantime.
  }
}

/** Options of {@link collectGroup}. */
export interface CollectOptions {
  /** The group (the leader's pid). */
  pgid: number;
  /** The marker to sweep for; without it only the group is collected. */
  marker?: string;
  /** Milliseconds between SIGTERM and SIGKILL. Default {@link DEFAULT_GRACE_MS} (2,000). */
  graceMs?: number;
  /** Milliseconds to wait after SIGKILL before giving up. Default {@link KILL_WAIT_MS} (5,000). */
  killWaitMs?: number;
}

/** What {@link collectGroup} did. */
export interface CollectResult {
  /** True when SIGKILL was needed. */
  forced: boolean;
  /** Pids of marked processes outside the group that were found and signalled. */
  swept: number[];
  /** Pids still alive when the wait after SIGKILL ran out (normally empty). */
  survivors: number[];
}

/**
 * Collects a service: SIGTERM to the group and its strays, up to `graceMs` for all of them to go, SIGKILL to
 * whatever is left, then waits (to `killWaitMs`) until `/proc` shows none of them alive. Strays are looked
 * for again at every poll: a process may fork or `setsid` while being stopped.
 */
export async function collectGroup(options: CollectOptions): Promise<CollectResult> {
  const { pgid, marker } = options;
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const killWaitMs = options.killWaitMs ?? KILL_WAIT_MS;
  const swept = new Set<number>();

  // Marked processes outside the group are claimed through their parent chain, which only works while the
  // parents live: so they are claimed before the first signal too, and a claimed pid stays claimed after
  // its parent died and it was re-parented.
  const claim = () => {
    if (marker === undefined) return;
    for (const p of sweepCandidates(marker, pgid)) if (p.pgid !== pgid) swept.add(p.pid);
  };
  const look = (signal: NodeJS.Signals | undefined): number[] => {
    const alive = liveGroupMembers(pgid);
    claim();
    for (const pid of swept) {
      if (!isProcessAlive(pid)) continue;
      alive.push(pid);
      if (signal !== undefined) signalPid(pid, signal);
    }
    return alive;
  };

  claim();
  signalGroup(pgid, 'SIGTERM');
  let alive = look('SIGTERM');
  const termDeadline = Date.now() + graceMs;
  while (alive.length > 0 && Date.now() < termDeadline) {
    await delay(Math.min(POLL_MS, Math.max(1, termDeadline - Date.now())));
    alive = look(undefined);
  }
  if (alive.length === 0) return { forced: false, swept: [...swept], survivors: [] };

  signalGroup(pgid, 'SIGKILL');
  alive = look('SIGKILL');
  const killDeadline = Date.now() + killWaitMs;
  while (alive.length > 0 && Date.now() < killDeadline) {
    await delay(POLL_MS);
    // A member forked between the signals would be a new, unsignalled member: signal the group again.
    signalGroup(pgid, 'SIGKILL');
    alive = look('SIGKILL');
  }
  return { forced: true, swept: [...swept], survivors: alive };
}

/**
 * Resolves after `ms` milliseconds. Deliberately not unref'd: someone awaits a stop, and a host whose last
 * task is `await session.close()` must not exit (leaving the group alive) because only a poll timer was
 * pending. Every wait that uses it is bounded by a deadline.
 */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
