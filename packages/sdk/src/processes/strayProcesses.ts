/**
 * The start-up sweep (SPEC §6): before `run`, `resume`, `services probe` or `services serve` start
 * anything, collect the service processes that an earlier host of the same project left behind when
 * both it and its supervisor died. A marker names its host by pid and start time, so a live host's
 * processes are told apart and never touched.
 */
import { deadHostCgroups, removeEmptyDirs } from '@scienceevolve/supervisor/cgroup';
import { isHostAlive, parseMarker } from '@scienceevolve/supervisor/protocol';
import { collectMarked, DEFAULT_GRACE_MS } from '@scienceevolve/supervisor/terminate';

/** Options of {@link sweepStrays}. */
export interface SweepStraysOptions {
  /** The project whose strays are collected; other projects' processes are never touched. */
  projectId: string;
  /** Milliseconds between SIGTERM and SIGKILL. Default {@link DEFAULT_GRACE_MS} (2,000). */
  graceMs?: number;
  /** Receives one line per step, for the host's log. */
  log?: (line: string) => void;
}

/** One stray process that was collected. */
export interface StrayProcess {
  pid: number;
  /** Its process group id when it was found. */
  pgid: number;
  marker: string;
  /** The dead host that started it. */
  hostPid: number;
  invocationId: string;
}

/** What {@link sweepStrays} collected. */
export interface SweepReport {
  /** Every stray found (and signalled), in the order found. */
  collected: StrayProcess[];
  /** True when some stray outlived the grace and got SIGKILL. */
  forced: boolean;
  /** Strays still alive at the end (a process stuck in the kernel); normally empty. */
  survivors: number[];
  /** Milliseconds the sweep took. */
  durationMs: number;
  /** Control groups of dead hosts that were emptied and removed (their first directory each). */
  cgroups: string[];
}

/**
 * Collects every process whose marker names `projectId` and a host that is no longer alive: SIGTERM to
 * its group (or to the process alone when its group is not verifiably its own), SIGKILL after the grace,
 * then polls until it is gone. Resolves at once with an empty report when there is none. A process that
 * cleared its own environment cannot be found here (see docs/supervision.md).
 */
export async function sweepStrays(options: SweepStraysOptions): Promise<SweepReport> {
  // Host liveness by marker, decided once: a dead host stays dead, and a host that dies during the sweep
  // is its own supervisor's to collect.
  const verdicts = new Map<string, boolean>();
  const isStray = (marker: string): boolean => {
    let stray = verdicts.get(marker);
    if (stray === undefined) {
      const parts = parseMarker(marker);
      // isHostAlive counts a zombie host as dead: a killed host may linger as one until it is reaped.
      stray = parts !== undefined && parts.projectId === options.projectId && !isHostAlive(parts);
      verdicts.set(marker, stray);
    }
    return stray;
  };
  // Control groups of dead hosts (both the host and its supervisor died): every member is collected,
  // whatever it did to its group or environment, and the directories removed. Whichever project they
  // served: a cgroup belongs to its host, and its host is gone.
  const dead = deadHostCgroups();
  const report = await collectMarked({
    matches: isStray,
    cgroups: dead.leaves,
    graceMs: options.graceMs ?? DEFAULT_GRACE_MS,
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  const collected: StrayProcess[] = [];
  for (const found of report.found) {
    const parts = parseMarker(found.marker);
    if (parts === undefined) continue;
    collected.push({ ...found, hostPid: parts.hostPid, invocationId: parts.invocationId });
  }
  removeEmptyDirs(dead.dirs);
  return {
    collected,
    forced: report.forced,
    survivors: report.survivors,
    durationMs: report.durationMs,
    cgroups: report.cgroups,
  };
}
