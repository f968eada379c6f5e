/**
 * The one kill path (SPEC §5.7, §6): SIGTERM, a grace period, SIGKILL to what is left, then a wait until
 * the process table shows none of it alive. What is signalled is a target's choice; two targets exist:
 * - {@link markerTarget}: every process carrying an accepted marker, wherever it went, and the groups a
 *   host registered (the supervisor when its host is gone, the host's start-up sweep, an invocation's
 *   final sweep);
 * - {@link groupTarget}: one service's process group and the marked processes whose ancestry leads to it
 *   (a service's own stop, the gateway's).
 * The semantics (order, what "gone" means, what outlives SIGKILL) are written down in
 * docs/decisions/kill-path.md.
 */
import { type CgroupRef, cgroupMembers, killCgroup, removeCgroup } from './cgroup.js';
import { parseMarker } from './marker.js';
import { type MarkedProcess, type ProcessEntry, ProcessTable, processGroupOf, readStat } from './procfs.js';

/** Default milliseconds between SIGTERM and SIGKILL (SPEC §5.7): 2,000. The one grace default of the SDK. */
export const DEFAULT_GRACE_MS = 2000;

/**
 * Default milliseconds to wait, after SIGKILL, for the processes to go: 5,000. SIGKILL cannot be caught,
 * so only a process stuck in the kernel (state `D`) outlives it; the wait bounds a stop that would
 * otherwise hang on one.
 */
export const DEFAULT_KILL_WAIT_MS = 5000;

/** Default milliseconds between two looks at the process table while waiting: 5. */
export const DEFAULT_POLL_MS = 5;

/** What a target chose from one look at the process table. */
export interface Selection {
  /** Process groups to signal as a whole (`kill(-pgid)`). */
  groups?: Iterable<number>;
  /** Processes to signal alone (their group is not verifiably the target's). */
  pids?: Iterable<number>;
  /** Marked processes found, for the report. */
  found?: Iterable<MarkedProcess>;
  /**
   * Control groups whose every member is the target's, whatever its group or environment: each member gets
   * the phase's signal alone; at SIGKILL time the cgroup is frozen, every member killed, and thawed; once
   * it is empty the cgroup is removed.
   */
  cgroups?: Iterable<CgroupRef>;
}

/** What the terminate loop collects: asked again at every look, so what appears meanwhile is taken too. */
export interface TerminateTarget {
  /** Groups verified without a scan of the table, signalled before the first (slower) look. */
  early?(): Iterable<number>;
  /** Chooses, from the table as it is now, what is the target's. What was chosen once stays chosen. */
  select(table: ProcessTable): Selection;
}

/**
 * Options of {@link terminate}. A duration that is not a finite number ≥ 0 is taken as its default; one above
 * {@link MAX_TIMER_MS} is capped there ({@link cappedDurationMs}).
 */
export interface TerminateOptions {
  /** Milliseconds between the first SIGTERM and SIGKILL. Default {@link DEFAULT_GRACE_MS} (2,000). */
  graceMs?: number;
  /** Milliseconds to wait for the processes to go after SIGKILL before reporting survivors. Default {@link DEFAULT_KILL_WAIT_MS} (5,000). */
  killWaitMs?: number;
  /** Milliseconds between looks at the process table while waiting. Default {@link DEFAULT_POLL_MS} (5). */
  pollMs?: number;
  /** Receives one line per step. */
  log?: (line: string) => void;
}

/** What {@link terminate} did. */
export interface TerminateReport {
  /** Every marked process the target found. */
  found: MarkedProcess[];
  /** The groups signalled as a whole (`kill(-pgid)`). */
  groups: number[];
  /** The processes signalled alone. */
  pids: number[];
  /** True when some process outlived the grace and got SIGKILL. */
  forced: boolean;
  /** Processes still alive when the wait after SIGKILL ran out (a process stuck in the kernel); normally empty. */
  survivors: number[];
  /** Milliseconds from the call to the end. */
  durationMs: number;
  /** The control groups collected and removed (their first directory each). */
  cgroups: string[];
  /** Every member of those control groups that was signalled (alone, and SIGKILLed while frozen). */
  cgroupMembers: number[];
  /** Control groups that could not be removed (a member outlived SIGKILL); normally empty. */
  cgroupsLeft: string[];
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    // Not unref'd: someone awaits the stop, and a process whose last task is this wait must not exit
    // (leaving the processes alive) because only a poll timer was pending. Every wait is bounded.
    setTimeout(resolve, ms);
  });

/** The longest duration the supervisor package waits for: 2^31 − 1 ms (about 24.8 days), the ceiling of a Node timer. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A duration in milliseconds as it enters this package (an option, a host's `hello`): `fallback` when it is
 * absent, NaN, infinite or negative (a NaN or infinite grace would never end the loop), else capped at
 * {@link MAX_TIMER_MS} (a longer `setTimeout` fires after 1 ms).
 */
export function cappedDurationMs(value: number | undefined, fallback: number): number {
  if (value === undefined || !Number.isFinite(value) || value < 0) return fallback;
  return Math.min(value, MAX_TIMER_MS);
}

function send(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone. EPERM: not ours to signal; nothing more can be done about it.
  }
}

/**
 * Collects a target: SIGTERM to what it selects, up to `graceMs` for all of it to go, SIGKILL to what is
 * left, then up to `killWaitMs` until the process table shows none of it alive (a zombie counts as gone:
 * it has exited). The target is asked again at every poll; what it selects later gets the signal of the
 * phase it is found in (SIGTERM during the grace, SIGKILL after it). During the kill phase live groups get
 * SIGKILL again at every poll, for a member forked between two looks.
 *
 * Never signals pid ≤ 1, this process, or this process's own group as a whole (`kill(-1)` would signal
 * everything this user may signal, `kill(-0)` the caller's group). Never throws for a process that
 * vanished or cannot be signalled; resolves with `survivors` when something would not die.
 */
export async function terminate(target: TerminateTarget, options: TerminateOptions = {}): Promise<TerminateReport> {
  const started = performance.now();
  const graceMs = cappedDurationMs(options.graceMs, DEFAULT_GRACE_MS);
  const killWaitMs = cappedDurationMs(options.killWaitMs, DEFAULT_KILL_WAIT_MS);
  // A poll is one timer: kept between 1 ms and 1 s (a timer over 2^31-1 ms would fire at once).
  const pollMs = Math.min(1000, Math.max(1, cappedDurationMs(options.pollMs, DEFAULT_POLL_MS)));
  const log = options.log ?? (() => {});
  const ownGroup = processGroupOf(process.pid);
  const groups = new Set<number>();
  const pids = new Set<number>();
  const found = new Map<number, MarkedProcess>();
  const cgroups = new Map<string, CgroupRef>();
  // Members of the cgroups, signalled one by one like `pids` but reported apart (`cgroupMembers`).
  const members = new Set<number>();
  let phase: 'term' | 'kill' = 'term';
  let graceEnds: number | undefined;
  let killEnds = Number.POSITIVE_INFINITY;
  let forced = false;

  const signal = (): NodeJS.Signals => (phase === 'term' ? 'SIGTERM' : 'SIGKILL');
  // The grace runs from the first SIGTERM: a late find gets that much less, so that the time of a scan
  // (tens of ms on a loaded machine) is not added to every collection.
  const startGrace = () => {
    graceEnds ??= performance.now() + graceMs;
  };
  const addGroup = (pgid: number, added: number[]) => {
    if (!Number.isInteger(pgid) || pgid <= 1 || pgid === ownGroup || groups.has(pgid)) return;
    groups.add(pgid);
    added.push(pgid);
    // A negative pid signals the whole group: the leader and every descendant that stayed in it,
    // including those the leader's death would otherwise orphan.
    send(-pgid, signal());
  };
  const addPid = (pid: number, added: number[]) => {
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid || pids.has(pid)) return;
    pids.add(pid);
    added.push(pid);
    send(pid, signal());
  };

  const early: number[] = [];
  for (const pgid of target.early?.() ?? []) addGroup(pgid, early);
  if (early.length > 0) {
    startGrace();
    log(`${signal()} sent to registered group(s) [${early.join(' ')}]`);
  }

  let table: ProcessTable | undefined;
  const look = (): ProcessEntry[] => {
    if (table === undefined) table = new ProcessTable();
    else table.refresh();
    const selection = target.select(table);
    const newGroups: number[] = [];
    const newPids: number[] = [];
    const newFound: number[] = [];
    for (const pgid of selection.groups ?? []) addGroup(pgid, newGroups);
    for (const pid of selection.pids ?? []) addPid(pid, newPids);
    for (const ref of selection.cgroups ?? []) {
      const key = ref.dirs[0];
      if (key !== undefined && !cgroups.has(key)) cgroups.set(key, ref);
    }
    // Every member of a cgroup is the target's: a process that left its group and cleared its environment
    // is still listed there. Each gets the phase's signal once, like any process chosen alone — unless its
    // process group was signalled as a whole already (the leader would get a second SIGTERM).
    for (const ref of cgroups.values()) {
      for (const pid of cgroupMembers(ref)) {
        if (pid <= 1 || pid === process.pid || pids.has(pid) || members.has(pid)) continue;
        members.add(pid);
        const pgid = processGroupOf(pid);
        if (pgid !== undefined && groups.has(pgid)) continue;
        newPids.push(pid);
        send(pid, signal());
      }
    }
    for (const p of selection.found ?? []) {
      if (found.has(p.pid)) continue;
      found.set(p.pid, p);
      newFound.push(p.pid);
    }
    if (newGroups.length > 0 || newPids.length > 0) {
      if (phase === 'term') startGrace();
      log(
        `${newFound.length} marked process(es) found [${newFound.join(' ')}]; ${signal()} sent to group(s) ` +
          `[${newGroups.join(' ')}] and process(es) [${newPids.join(' ')}]`,
      );
    }
    const left: ProcessEntry[] = [];
    for (const row of table.live()) {
      if (row.pid !== process.pid && (groups.has(row.pgid) || pids.has(row.pid) || members.has(row.pid)))
        left.push(row);
    }
    return left;
  };

  let left = look();
  while (left.length > 0) {
    const now = performance.now();
    if (phase === 'term' && now >= (graceEnds ?? now)) {
      phase = 'kill';
      forced = true;
      killEnds = now + killWaitMs;
      log(`grace of ${graceMs} ms over; SIGKILL to [${left.map((r) => r.pid).join(' ')}]`);
    }
    if (phase === 'kill') {
      if (now >= killEnds) break;
      // Frozen, nothing in the cgroup can fork between the read of its members and their SIGKILL.
      for (const ref of cgroups.values()) {
        for (const pid of killCgroup(ref, (p) => p !== process.pid && send(p, 'SIGKILL'))) members.add(pid);
      }
      for (const pgid of new Set(left.map((r) => r.pgid))) if (groups.has(pgid)) send(-pgid, 'SIGKILL');
      for (const row of left) if (pids.has(row.pid) || members.has(row.pid)) send(row.pid, 'SIGKILL');
    }
    const wait = phase === 'term' ? Math.min(pollMs, Math.max(1, (graceEnds ?? now) - now)) : pollMs;
    await sleep(wait);
    left = look();
  }

  const survivors = left.map((r) => r.pid);
  const removed: string[] = [];
  const cgroupsLeft: string[] = [];
  for (const [key, ref] of cgroups) {
    // An exiting process leaves cgroup.procs a moment after /proc shows it dead: a few tries.
    let ok = removeCgroup(ref);
    for (let i = 0; !ok && survivors.length === 0 && i < 100; i++) {
      await sleep(pollMs);
      ok = removeCgroup(ref);
    }
    (ok ? removed : cgroupsLeft).push(key);
  }
  if (cgroups.size > 0) {
    log(
      `control group(s) removed [${removed.join(' ')}]${cgroupsLeft.length > 0 ? `; left [${cgroupsLeft.join(' ')}]` : ''}`,
    );
  }
  const durationMs = performance.now() - started;
  if (groups.size > 0 || pids.size > 0 || members.size > 0) {
    log(
      survivors.length === 0
        ? `all gone after ${Math.round(durationMs)} ms`
        : `still alive ${killWaitMs} ms after SIGKILL: [${survivors.join(' ')}]`,
    );
  }
  return {
    found: [...found.values()],
    groups: [...groups],
    pids: [...pids],
    forced,
    survivors,
    durationMs,
    cgroups: removed,
    cgroupMembers: [...members],
    cgroupsLeft,
  };
}

/** A group a host registered: collected while it still belongs to its marker (see {@link markerTarget}). */
export interface KnownGroup {
  /** The group id, which is the leader's pid. */
  pgid: number;
  marker: string;
  /** The leader's start time when it was registered (`processStartTime`), so a reused pid is told apart. */
  leaderStart?: string | undefined;
}

/** Options of {@link markerTarget}. */
export interface MarkerTargetOptions {
  /** Accepts the markers whose processes are collected wherever they are (their own group, or one they `setsid` into). */
  matches: (marker: string) => boolean;
  /** Groups the host registered; collected even when no member carries a marker any more, if the leader is the one registered. */
  groups?: readonly KnownGroup[];
  /** Service cgroups of the marker's invocations: every member collected, then the cgroup removed. */
  cgroups?: readonly CgroupRef[];
}

/**
 * Target (a), a whole marker: the registered groups that still belong to their marker, and every live
 * process whose environment carries an accepted marker. A group is signalled as a whole only when it is
 * verifiably ours: its leader is the very process that was registered (same start time), or a live member
 * carries an accepted marker. While any member is alive the kernel does not hand that pgid out as a new
 * pid, so a verified group cannot be someone else's. The caller's own group and the group of a marker's
 * own host are never signalled as a whole (a service that failed to get a group of its own shares the
 * host's, with the host's shell pipeline in it): their marked members are signalled one by one.
 */
export function markerTarget(options: MarkerTargetOptions): TerminateTarget {
  const ownGroup = processGroupOf(process.pid);
  // A registered group is looked for in the first look only: later its pgid may be a new process's.
  let registered = [...(options.groups ?? [])].filter((g) => g.pgid > 1 && g.pgid !== ownGroup);
  const leaderIsRegistered = (group: KnownGroup, row: ProcessEntry | undefined) =>
    group.leaderStart !== undefined &&
    row !== undefined &&
    !row.exited &&
    row.startTime === group.leaderStart &&
    row.pgid === group.pgid;
  return {
    // The common case, a few milliseconds before the /proc scan.
    early: () => registered.filter((g) => leaderIsRegistered(g, readStat(g.pgid))).map((g) => g.pgid),
    select: (table) => {
      const marked = table.marked(options.matches);
      const groups: number[] = [];
      const pids: number[] = [];
      for (const group of registered) {
        if (leaderIsRegistered(group, table.get(group.pgid)) || marked.some((p) => p.pgid === group.pgid)) {
          groups.push(group.pgid);
        }
      }
      registered = [];
      for (const p of marked) {
        const hostPid = parseMarker(p.marker)?.hostPid;
        if (p.pgid === ownGroup || p.pgid === hostPid || p.pgid <= 1) pids.push(p.pid);
        else groups.push(p.pgid);
      }
      return { groups, pids, found: marked, cgroups: options.cgroups ?? [] };
    },
  };
}

/** Options of {@link groupTarget}. */
export interface GroupTargetOptions {
  /** The service's process group (its leader's pid). */
  pgid: number;
  /** The marker to sweep for; without it only the group is collected. */
  marker?: string;
  /** The other live service groups of the same marker (siblings of one invocation), whose processes are never taken. */
  siblings?: () => Iterable<number>;
  /** The service's own cgroup: every member collected whatever it did, then the cgroup removed. */
  cgroup?: CgroupRef | undefined;
}

/**
 * Target (b), one service's group and what it spawned: the group, and the marked processes outside it
 * whose parent chain leads into it. A process that left the group with `setsid` while its parent lived is
 * found through its parent (the first look happens before the first signal, while every parent lives, and
 * a process once chosen stays chosen after it is re-parented). One whose chain ends at init without
 * passing the group cannot be told apart from a sibling's daemon: it is taken only when no sibling group
 * of the marker is alive (the invocation's final marker sweep takes the rest).
 *
 * @throws Error when `pgid` is not an integer above 1 (`kill(-1)` and `kill(-0)` are never what is meant).
 */
export function groupTarget(options: GroupTargetOptions): TerminateTarget {
  const { pgid, marker } = options;
  const cgroups = options.cgroup === undefined ? [] : [options.cgroup];
  if (!Number.isInteger(pgid) || pgid <= 1) throw new Error(`refusing to signal process group ${pgid}`);
  return {
    select: (table) => {
      if (marker === undefined) return { groups: [pgid], cgroups };
      const siblings = new Set(options.siblings?.() ?? []);
      siblings.delete(pgid);
      const strays = table
        .marked((m) => m === marker)
        .filter((p) => p.pgid !== pgid && !siblings.has(p.pgid) && leadsInto(table, p.pid, pgid, siblings));
      return { groups: [pgid], pids: strays.map((p) => p.pid), found: strays, cgroups };
    },
  };
}

/** True when the parent chain of `pid` reaches group `pgid` before a sibling group (see {@link groupTarget}). */
function leadsInto(table: ProcessTable, pid: number, pgid: number, siblings: ReadonlySet<number>): boolean {
  let at = pid;
  // Bounded: a chain longer than this is not a service's tree; take it, as the group's.
  for (let depth = 0; depth < 64; depth++) {
    const row = table.get(at);
    if (row === undefined || row.ppid <= 1) return siblings.size === 0;
    if (siblings.has(row.pgid)) return false;
    if (row.pgid === pgid) return true;
    at = row.ppid;
  }
  return true;
}

/** Options of {@link collectMarked}: the target's and the loop's. */
export type CollectOptions = MarkerTargetOptions & TerminateOptions;

/** {@link terminate} of a {@link markerTarget}. */
export function collectMarked(options: CollectOptions): Promise<TerminateReport> {
  return terminate(markerTarget(options), options);
}

/** Options of {@link collectGroup}: the target's and the loop's. */
export type CollectGroupOptions = GroupTargetOptions & TerminateOptions;

/** {@link terminate} of a {@link groupTarget}. */
export function collectGroup(options: CollectGroupOptions): Promise<TerminateReport> {
  return terminate(groupTarget(options), options);
}
