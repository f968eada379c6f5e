/**
 * The supervised-spawn path (SPEC §5.4, §5.7, §6): a process launched as the leader of its own process
 * group, announced to the host's process registry before the spawn and registered right after it, and
 * collected by the one kill path (`@scienceevolve/supervisor/terminate`, target "one service's group and
 * what it spawned"). Services and the gateway launch through it. Linux semantics: a process group id is the
 * pid of its leader, and a group outlives its leader as long as any member lives.
 */
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import {
  type CgroupRef,
  type CollectionMechanism,
  cgroupSupport,
  createServiceCgroup,
  DEFAULT_PIDS_MAX,
  joinCgroupCommand,
  MAX_PIDS_MAX,
  pidsLimitReached,
  removeCgroup,
} from '@scienceevolve/supervisor/cgroup';
import { parseMarker } from '@scienceevolve/supervisor/protocol';
import { MARKER_ENV } from '@scienceevolve/supervisor/procfs';
import { collectGroup, DEFAULT_GRACE_MS, DEFAULT_KILL_WAIT_MS } from '@scienceevolve/supervisor/terminate';
import type { ProcessRegistry } from './processRegistry.js';
import { timerMs } from '../workflow/durations.js';

/**
 * The smallest `pidsMax` accepted: 8 (a shell prelude and a Node service need a few tasks to start at all).
 * The largest is Linux's `pid_max` ceiling, 4,194,304.
 * @internal
 */
export const MIN_PIDS_MAX = 8;
export { MAX_PIDS_MAX };

/** Default `pidsMax` of a service's control group: 512 processes and threads. */
export { DEFAULT_PIDS_MAX };

/** What collects a service's processes: `cgroup-v2`, `cgroup-v1` or `process-group` (see `@scienceevolve/supervisor/cgroup`). */
export type { CollectionMechanism };

/**
 * Process groups of the live supervised groups of this process, by marker. The marker names the
 * invocation, not the service, so several services share it; a stop must not take a sibling's processes.
 */
const liveGroups = new Map<string, Set<number>>();

function trackGroup(marker: string, pgid: number): void {
  let groups = liveGroups.get(marker);
  if (groups === undefined) {
    groups = new Set();
    liveGroups.set(marker, groups);
  }
  groups.add(pgid);
}

function untrackGroup(marker: string, pgid: number): void {
  const groups = liveGroups.get(marker);
  groups?.delete(pgid);
  if (groups?.size === 0) liveGroups.delete(marker);
}

/**
 * How a service's processes are collected: `auto` (default) uses a control group where the host may manage
 * them (see `@scienceevolve/supervisor/cgroup`) and the process group + marker sweep elsewhere;
 * `process-group` never uses a control group.
 * @public
 */
export type CollectionPreference = 'auto' | 'process-group';

/** A distinct cgroup name per launch in this process: a service started twice in one invocation gets two. */
let launches = 0;

/** The mechanism that collects services of this process under `preference` (the host is probed once, lazily). */
export function collectionMechanism(preference: CollectionPreference = 'auto'): CollectionMechanism {
  return preference === 'process-group' ? 'process-group' : cgroupSupport().mechanism;
}

/** Options of {@link SupervisedGroup}. */
export interface SupervisedGroupOptions {
  /** The marker every process of the group carries (`SCIENCEEVOLVE_MARKER` in the spawn's environment). */
  marker: string;
  /** Told of the marker before the spawn and of the group right after (the host's supervisor client). */
  registry?: ProcessRegistry | undefined;
  /** Milliseconds between SIGTERM and SIGKILL on collect. Default {@link DEFAULT_GRACE_MS} (2,000). */
  graceMs?: number | undefined;
  /** Milliseconds to wait after SIGKILL before reporting survivors. Default {@link DEFAULT_KILL_WAIT_MS} (5,000). */
  killWaitMs?: number | undefined;
  /**
   * Run the group in a control group of its own, where the host supports it (`collection` `auto`): `name`
   * names it within the marker's invocation, `pidsMax` caps its processes and threads (default 512). Without
   * this option (the gateway, harness processes) only the process group and the marker sweep collect it.
   */
  cgroup?: { name: string; pidsMax?: number | undefined; collection?: CollectionPreference | undefined } | undefined;
}

/** What {@link SupervisedGroup.collect} did. */
export interface CollectResult {
  /** True when SIGKILL was needed. */
  forced: boolean;
  /** Pids of marked processes outside the group that were found and signalled. */
  swept: number[];
  /** Pids still alive when the wait after SIGKILL ran out (normally empty); the supervisor keeps them. */
  survivors: number[];
}

/**
 * One supervised process group. Use: `await group.announce()`, then `group.spawn(…)` once, and
 * `await group.collect()` to stop it (idempotent; it may run while the start is failing).
 */
export class SupervisedGroup {
  readonly #options: SupervisedGroupOptions;
  #pgid: number | undefined;
  #collecting: Promise<CollectResult> | undefined;
  #cgroup: CgroupRef | undefined;

  /** A group not started yet. */
  constructor(options: SupervisedGroupOptions) {
    this.#options = options;
  }

  /** The group id (= the leader's pid) once spawned. */
  get pgid(): number | undefined {
    return this.#pgid;
  }

  /**
   * Announces the marker to the registry and resolves once it is acknowledged: a host killed between the
   * spawn and the registration is then still covered by the supervisor's marker sweep. Rejects (e.g.
   * `supervisor_failed`) when the registry cannot take it; nothing may then be spawned.
   */
  async announce(): Promise<void> {
    const wanted = this.#options.cgroup;
    const parts = parseMarker(this.#options.marker);
    if (wanted !== undefined && parts !== undefined && this.#cgroup === undefined) {
      if (collectionMechanism(wanted.collection) !== 'process-group') {
        launches += 1;
        this.#cgroup = createServiceCgroup({
          hostPid: parts.hostPid,
          hostStart: parts.hostStart,
          invocation: parts.invocationId,
          service: `${wanted.name}-${launches}`,
          ...(wanted.pidsMax === undefined ? {} : { pidsMax: wanted.pidsMax }),
        });
      }
    }
    // The cgroup travels with the intent: a host killed right after the spawn leaves it to the supervisor.
    await this.#options.registry?.intent(this.#options.marker, this.#cgroup);
  }

  /** The group's control group, when it runs in one (after {@link announce}). */
  get cgroup(): CgroupRef | undefined {
    return this.#cgroup;
  }

  /** True when a fork in the group's control group was refused because its `pids.max` was reached. */
  pidsLimitReached(): boolean {
    return this.#cgroup !== undefined && pidsLimitReached(this.#cgroup);
  }

  /**
   * Spawns `command` as the leader of a new process group, tracks it, and registers it. `options.env`
   * must carry the marker; `detached` is always set. When the spawn fails (`pid` undefined) nothing is
   * registered and the child's `error` event says why.
   *
   * @throws Error when called twice, or when the environment does not carry the marker.
   */
  spawn(command: string, args: readonly string[], options: Omit<SpawnOptions, 'detached'>): ChildProcess {
    const { marker, registry } = this.#options;
    if (this.#pgid !== undefined || this.#collecting !== undefined) throw new Error('a supervised group spawns once');
    if (options.env?.[MARKER_ENV] !== marker) throw new Error(`the environment must carry ${MARKER_ENV}=${marker}`);
    // detached: the child calls setsid(), so it leads a new process group (pgid = its pid) that can be
    // signalled as a whole with kill(-pgid), and a SIGINT at the host's terminal does not reach it.
    // With a cgroup, a /bin/sh prelude writes its own pid into the cgroup and then execs the command in
    // place (same pid, same group, same environment), so nothing of the service runs outside it.
    const launch =
      this.#cgroup === undefined
        ? { file: command, args: [...args] }
        : joinCgroupCommand(this.#cgroup, command, args, options.env ?? {});
    const child = spawn(launch.file, launch.args, { ...options, detached: true });
    if (child.pid !== undefined) {
      this.#pgid = child.pid;
      trackGroup(marker, child.pid);
      registry?.register(child.pid, marker);
    }
    return child;
  }

  /**
   * Collects the group and what it spawned (SIGTERM, SIGKILL after the grace, until none of it is alive),
   * then forgets it; releases it from the registry only when nothing outlived SIGKILL (what did stays the
   * supervisor's). Never rejects; idempotent.
   */
  collect(): Promise<CollectResult> {
    this.#collecting ??= this.#collect();
    return this.#collecting;
  }

  async #collect(): Promise<CollectResult> {
    const pgid = this.#pgid;
    if (pgid === undefined || pgid <= 1) {
      if (this.#cgroup !== undefined) removeCgroup(this.#cgroup);
      return { forced: false, swept: [], survivors: [] };
    }
    const { marker, registry } = this.#options;
    // A collection that failed (it should not: the kill path never throws for a process) counts the
    // leader as a survivor, so the group stays the supervisor's.
    let result: CollectResult = { forced: false, swept: [], survivors: [pgid] };
    try {
      const report = await collectGroup({
        pgid,
        marker,
        siblings: () => liveGroups.get(marker) ?? [],
        cgroup: this.#cgroup,
        graceMs: this.#options.graceMs ?? DEFAULT_GRACE_MS,
        killWaitMs: this.#options.killWaitMs ?? DEFAULT_KILL_WAIT_MS,
      });
      result = { forced: report.forced, swept: report.pids, survivors: report.survivors };
    } catch {
      // result says the leader survived.
    } finally {
      untrackGroup(marker, pgid);
      if (result.survivors.length === 0) registry?.release(pgid);
    }
    return result;
  }
}

/**
 * Resolves after `ms` milliseconds. Deliberately not unref'd: someone awaits it, and a host whose last
 * task is such a wait must not exit early. Every wait that uses it is bounded by a deadline.
 */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, timerMs(ms)));
}
