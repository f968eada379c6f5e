/**
 * Processes of a benchmark: spawning helpers that always collect, a free port, and the leftover check
 * (every process carrying this run's marker or tag, read from /proc/<pid>/environ).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { BENCH_RUN_ENV } from './common.js';

/** A free TCP port on 127.0.0.1 (listened on with port 0, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves when the child has exited (at once when it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Whether a process exists and is not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Stops a child started with `detached: true` (its own process group): SIGTERM to the leader (which is
 * expected to collect what it started), SIGKILL to the whole group after `graceMs`, then waits until the
 * leader has exited and the group is empty.
 */
export async function stopGroup(child: ChildProcess, graceMs = 5000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  };
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // Gone already.
  }
  const done = exited(child);
  const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), graceMs).unref());
  if ((await Promise.race([done, timer])) === 'late') signalGroup('SIGKILL');
  await done;
  // Other members of the group may outlive the leader by a moment.
  const until = Date.now() + graceMs;
  while (groupAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  if (groupAlive(pid)) signalGroup('SIGKILL');
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Spawns a command and resolves with its exit code; stdout and stderr are discarded. */
export function runQuiet(command: string, args: readonly string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code));
  });
}

/** A process this run left behind. */
export interface Leftover {
  pid: number;
  why: string;
  cmdline: string;
}

/**
 * Every process (other than this one) whose environment carries `SCIENCEEVOLVE_MARKER` of one of this
 * run's projects (`…:bench-<token>…:`) or `SCIENCEEVOLVE_BENCH_RUN=<token>`. Also counts, separately, any
 * other process with a `SCIENCEEVOLVE_MARKER` (someone else's tests on a shared machine).
 */
export function findLeftovers(token: string): { ours: Leftover[]; foreignMarked: number } {
  const ours: Leftover[] = [];
  let foreignMarked = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    const vars = environ.split('\0');
    const marker = vars.find((v) => v.startsWith('SCIENCEEVOLVE_MARKER='));
    const tagged = vars.includes(`${BENCH_RUN_ENV}=${token}`);
    const ourMarker = marker?.includes(`:bench-${token}`) ?? false;
    if (tagged || ourMarker) {
      let cmdline = '';
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
      } catch {
        // Gone meanwhile.
      }
      if (alive(pid)) ours.push({ pid, why: ourMarker ? 'SCIENCEEVOLVE_MARKER' : BENCH_RUN_ENV, cmdline });
    } else if (marker !== undefined) {
      foreignMarked++;
    }
  }
  return { ours, foreignMarked };
}

/** Kills leftovers by pid (SIGKILL): the last resort of the run, reported as a failure. */
export function killLeftovers(leftovers: readonly Leftover[]): void {
  for (const l of leftovers) {
    try {
      process.kill(l.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

/** Resident set size of a process in bytes (0 when it is gone), from /proc/<pid>/status. */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Every process (not this one) whose environment has `name=value`. */
export function pidsWithEnv(name: string, value: string): number[] {
  const pids: number[] = [];
  const needle = `${name}=${value}`;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(needle)) pids.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

function cmdlineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ');
  } catch {
    return '';
  }
}

/**
 * SIGKILLs every process whose environment has `name=value`, until none is left (at most `waitMs`).
 * With `spareSupervisors`, ScienceEvolve supervisors are left alone: they collect their hosts' services
 * once their host is gone, which killing them first would prevent.
 */
export async function killWithEnv(
  name: string,
  value: string,
  waitMs = 3000,
  options: { spareSupervisors?: boolean } = {},
): Promise<number> {
  let killed = 0;
  const until = Date.now() + waitMs;
  const spared = (pid: number) =>
    options.spareSupervisors === true && /supervisor\/dist\/main\.js/.test(cmdlineOf(pid));
  for (;;) {
    const pids = pidsWithEnv(name, value).filter((pid) => alive(pid) && !spared(pid));
    if (pids.length === 0 || Date.now() > until) return killed;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // Gone meanwhile.
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (0 when it is gone). */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the state field; clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Every descendant of `pid` (children, their children, …), read from /proc. */
export function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** PSS of a process in bytes (0 when it is gone), from /proc/<pid>/smaps_rollup. */
export function pssOf(pid: number): number {
  try {
    const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'latin1'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * The private memory of a process in bytes (USS: `Private_Clean` + `Private_Dirty` in smaps_rollup; 0 when it
 * is gone): the pages only it maps. Unlike PSS it does not fall when another process starts mapping the same
 * shared pages, so its growth is what the process itself allocated.
 */
export function ussOf(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'latin1');
    let kb = 0;
    for (const match of text.matchAll(/^Private_(?:Clean|Dirty):\s+(\d+) kB/gm)) kb += Number(match[1]);
    return kb * 1024;
  } catch {
    return 0;
  }
}

/**
 * This process's supervisors (the host's; a benchmark before this one may have left its own running): by
 * the supervisor's process title, or by its script for a supervisor that sets none.
 */
export function supervisorPids(): number[] {
  return descendantsOf(process.pid).filter((pid) => {
    try {
      return /^scienceevolve-supervisor|supervisor\/dist\/main\.js/.test(
        readFileSync(`/proc/${pid}/cmdline`, 'latin1'),
      );
    } catch {
      return false;
    }
  });
}
