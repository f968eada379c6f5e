/**
 * Control groups: where the host may manage them, each service runs in a cgroup of its own, so that its
 * collection reaches every process it ever started, whatever that process did to its session, process
 * group or environment (a `setsid env -i` grandchild carries neither group nor marker, but it cannot leave
 * its cgroup unless it is privileged to write cgroup files). `pids.max` there turns a fork bomb into a
 * failed fork instead of a machine outage.
 *
 * Layout, so that ownership is clear from the path alone:
 * `<base>/scienceevolve/<hostPid>-<hostStart>/<invocation>/<service>`, where `<base>` is the host's own
 * cgroup in each hierarchy used (cgroup v1: `freezer` and `pids`; cgroup v2: the unified one). Apart from the
 * shared `scienceevolve/` directory (created, and on cgroup v2 given `+pids` in its `cgroup.subtree_control`),
 * nothing outside a `scienceevolve/<pid>-<start>` directory is ever created, written or removed.
 *
 * Elsewhere (not allowed to write the cgroup tree, no cgroup file system, not Linux) nothing here is used
 * and collection is the process group and marker sweep alone. Why and how: docs/decisions/cgroup-collection.md.
 */
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeSync,
} from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import { isHostAlive } from './marker.js';
import { procPids } from './procfs.js';

/**
 * What collects a service's processes on this host:
 * - `cgroup-v2`: a cgroup per service in a delegated cgroup v2 subtree (`cgroup.kill`, `cgroup.freeze`);
 * - `cgroup-v1`: a cgroup per service in the cgroup v1 `freezer` and `pids` hierarchies;
 * - `process-group`: the service's process group and the marker sweep only (a process that leaves its group
 *   and clears its environment escapes).
 */
export type CollectionMechanism = 'cgroup-v2' | 'cgroup-v1' | 'process-group';

/** The one directory name under a base cgroup that holds everything ScienceEvolve creates. */
export const CGROUP_ROOT_NAME = 'scienceevolve';

/** Default `pids.max` of a service's cgroup: 512 processes and threads (a Node service uses about a dozen). */
export const DEFAULT_PIDS_MAX = 512;

/** The largest `pids.max` accepted: 4,194,304 (Linux's `pid_max` ceiling). */
export const MAX_PIDS_MAX = 4_194_304;

/**
 * Levels of child cgroups below a service's own that collection walks: 8. A service privileged to write
 * the cgroup tree (a root service on cgroup v1) may make cgroups inside its own and move processes there;
 * collection kills their members and removes them deepest first. On cgroup v2 the service's cgroup gets
 * `cgroup.max.depth` and `cgroup.max.descendants` so it cannot nest past the walk; cgroup v1 has no such
 * limit, so there a member deeper than the walk is found through `/proc/<pid>/cgroup` instead, and its
 * directory is left (reported as a cgroup left).
 */
export const MAX_CGROUP_DEPTH = 8;

/** Child cgroups below a service's own that collection walks, at most: 256 (cgroup v2: `cgroup.max.descendants`). */
export const MAX_CGROUP_DESCENDANTS = 256;

/** What this host supports, decided once per process by {@link cgroupSupport}. */
export interface CgroupSupport {
  /** The mechanism that holds. */
  mechanism: CollectionMechanism;
  /**
   * The base directories (the host's own cgroup in each hierarchy used) under which `scienceevolve/` lives:
   * cgroup v1 `[freezer, pids]`, cgroup v2 `[unified]`, none for `process-group`.
   */
  bases: string[];
  /** True when `pids.max` can be set (cgroup v1 `pids`, or cgroup v2 with the `pids` controller delegated). */
  pidsLimit: boolean;
  /** Why this mechanism (for `process-group`, why no cgroup is used). */
  detail: string;
}

/** One service's cgroup: its directory in each hierarchy used. Plain data, so it crosses the supervisor's channel. */
export interface CgroupRef {
  mechanism: 'cgroup-v1' | 'cgroup-v2';
  /** cgroup v1: `[freezer dir, pids dir]`; cgroup v2: `[dir]`. */
  dirs: string[];
}

interface MountInfo {
  v1: Map<string, string>;
  v2: string | undefined;
}

function readMounts(): MountInfo {
  const v1 = new Map<string, string>();
  let v2: string | undefined;
  let text = '';
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return { v1, v2 };
  }
  for (const line of text.split('\n')) {
    // "<id> <parent> <maj:min> <root> <mountpoint> <options> [optional…] - <fstype> <source> <super options>"
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const [fstype, , superOptions] = right.split(' ');
    const root = fields[3];
    const mountPoint = fields[4]?.replace(/\\040/g, ' ');
    // A mount of a sub-tree (root other than "/") would map paths differently: not used.
    if (mountPoint === undefined || root !== '/') continue;
    if (fstype === 'cgroup2') v2 ??= mountPoint;
    else if (fstype === 'cgroup') {
      for (const option of (superOptions ?? '').split(',')) {
        if ((option === 'freezer' || option === 'pids') && !v1.has(option)) v1.set(option, mountPoint);
      }
    }
  }
  return { v1, v2 };
}

/** The host's own cgroup path per hierarchy (`/proc/self/cgroup`): `freezer`, `pids`, and `` for cgroup v2. */
function ownCgroups(): Map<string, string> {
  const own = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return own;
  }
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    for (const c of controllers.split(',')) own.set(c, path);
  }
  return own;
}

const writable = (path: string): boolean => {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * Decides the mechanism from the mounts and the host's own cgroups; see {@link cgroupSupport}. `only`
 * considers one kind alone (a hybrid host has both; tests and benchmarks exercise each).
 */
export function detectCgroupSupport(only?: 'cgroup-v1' | 'cgroup-v2'): CgroupSupport {
  if (process.platform !== 'linux') {
    return {
      mechanism: 'process-group',
      bases: [],
      pidsLimit: false,
      detail: `no control groups on ${process.platform}`,
    };
  }
  const mounts = readMounts();
  const own = ownCgroups();
  // cgroup v1 freezer + pids first: on a hybrid host (v1 controllers, an empty unified tree) it is the one that has pids.max.
  const freezerMount = mounts.v1.get('freezer');
  const pidsMount = mounts.v1.get('pids');
  if (only !== 'cgroup-v2' && freezerMount !== undefined && pidsMount !== undefined) {
    const freezer = join(freezerMount, own.get('freezer') ?? '/');
    const pids = join(pidsMount, own.get('pids') ?? '/');
    if (writable(freezer) && writable(pids) && existsSync(join(freezer, 'cgroup.procs'))) {
      return {
        mechanism: 'cgroup-v1',
        bases: [freezer, pids],
        pidsLimit: true,
        detail: `cgroup v1 freezer (${freezer}) and pids (${pids})`,
      };
    }
  }
  const v2Own = own.get('');
  if (only !== 'cgroup-v1' && mounts.v2 !== undefined && v2Own !== undefined) {
    const base = join(mounts.v2, v2Own);
    const isRoot = v2Own === '/';
    // A delegated subtree: the host's own cgroup is writable, and it is a cgroup with the kill/freeze files
    // (the root cgroup has neither file, but its children have them on kernels that do).
    if (
      writable(base) &&
      (isRoot || existsSync(join(base, 'cgroup.kill')) || existsSync(join(base, 'cgroup.freeze')))
    ) {
      let pidsLimit = false;
      try {
        pidsLimit = readFileSync(join(base, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids');
      } catch {
        // No subtree_control: no controllers to delegate.
      }
      return {
        mechanism: 'cgroup-v2',
        bases: [base],
        pidsLimit,
        detail: `cgroup v2 (${base})${pidsLimit ? '' : ', without the pids controller (no pids.max)'}`,
      };
    }
  }
  return {
    mechanism: 'process-group',
    bases: [],
    pidsLimit: false,
    detail:
      freezerMount === undefined && mounts.v2 === undefined
        ? 'no cgroup file system mounted'
        : 'the cgroup tree is not writable by this user (run as root, or in a delegated cgroup v2 subtree)',
  };
}

let support: CgroupSupport | undefined;

/**
 * What this host supports, decided once per process (a few reads of `/proc/self` and `access` calls): the
 * mechanism that collects services here. Never throws.
 */
export function cgroupSupport(): CgroupSupport {
  support ??= detectCgroupSupport();
  return support;
}

/** The host's directory name: `<hostPid>-<hostStart>` (its start time tells a reused pid apart). */
export function hostCgroupName(hostPid: number, hostStart: string): string {
  return `${hostPid}-${hostStart}`;
}

const HOST_NAME = /^(\d+)-(\d+)$/;
const SAFE = /^[A-Za-z0-9._-]{1,64}$/;

/** A path segment from an id: kept when it is short and plain, else a plain form of it (never `.` or `..`). */
export function cgroupSegment(id: string): string {
  if (SAFE.test(id) && id !== '.' && id !== '..') return id;
  const plain = id.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 48);
  let hash = 0;
  for (const ch of id) hash = (Math.imul(hash, 31) + (ch.codePointAt(0) ?? 0)) >>> 0;
  return `${plain}_${hash.toString(16)}`;
}

let mountPoints: string[] | undefined;

/** Where this host's cgroup v1 `freezer`/`pids` and cgroup v2 hierarchies are mounted (read once). */
function cgroupMountPoints(): string[] {
  if (mountPoints === undefined) {
    const mounts = readMounts();
    mountPoints = [...mounts.v1.values(), ...(mounts.v2 === undefined ? [] : [mounts.v2])];
  }
  return mountPoints;
}

/**
 * True when `dir` is a cgroup directory of ours: an absolute, normalized path inside one of this host's
 * cgroup mounts (`freezer`, `pids`, the unified one) with a `scienceevolve/<pid>-<start>` pair in it. The
 * supervisor accepts no other path from its channel: a look-alike elsewhere (`/tmp/scienceevolve/1-2/x`)
 * is never frozen, killed from or removed.
 */
export function isOurCgroupDir(dir: string): boolean {
  if (!isAbsolute(dir) || normalize(dir) !== dir) return false;
  const parts = dir.split('/');
  const at = parts.lastIndexOf(CGROUP_ROOT_NAME);
  if (!(at > 0 && HOST_NAME.test(parts[at + 1] ?? '') && parts.length > at + 2)) return false;
  const above = parts.slice(0, at).join('/') || '/';
  return cgroupMountPoints().some((mount) => above === mount || above.startsWith(mount === '/' ? '/' : `${mount}/`));
}

/** True when `value` is a well-formed {@link CgroupRef} naming only directories of ours. */
export function isCgroupRef(value: unknown): value is CgroupRef {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.mechanism !== 'cgroup-v1' && v.mechanism !== 'cgroup-v2') return false;
  if (!Array.isArray(v.dirs) || v.dirs.length !== (v.mechanism === 'cgroup-v1' ? 2 : 1)) return false;
  return v.dirs.every((d) => typeof d === 'string' && isOurCgroupDir(d));
}

/**
 * Writes `value` into an existing control file. Opened write-only and without `O_CREAT`: a control file
 * always exists in a cgroup directory, so a path that is not one (a removed cgroup, a directory that is
 * not a cgroup) gets no file created in it.
 */
function writeControl(dir: string, file: string, value: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(join(dir, file), constants.O_WRONLY);
    writeSync(fd, value);
    return true;
  } catch {
    return false;
  } finally {
    try {
      if (fd !== undefined) closeSync(fd);
    } catch {
      // Nothing to do: the write's outcome is already decided.
    }
  }
}

/** Options of {@link createServiceCgroup}. */
export interface CreateCgroupOptions {
  /** The host's pid and start time (`processStartTime`). */
  hostPid: number;
  hostStart: string;
  /** The invocation id (made a plain path segment). */
  invocation: string;
  /** A name for the service, unique in the invocation (made a plain path segment). */
  service: string;
  /** `pids.max`: processes and threads the service may have at once. Default {@link DEFAULT_PIDS_MAX} (512). */
  pidsMax?: number;
}

/**
 * Creates one service's cgroup (`scienceevolve/<host>/<invocation>/<service>` under each base) and sets its
 * `pids.max` where the host supports it. Returns `undefined` when this host has no cgroup support, or when
 * the directories cannot be created (the service then runs under the process group alone).
 */
export function createServiceCgroup(
  options: CreateCgroupOptions,
  using: CgroupSupport = cgroupSupport(),
): CgroupRef | undefined {
  if (using.mechanism === 'process-group') return undefined;
  const relative = [
    CGROUP_ROOT_NAME,
    hostCgroupName(options.hostPid, options.hostStart),
    cgroupSegment(options.invocation),
    cgroupSegment(options.service),
  ];
  const pidsMax = options.pidsMax ?? DEFAULT_PIDS_MAX;
  const dirs: string[] = [];
  for (const base of using.bases) {
    const dir = makePath(base, relative, using);
    if (dir === undefined) {
      for (const made of dirs) removeCgroup({ mechanism: using.mechanism, dirs: [made] });
      return undefined;
    }
    dirs.push(dir);
  }
  const ref: CgroupRef = { mechanism: using.mechanism, dirs };
  const pidsDir = pidsDirOf(ref);
  if (pidsDir !== undefined && existsSync(join(pidsDir, 'pids.max')))
    writeControl(pidsDir, 'pids.max', String(pidsMax));
  if (ref.mechanism === 'cgroup-v2' && ref.dirs[0] !== undefined) {
    // The service may nest no deeper, nor more, than collection walks.
    writeControl(ref.dirs[0], 'cgroup.max.depth', String(MAX_CGROUP_DEPTH));
    writeControl(ref.dirs[0], 'cgroup.max.descendants', String(MAX_CGROUP_DESCENDANTS));
  }
  return ref;
}

/**
 * Creates `base/<relative…>` one level at a time. A sibling's removal may take an empty invocation or host
 * directory away between two levels (ENOENT): the walk then starts again, a few times.
 */
function makePath(base: string, relative: readonly string[], using: CgroupSupport): string | undefined {
  for (let attempt = 0; attempt < 5; attempt++) {
    let dir = base;
    let failed: string | undefined;
    for (const segment of relative) {
      // The pids controller is enabled downwards from our own `scienceevolve/` directory: the base already
      // has it (that is what pidsLimit says), and the base is not ours to write.
      if (using.mechanism === 'cgroup-v2' && using.pidsLimit && dir !== base)
        writeControl(dir, 'cgroup.subtree_control', '+pids');
      dir = join(dir, segment);
      try {
        mkdirSync(dir);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST') {
          failed = code;
          break;
        }
      }
    }
    if (failed === undefined) return dir;
    if (failed !== 'ENOENT') return undefined;
  }
  return undefined;
}

function pidsDirOf(ref: CgroupRef): string | undefined {
  return ref.mechanism === 'cgroup-v1' ? ref.dirs[1] : ref.dirs[0];
}

/** The `cgroup.procs` files a process must be written into to join `ref` (one per hierarchy). */
export function procsFiles(ref: CgroupRef): string[] {
  return ref.dirs.map((d) => join(d, 'cgroup.procs'));
}

/** Variables a POSIX shell sets on its own (dash: `PWD`; bash as `sh`: also `OLDPWD`, `SHLVL`). */
const SHELL_SET = ['PWD', 'OLDPWD', 'SHLVL'] as const;

/**
 * The `/bin/sh` prelude that joins `ref` and then `exec`s the command: `[file, args]` to spawn instead of
 * `command args`. The shell writes its own pid (`$$`, which stays the pid after `exec`) into every
 * hierarchy's `cgroup.procs` before the command runs, so the command and everything it ever forks are
 * inside the cgroup from their first instruction: no fork can race the placement. A failed join exits 125
 * with a line on stderr, before anything of the service runs.
 *
 * The environment passes through, except that the variables a shell sets on its own (`PWD`, `OLDPWD`,
 * `SHLVL`) are unset again unless `env` has them: the service sees exactly the environment it was given.
 *
 * @param env the environment the spawn passes (only its names are read)
 */
export function joinCgroupCommand(
  ref: CgroupRef,
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): { file: string; args: string[] } {
  const added = SHELL_SET.filter((name) => env[name] === undefined || !Object.hasOwn(env, name));
  const unset = added.length === 0 ? '' : `unset ${added.join(' ')}; `;
  const script =
    'while [ "$1" != -- ]; do echo $$ > "$1" || { echo "scienceevolve: cannot join control group $1" >&2; exit 125; }; shift; done; shift; ' +
    `${unset}exec "$@"`;
  return { file: '/bin/sh', args: ['-c', script, 'scienceevolve-join', ...procsFiles(ref), '--', command, ...args] };
}

/**
 * The child cgroups below `dir`, deepest first, at most {@link MAX_CGROUP_DEPTH} levels and
 * {@link MAX_CGROUP_DESCENDANTS} directories; `truncated` when there were more. Never throws.
 */
export function cgroupDescendants(dir: string): { dirs: string[]; truncated: boolean } {
  const found: string[] = [];
  let truncated = false;
  let level = [dir];
  for (let depth = 1; level.length > 0; depth++) {
    const next: string[] = [];
    for (const parent of level) {
      for (const name of subdirs(parent)) {
        if (depth > MAX_CGROUP_DEPTH || found.length >= MAX_CGROUP_DESCENDANTS) {
          truncated = true;
          break;
        }
        const child = join(parent, name);
        found.push(child);
        next.push(child);
      }
    }
    level = truncated ? [] : next;
  }
  return { dirs: found.reverse(), truncated };
}

function readProcs(file: string, into: Set<number>): void {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return;
  }
  for (const line of text.split('\n')) {
    const pid = Number(line);
    if (line !== '' && Number.isInteger(pid) && pid > 0) into.add(pid);
  }
}

/**
 * The pids in the cgroup now, child cgroups included (every hierarchy's `cgroup.procs`; zombies are not
 * listed). Empty once it is removed.
 */
export function cgroupMembers(ref: CgroupRef): number[] {
  const pids = new Set<number>();
  let truncated = false;
  for (const dir of ref.dirs) {
    const below = cgroupDescendants(dir);
    truncated ||= below.truncated;
    for (const d of [dir, ...below.dirs]) readProcs(join(d, 'cgroup.procs'), pids);
  }
  if (truncated) for (const pid of membersByProcfs(ref)) pids.add(pid);
  return [...pids];
}

/**
 * Every process whose cgroup (per `/proc/<pid>/cgroup`) is `ref`'s or below it, however deep: for a tree
 * deeper or wider than the walk. One read per process of the machine, so used only then.
 */
function membersByProcfs(ref: CgroupRef): number[] {
  const mounts = readMounts();
  const roots =
    ref.mechanism === 'cgroup-v1'
      ? [
          ['freezer', mounts.v1.get('freezer'), ref.dirs[0]],
          ['pids', mounts.v1.get('pids'), ref.dirs[1]],
        ]
      : [['', mounts.v2, ref.dirs[0]]];
  const out: number[] = [];
  for (const pid of procPids()) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
    } catch {
      continue;
    }
    const inside = text.split('\n').some((line) => {
      const first = line.indexOf(':');
      const second = line.indexOf(':', first + 1);
      if (first < 0 || second < 0) return false;
      const controllers = line.slice(first + 1, second).split(',');
      const path = line.slice(second + 1);
      return roots.some(([controller, mount, dir]) => {
        if (mount === undefined || dir === undefined || !controllers.includes(controller as string)) return false;
        const full = join(mount, path);
        return full === dir || full.startsWith(`${dir}/`);
      });
    });
    if (inside) out.push(pid);
  }
  return out;
}

/** True when a fork in the cgroup was refused because `pids.max` was reached (`pids.events` `max` > 0). */
export function pidsLimitReached(ref: CgroupRef): boolean {
  const dir = pidsDirOf(ref);
  if (dir === undefined) return false;
  try {
    const match = /^max (\d+)$/m.exec(readFileSync(join(dir, 'pids.events'), 'utf8'));
    return match !== null && Number(match[1]) > 0;
  } catch {
    return false;
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * SIGKILL to every member of the cgroup with no chance to fork meanwhile: freeze, kill every member, thaw
 * (the killed processes die as they thaw). cgroup v2 with `cgroup.kill` does it in one write. Returns the
 * pids signalled. Never throws.
 */
export function killCgroup(ref: CgroupRef, send: (pid: number) => void): number[] {
  const freezerDir = ref.dirs[0];
  if (freezerDir === undefined) return [];
  if (ref.mechanism === 'cgroup-v2' && writeControl(freezerDir, 'cgroup.kill', '1')) return cgroupMembers(ref);
  const [file, frozen, thawed] =
    ref.mechanism === 'cgroup-v1' ? ['freezer.state', 'FROZEN', 'THAWED'] : ['cgroup.freeze', '1', '0'];
  const froze = writeControl(freezerDir, file, frozen);
  try {
    if (froze && ref.mechanism === 'cgroup-v1') {
      // Freezing is asynchronous (FREEZING until every task stopped); a few milliseconds at most.
      for (let i = 0; i < 50; i++) {
        let state = '';
        try {
          state = readFileSync(join(freezerDir, file), 'utf8').trim();
        } catch {
          break;
        }
        if (state !== 'FREEZING') break;
        pause(1);
      }
    }
    const members = cgroupMembers(ref);
    for (const pid of members) send(pid);
    return members;
  } finally {
    if (froze) writeControl(freezerDir, file, thawed);
  }
}

function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * Removes the service's cgroup with the child cgroups it made, deepest first (each must be empty: a cgroup
 * with members cannot be removed), then its invocation's and host's directories when they are empty too.
 * Returns false when the service's own directory is still there. Never throws.
 */
export function removeCgroup(ref: CgroupRef): boolean {
  let removed = true;
  for (const dir of ref.dirs) {
    if (!isOurCgroupDir(dir)) continue;
    for (const child of cgroupDescendants(dir).dirs) removeDir(child);
    if (!removeDir(dir)) {
      removed = false;
      continue;
    }
    // The invocation's and the host's directories: removed when empty (another service may still use them).
    const parts = dir.split('/');
    const at = parts.lastIndexOf(CGROUP_ROOT_NAME);
    for (let end = parts.length - 1; end > at + 1; end--) {
      if (!removeDir(parts.slice(0, end).join('/'))) break;
    }
  }
  return removed;
}

/** The leaf cgroups (services) under one host directory, as refs; empty directories on the way included. */
function hostTree(using: CgroupSupport, hostName: string): { leaves: CgroupRef[]; dirs: string[] } {
  if (using.mechanism === 'process-group') return { leaves: [], dirs: [] };
  const leaves = new Map<string, string[]>();
  const dirs: string[] = [];
  for (const base of using.bases) {
    const hostDir = join(base, CGROUP_ROOT_NAME, hostName);
    for (const invocation of subdirs(hostDir)) {
      const invocationDir = join(hostDir, invocation);
      for (const service of subdirs(invocationDir)) {
        const key = `${invocation}/${service}`;
        const list = leaves.get(key) ?? [];
        list.push(join(invocationDir, service));
        leaves.set(key, list);
      }
      dirs.push(invocationDir);
    }
    dirs.push(hostDir);
  }
  const refs: CgroupRef[] = [];
  for (const [key, list] of leaves) {
    if (using.mechanism === 'cgroup-v1') {
      const [freezerBase, pidsBase] = using.bases as [string, string];
      refs.push({
        mechanism: 'cgroup-v1',
        dirs: [join(freezerBase, CGROUP_ROOT_NAME, hostName, key), join(pidsBase, CGROUP_ROOT_NAME, hostName, key)],
      });
    } else refs.push({ mechanism: 'cgroup-v2', dirs: list });
  }
  return { leaves: refs, dirs };
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** The service cgroups of host `hostPid`/`hostStart` that exist now (for the supervisor's collection). */
export function hostCgroups(hostPid: number, hostStart: string, using: CgroupSupport = cgroupSupport()): CgroupRef[] {
  return hostTree(using, hostCgroupName(hostPid, hostStart)).leaves;
}

/** Removes host `hostPid`/`hostStart`'s directories that are empty (its invocation and host directories). */
export function removeHostCgroups(hostPid: number, hostStart: string, using: CgroupSupport = cgroupSupport()): void {
  for (const dir of hostTree(using, hostCgroupName(hostPid, hostStart)).dirs) removeDir(dir);
}

/**
 * The cgroups left by hosts that are no longer alive (`scienceevolve/<pid>-<start>` whose host is gone or
 * whose pid is another process now), with every directory of theirs. Cgroups of live hosts are never
 * listed, and nothing outside `scienceevolve/` is looked at.
 */
export function deadHostCgroups(using: CgroupSupport = cgroupSupport()): { leaves: CgroupRef[]; dirs: string[] } {
  const leaves: CgroupRef[] = [];
  const dirs: string[] = [];
  const hosts = new Set<string>();
  for (const base of using.bases) for (const name of subdirs(join(base, CGROUP_ROOT_NAME))) hosts.add(name);
  for (const name of hosts) {
    const match = HOST_NAME.exec(name);
    if (match === null) continue;
    if (isHostAlive({ hostPid: Number(match[1]), hostStart: match[2] as string })) continue;
    const tree = hostTree(using, name);
    leaves.push(...tree.leaves);
    dirs.push(...tree.dirs);
  }
  return { leaves, dirs };
}

/** Removes directories that are empty, deepest first; the rest stay. Never throws. */
export function removeEmptyDirs(dirs: readonly string[]): void {
  for (const dir of dirs) if (isOurCgroupDir(`${dir}/x`) || isOurCgroupDir(dir)) removeDir(dir);
}
