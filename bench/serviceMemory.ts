/**
 * Benchmark 16: the memory one service costs the machine as the SDK starts it, against the same service
 * started by the official v1 client (`StdioClientTransport`, `bench/lib/services.ts` `startBaseline`).
 *
 * Ours is the invocation path a user's run takes (`startInvocationServices`, agent `solo`, the host's
 * supervisor) on a project whose workflow says `"sandbox": "required"` when bubblewrap works here (the
 * default `auto` sandboxes then too), else on the main benchmark project (unsandboxed, said in the notes).
 * The figure is the PSS (`/proc/<pid>/smaps_rollup`, shared pages divided among the processes mapping
 * them) of everything the service adds, read once the service is ready (initialized and listed):
 *
 * - the service's processes: every process that appeared under this one for the start — the sandbox's
 *   two `bwrap` processes (the one the host spawns and the pid namespace's init) and the service itself;
 * - the supervisor's growth: its private memory (USS, `Private_Clean` + `Private_Dirty`) at ready minus the
 *   same just before the start — not its PSS, which falls when the service's `node` starts sharing the
 *   pages the supervisor maps too. The supervisor itself is started once per host, before the first
 *   service: its whole PSS is reported apart, as a host's fixed cost.
 *
 * The baseline is the PSS of the process tree the official client starts (`setsid` execs, so one process).
 * Both sides run the same service file (`bench/fixtures/benchService.cjs`) with the same environment, one
 * at a time, alternated A B A B … after a warm-up pair, so the pages every `node` maps are divided among
 * the same neighbours on both sides. Not counted on either side: the host process's client objects (a few
 * hundred KiB, below the garbage collector's noise) and the kernel's own bookkeeping (the cgroup, the
 * namespaces, page tables), which no process's PSS shows.
 */
import { readFileSync } from 'node:fs';
import { processFacts } from '../packages/sdk/dist/invocation/invocation.js';
import { sandboxAvailability } from '../packages/sdk/dist/processes/sandbox.js';
import { type BenchContext, type ResultRow, median, runPairs } from './lib/common.js';
import { descendantsOf, pssOf, supervisorPids, ussOf } from './lib/processes.js';
import { type BenchProject, SERVICE, startBaseline, startOurs } from './lib/services.js';
import { sandboxedProject } from './sandboxStart.js';

const MEASURE = 'the memory one service costs (PSS), as the SDK starts it (supervisor, cgroup, sandbox)';
const BASELINE = 'the same service started by the official v1 client (`StdioClientTransport`)';
const GOAL = 'reported';
/** How long the processes of a side may take to be gone after it was closed, in ms. */
const GONE_WITHIN_MS = 5000;

const MiB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;
/** A part's size: in KiB below 1 MiB, so that a small part does not read as 0.0 MiB. */
const size = (bytes: number) => (Math.abs(bytes) < MiB ? `${Math.round(bytes / 1024)} KiB` : mib(bytes));

/** One reading of ours: bytes of PSS by part. */
interface OursReading {
  service: number;
  sandbox: number;
  supervisorGrowth: number;
  supervisor: number;
  processes: number;
  /** The sandbox's decision for the service, as the invocation reports it. */
  sandboxed: boolean;
  /** The cgroup controllers (v1) or `unified` (v2) under which the service was placed in a group of its own. */
  cgroups: string[];
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0')[0] ?? '';
  } catch {
    return '';
  }
}

/** The cgroup hierarchies in which `pid` sits in a group of the SDK's (`…/scienceevolve/…`). */
function ownCgroups(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cgroup`, 'latin1')
      .split('\n')
      .filter((line) => line.includes('/scienceevolve/'))
      .map((line) => line.split(':')[1] || 'unified');
  } catch {
    return [];
  }
}

/** Waits until none of `pids` exists; throws naming the ones left after {@link GONE_WITHIN_MS}. */
async function gone(pids: readonly number[], what: string): Promise<void> {
  const alive = () =>
    pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
  const until = Date.now() + GONE_WITHIN_MS;
  while (alive().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  const left = alive();
  if (left.length > 0) throw new Error(`${what}: processes ${left.join(', ')} outlived close()`);
}

/** Benchmark 16's row. */
export async function serviceMemoryBench(ctx: BenchContext, project: BenchProject): Promise<ResultRow> {
  const available = await sandboxAvailability(process.env);
  const measured = available.ok ? await sandboxedProject(ctx) : project;

  const ours = async (): Promise<OursReading> => {
    const [supervisor] = supervisorPids();
    if (supervisor === undefined) throw new Error("the host's supervisor is not running");
    const before = new Set(descendantsOf(process.pid));
    const supervisorBefore = ussOf(supervisor);
    const services = await startOurs(measured, 'solo');
    let added: number[] = [];
    try {
      const reading: OursReading = {
        service: 0,
        sandbox: 0,
        supervisorGrowth: ussOf(supervisor) - supervisorBefore,
        supervisor: pssOf(supervisor),
        processes: 0,
        sandboxed: services.outcomes[0]?.sandbox?.sandboxed === true,
        cgroups: [],
      };
      added = descendantsOf(process.pid).filter((pid) => !before.has(pid));
      const servicePid = processFacts(services.sessions[0]).pid;
      if (servicePid === undefined || !added.includes(servicePid)) {
        throw new Error(`the service's process ${servicePid} is not among the new processes ${added.join(', ')}`);
      }
      for (const pid of added) {
        const pss = pssOf(pid);
        if (/(^|\/)bwrap$/.test(commandOf(pid))) reading.sandbox += pss;
        else reading.service += pss;
      }
      reading.processes = added.length;
      reading.cgroups = ownCgroups(servicePid);
      return reading;
    } finally {
      await services.close();
      await gone(added, 'ours');
    }
  };

  const theirs = async (): Promise<{ pss: number; processes: number }> => {
    const direct = await startBaseline(measured, SERVICE);
    let pids: number[] = [];
    try {
      if (direct.pid === undefined) throw new Error('the official client started no process');
      pids = [direct.pid, ...descendantsOf(direct.pid)];
      return { pss: pids.reduce((sum, pid) => sum + pssOf(pid), 0), processes: pids.length };
    } finally {
      await direct.close();
      await gone(pids, 'the baseline');
    }
  };

  const readings = { a: [] as OursReading[], b: [] as Array<{ pss: number; processes: number }> };
  const total = (r: OursReading) => r.service + r.sandbox + r.supervisorGrowth;
  const pairs = ctx.quick ? 5 : 10;
  const result = await runPairs(ctx, 'PSS of one service (MiB)', {
    warmup: 1,
    pairs,
    a: async () => {
      const r = await ours();
      readings.a.push(r);
      return total(r) / MiB;
    },
    b: async () => {
      const r = await theirs();
      readings.b.push(r);
      return r.pss / MiB;
    },
  });
  // runPairs's warm-up pair is the first reading of each side.
  const a = readings.a.slice(1);
  const b = readings.b.slice(1);
  if (available.ok && a.some((r) => !r.sandboxed))
    throw new Error('a service of the sandboxed project ran unsandboxed');
  const oursPss = median(a.map(total));
  const theirsPss = median(b.map((r) => r.pss));
  const part = (pick: (r: OursReading) => number) => median(a.map(pick));
  const where = available.ok
    ? `sandboxed (\`"sandbox": "required"\`; ${available.bwrap})`
    : `unsandboxed: no sandbox on this machine (${available.detail})`;
  return {
    id: '16',
    measure: MEASURE,
    baseline: BASELINE,
    ours: `${mib(oursPss)} PSS (${median(a.map((r) => r.processes))} processes + the supervisor's growth)`,
    theirs: `${mib(theirsPss)} PSS (${median(b.map((r) => r.processes))} process)`,
    figure: `${(oursPss / theirsPss).toFixed(2)}× (${oursPss >= theirsPss ? '+' : ''}${mib(oursPss - theirsPss)})`,
    goal: GOAL,
    verdict: 'n/a',
    notes:
      `median of ${pairs} A/B pairs after a warm-up pair, one service at a time, read when the service is ready (initialized and listed); ours ${where}; ` +
      `ours by part (medians): the service process ${mib(part((r) => r.service))}, the sandbox's bwrap processes ${size(part((r) => r.sandbox))}, the supervisor's growth (its private memory, USS) ${size(part((r) => r.supervisorGrowth))}; ` +
      `the supervisor itself, once per host whatever its services: ${mib(part((r) => r.supervisor))} PSS (a host running only this service pays it too: ${mib(oursPss + part((r) => r.supervisor))} in all); ` +
      `the service's cgroup (${a[0]?.cgroups.length ? `here ${a[0].cgroups.join(', ')}` : 'none here'}) and the sandbox's namespaces are kernel bookkeeping, in no process's PSS; ` +
      "the host process's client objects are not counted on either side; PSS divides the pages every `node` maps among all the processes mapping them on this machine, so the absolute figures move with what else runs, the difference less",
    data: {
      pairs,
      sandboxed: available.ok,
      oursPssBytes: a.map(total),
      baselinePssBytes: b.map((r) => r.pss),
      oursParts: a,
      medianOursBytes: oursPss,
      medianBaselineBytes: theirsPss,
      diffsMiBPerPair: result.diffs,
    },
  };
}

/** The label of benchmark 16 in `run.ts`. */
export const SERVICE_MEMORY_MEASURE = MEASURE;
export const SERVICE_MEMORY_GOAL = GOAL;
