/**
 * Scale rows (13, 14, 15a, 15b): how time and host memory grow with the number of concurrent invocations
 * and with the number of services in one invocation.
 *
 * - 13: N concurrent invocations × 2 services (N = 64; 8 with --quick) against 1 invocation × 2 services,
 *   alternated: wall time per invocation, host memory per invocation, and the queueing at the admission
 *   gate (on, with its defaults: one start per core, the default 35 s startup budget counted from
 *   admission) reported apart.
 * - 14: 32 services in one invocation (8 with --quick) against 1 service: time to all ready, and memory.
 * - 15a / 15b: the growth curve — N = 1, 2, 4, 8, 16, 32, 64 concurrent invocations × 2 services, and
 *   N = 1, 2, 4, 8, 16, 32 services in one invocation (1, 2, 8 of each with --quick). The largest point
 *   of each curve is the measurement of row 13 / 14 (same launch); every other point is its own A/B
 *   series against the one-invocation (one-service) baseline.
 *
 * The path is the one users take through the API: `loadWorkflow` into a data dir, then the public
 * `startInvocationServices` (from `packages/sdk/dist/index.js`) with the host's supervisor — copy,
 * environment, spawn, the admission gate, `initialize` and every list — on real services
 * (`bench/fixtures/benchService.cjs`, a CommonJS MCP server on the official SDK v1, 32 definitions told
 * apart by their args so that none shares a process).
 *
 * Memory: the proportional set size (PSS, `/proc/<pid>/smaps_rollup`) summed over the host (this process),
 * its supervisor and every service process (every descendant of this process), read when every service of
 * the batch is ready — the services are all held until then, so this is the batch's peak of processes —
 * and before the batch, with nothing started (after a full GC). PSS divides each shared page among the
 * processes mapping it (the `node` binary's text, shared libraries), so the sum is what the batch really
 * costs the machine; RSS would count `node`'s shared pages once per process. RSS is recorded beside it.
 * "per invocation" is the growth (peak − before) divided by the invocations; the footprint (peak / N,
 * host and supervisor included) is reported beside it.
 *
 * After each batch every invocation's marker is looked for in /proc: a process still carrying one after
 * `close()` (polled up to 5 s) fails the row.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadWorkflow } from '../packages/sdk/dist/index.js';
import type { ServiceEvent } from '../packages/sdk/dist/internal.js';
import { type InvocationServices, startInvocationServices } from '../packages/sdk/dist/invocation/invocation.js';
import { type ProjectPaths, openProject } from '../packages/sdk/dist/store/projectStore.js';
import type { ProcessRegistry } from '../packages/sdk/dist/processes/processRegistry.js';
import { type WorkflowVersion, readAccepted } from '../packages/sdk/dist/store/workflowVersions.js';
import { type BenchContext, type ResultRow, median, ms, now, ratio, runPairs, scratchDir } from './lib/common.js';
import { pssOf, rssOf, supervisorPids } from './lib/processes.js';
import type { BenchProject } from './lib/services.js';
import type { CurvePoint } from './report.js';

/** Definitions of the scale project: `scale-1` … `scale-32` (the limit of project services, SPEC §3.4). */
const MAX_SERVICES = 32;
/** How long a batch's processes may take to be gone after `close()`, in ms. */
const GONE_WITHIN_MS = 5000;

/** The sizes of the curves. */
function sizes(quick: boolean): { invocations: number[]; services: number[] } {
  return quick
    ? { invocations: [1, 2, 8], services: [1, 2, 8] }
    : { invocations: [1, 2, 4, 8, 16, 32, 64], services: [1, 2, 4, 8, 16, 32] };
}

/** The scale project: its own data dir, 32 definitions, agents `pair` and `svc<k>` for each curve size. */
interface ScaleProject {
  paths: ProjectPaths;
  version: WorkflowVersion;
  workspace: string;
  registry: ProcessRegistry;
}

async function setupScaleProject(ctx: BenchContext, registry: ProcessRegistry): Promise<ScaleProject> {
  const dataDir = await scratchDir(ctx, 'data-scale');
  const workspace = join(dataDir, 'workspace');
  await mkdir(workspace, { recursive: true });
  const source = await readFile(join(ctx.repo, 'bench', 'fixtures', 'benchService.cjs'), 'utf8');
  const mcpDefinitions: Record<string, unknown> = {};
  for (let i = 1; i <= MAX_SERVICES; i++) {
    mcpDefinitions[`scale-${i}`] = {
      command: 'node',
      entrypoint: 'server.cjs',
      args: ['--instance', String(i)],
      files: { 'server.cjs': source },
    };
  }
  const entries = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `s${i + 1}`, project: `scale-${i + 1}` }));
  const agents: Record<string, unknown> = {
    main: { instructions: 'Benchmark host.', mcpServers: [] },
    pair: { instructions: 'Two services.', mcpServers: entries(2) },
  };
  for (const n of sizes(false).services) {
    agents[`svc${n}`] = { instructions: `${n} services.`, mcpServers: entries(n) };
  }
  const loaded = await loadWorkflow({
    dataDir,
    project: `bench-${ctx.token}-scale`,
    workflow: { agents, mcpDefinitions },
  });
  const paths = await openProject(dataDir, loaded.project);
  const version = await readAccepted(paths);
  if (version === undefined) throw new Error('the scale workflow was not accepted');
  return { paths, version, workspace, registry };
}

/** Memory of a set of processes, in bytes. */
interface Footprint {
  pss: number;
  rss: number;
  processes: number;
}

/**
 * The host (this process), its supervisor, and every service process carrying one of `markers` — not the
 * other helpers of the benchmark runner (tsx's esbuild service), which no real host has.
 */
function footprint(markers: ReadonlySet<string>): Footprint {
  const pids = [process.pid, ...supervisorPids(), ...(markers.size === 0 ? [] : carryingMarkers(markers))];
  let pss = 0;
  let rss = 0;
  for (const pid of pids) {
    pss += pssOf(pid);
    rss += rssOf(pid);
  }
  return { pss, rss, processes: pids.length };
}

/** A full garbage collection, so that the reading before a batch is of live objects. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (() => void) | undefined;
  gc?.();
}

/** The processes (pid) whose `SCIENCEEVOLVE_MARKER` is one of `markers`, in one pass over /proc. */
function carryingMarkers(markers: ReadonlySet<string>): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    const marker = environ.split('\0').find((v) => v.startsWith('SCIENCEEVOLVE_MARKER='));
    if (marker !== undefined && markers.has(marker.slice('SCIENCEEVOLVE_MARKER='.length))) {
      // A zombie waiting to be reaped is gone for this purpose.
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
        if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      } catch {
        continue;
      }
      found.push(Number(entry));
    }
  }
  return found;
}

/** Waits until no process carries any of `markers`; throws naming them after {@link GONE_WITHIN_MS}. */
async function assertGone(markers: ReadonlySet<string>, what: string): Promise<void> {
  const until = Date.now() + GONE_WITHIN_MS;
  let left = carryingMarkers(markers);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    left = carryingMarkers(markers);
  }
  if (left.length > 0) {
    throw new Error(`${left.length} process(es) of ${what} outlived close(): pids ${left.join(', ')}`);
  }
}

/** One batch: its wall time, memory before and at peak, the gate's figures, and its failures. */
interface Batch {
  wallMs: number;
  before: Footprint;
  peak: Footprint;
  /** Every service start's wait at the admission gate, in ms. */
  queuedMs: number[];
  /** Every service start's admission → ready, in ms. */
  startMs: number[];
  failures: string[];
}

/**
 * Starts `count` invocations of `agent` at once, measures, closes every one, and proves that nothing of
 * them is left.
 */
async function batch(project: ScaleProject, agent: string, count: number): Promise<Batch> {
  collectGarbage();
  const before = footprint(new Set());
  const queuedMs: number[] = [];
  const startMs: number[] = [];
  const onEvent = (event: ServiceEvent) => {
    if (event.type !== 'service.ready') return;
    queuedMs.push(event.queuedMs ?? 0);
    startMs.push(event.startMs);
  };
  const t0 = now();
  const settled = await Promise.allSettled(
    Array.from({ length: count }, () =>
      startInvocationServices({
        paths: project.paths,
        version: project.version,
        agent,
        runId: 'bench-scale',
        workspace: project.workspace,
        registry: project.registry,
        onEvent,
      }),
    ),
  );
  const wallMs = now() - t0;
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failures: string[] = [];
  for (const s of settled) {
    if (s.status === 'rejected') failures.push(s.reason instanceof Error ? s.reason.message : String(s.reason));
  }
  for (const s of started) for (const f of s.failures) failures.push(`${f.code}: ${f.message}`);
  let peak: Footprint;
  try {
    peak = footprint(new Set(started.map((s) => s.marker)));
  } finally {
    await Promise.allSettled(started.map((s: InvocationServices) => s.close()));
    await assertGone(new Set(started.map((s) => s.marker)), `${count} invocation(s) of ${agent}`);
  }
  return { wallMs, before, peak, queuedMs, startMs, failures };
}

/**
 * One point of a curve: the medians of its A batches against the baseline's B batches (what the page's
 * curve tables show, {@link CurvePoint}, and more for results.json).
 */
interface Point extends CurvePoint {
  /** Median wall time of the baseline (n = 1) beside it, ms. */
  baselineMs: number;
  /** The longest wait at the admission gate over all batches of the point, ms. */
  maxQueuedMs: number;
  /** The longest admission → ready over all batches of the point, ms. */
  maxStartMs: number;
  /** Processes of host + supervisor + services at peak (last batch). */
  processes: number;
}

/** Measures one point: `pairs` alternations of `count` × `agent` (A) against 1 × `baselineAgent` (B). */
async function measurePoint(
  ctx: BenchContext,
  project: ScaleProject,
  options: { label: string; n: number; pairs: number; agent: string; count: number; baselineAgent: string },
): Promise<{ point: Point; a: Batch[]; b: Batch[]; ratios: number[]; failureTexts: string[] }> {
  const loadStart = loadavg()[0]!;
  const a: Batch[] = [];
  const b: Batch[] = [];
  const result = await runPairs(ctx, options.label, {
    warmup: 0,
    pairs: options.pairs,
    a: async () => {
      const x = await batch(project, options.agent, options.count);
      a.push(x);
      return x.wallMs;
    },
    b: async () => {
      const x = await batch(project, options.baselineAgent, 1);
      b.push(x);
      return x.wallMs;
    },
  });
  const n = options.n;
  const maxOf = (values: number[]) => (values.length === 0 ? 0 : Math.max(...values));
  const failureTexts = a.flatMap((x) => x.failures);
  const point: Point = {
    n,
    pairs: options.pairs,
    wallMs: median(result.a),
    baselineMs: median(result.b),
    ratio: median(result.ratios),
    pssPerUnit: median(a.map((x) => (x.peak.pss - x.before.pss) / n)),
    rssPerUnit: median(a.map((x) => (x.peak.rss - x.before.rss) / n)),
    footprintPerUnit: median(a.map((x) => x.peak.pss / n)),
    maxQueuedMs: maxOf(a.flatMap((x) => x.queuedMs)),
    medianMaxQueuedMs: median(a.map((x) => maxOf(x.queuedMs))),
    maxStartMs: maxOf(a.flatMap((x) => x.startMs)),
    processes: a.at(-1)?.peak.processes ?? 0,
    failures: failureTexts.length,
    load: [loadStart, loadavg()[0]!],
  };
  return { point, a, b, ratios: result.ratios, failureTexts };
}

/** The baseline's own point (n = 1) from the B batches of a series. */
function baselinePoint(b: Batch[], pairs: number, load: [number, number]): Point {
  const maxOf = (values: number[]) => (values.length === 0 ? 0 : Math.max(...values));
  const wall = median(b.map((x) => x.wallMs));
  return {
    n: 1,
    pairs,
    wallMs: wall,
    baselineMs: wall,
    ratio: 1,
    pssPerUnit: median(b.map((x) => x.peak.pss - x.before.pss)),
    rssPerUnit: median(b.map((x) => x.peak.rss - x.before.rss)),
    footprintPerUnit: median(b.map((x) => x.peak.pss)),
    maxQueuedMs: maxOf(b.flatMap((x) => x.queuedMs)),
    medianMaxQueuedMs: median(b.map((x) => maxOf(x.queuedMs))),
    maxStartMs: maxOf(b.flatMap((x) => x.startMs)),
    processes: b.at(-1)?.peak.processes ?? 0,
    failures: b.flatMap((x) => x.failures).length,
    load,
  };
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const load1 = () => loadavg()[0]!.toFixed(2);

/** Rows 13, 14, 15a and 15b. */
export async function scaleBench(ctx: BenchContext, main: BenchProject): Promise<ResultRow[]> {
  const project = await setupScaleProject(ctx, main.registry);
  const curve = sizes(ctx.quick);
  // At least 5 pairs everywhere, quick or not (the house rule of every ratio); quick shrinks the sizes.
  const bigPairs = 5;
  const curvePairs = 5;
  const loadAtStart = load1();
  // Warm-up: one invocation of each kind (the copy, the era verdict of each digest, the compile cache).
  await batch(project, 'pair', 1);
  await batch(project, `svc${curve.services.at(-1)}`, 1);

  // 13: the largest number of concurrent invocations against one.
  const nMax = curve.invocations.at(-1)!;
  const big = await measurePoint(ctx, project, {
    label: `${nMax} invocations × 2`,
    n: nMax,
    pairs: bigPairs,
    agent: 'pair',
    count: nMax,
    baselineAgent: 'pair',
  });
  // 15a: the other points of the curve, each against one invocation beside it.
  const invocationPoints: Point[] = [];
  let oneInvocation: Batch[] = [...big.b];
  for (const n of curve.invocations.slice(1, -1)) {
    const p = await measurePoint(ctx, project, {
      label: `${n} invocations × 2`,
      n,
      pairs: curvePairs,
      agent: 'pair',
      count: n,
      baselineAgent: 'pair',
    });
    invocationPoints.push(p.point);
    oneInvocation = [...oneInvocation, ...p.b];
  }
  // The baseline's batches ran beside every series: from row 13's start to the last point's end.
  const invocationsEnd = invocationPoints.at(-1)?.load[1] ?? big.point.load[1];
  invocationPoints.push(big.point);
  invocationPoints.unshift(baselinePoint(oneInvocation, oneInvocation.length, [big.point.load[0], invocationsEnd]));

  // 14: the most services in one invocation against one service.
  const sMax = curve.services.at(-1)!;
  const many = await measurePoint(ctx, project, {
    label: `${sMax} services`,
    n: sMax,
    pairs: bigPairs,
    agent: `svc${sMax}`,
    count: 1,
    baselineAgent: 'svc1',
  });
  // 15b.
  const servicePoints: Point[] = [];
  let oneService: Batch[] = [...many.b];
  for (const n of curve.services.slice(1, -1)) {
    const p = await measurePoint(ctx, project, {
      label: `${n} services`,
      n,
      pairs: curvePairs,
      agent: `svc${n}`,
      count: 1,
      baselineAgent: 'svc1',
    });
    servicePoints.push(p.point);
    oneService = [...oneService, ...p.b];
  }
  const servicesEnd = servicePoints.at(-1)?.load[1] ?? many.point.load[1];
  servicePoints.push(many.point);
  servicePoints.unshift(baselinePoint(oneService, oneService.length, [many.point.load[0], servicesEnd]));
  const loadAtEnd = load1();

  const loaded = `figures taken on a shared, loaded machine (2 cores; load average ${loadAtStart} at the start of these rows, ${loadAtEnd} at the end), so absolute times are context only`;
  const memoryNote =
    'memory is PSS (/proc/<pid>/smaps_rollup, shared pages divided among the processes mapping them) summed over the host, its supervisor and every service process, read when every service of the batch is ready, minus the same sum before the batch (after a full GC); RSS beside it';
  const api = 'through the public API (`loadWorkflow`, then `startInvocationServices` with the host supervisor)';

  const b13 = big.point;
  const one13 = median(big.b.map((x) => x.wallMs));
  const onePss = median(big.b.map((x) => x.peak.pss - x.before.pss));
  const perInvocationRatio = b13.ratio / nMax;
  const row13: ResultRow = {
    id: '13',
    measure: `${nMax} concurrent invocations × 2 services, to every service ready: wall time and host memory per invocation`,
    baseline: '1 invocation × 2 services',
    ours: `${ms(b13.wallMs)} for ${nMax} (${ms(b13.wallMs / nMax)} per invocation); memory per invocation ${mib(b13.pssPerUnit)} PSS (RSS ${mib(b13.rssPerUnit)}), footprint with host and supervisor ${mib(b13.footprintPerUnit)}; gate queue wait: slowest ${ms(b13.maxQueuedMs)}, start after admission: slowest ${ms(b13.maxStartMs)}`,
    theirs: `${ms(one13)}; memory ${mib(onePss)} PSS`,
    figure: `${ratio(perInvocationRatio)} time per invocation (${ratio(b13.ratio)} the batch); ${b13.failures === 0 ? 'none failed' : `${b13.failures} failed`}`,
    goal: 'no start fails for queueing; queue wait apart; memory per invocation reported',
    verdict: b13.failures === 0 ? 'met' : 'missed',
    notes: `median of ${bigPairs} pairs (A B A B …) after a warm-up invocation, ${api}; the admission gate on with its defaults (one start per core, the 35 s startup budget counted from admission), the queue wait reported apart from the start; ${memoryNote}; ${b13.processes} processes at peak (host, supervisor, ${nMax * 2} services); every invocation's marker looked for in /proc after each batch (none left); ${loaded}${big.failureTexts.length > 0 ? `; failures: ${[...new Set(big.failureTexts)].slice(0, 3).join(' | ')}` : ''}`,
    data: {
      invocations: nMax,
      manyMs: big.a.map((x) => x.wallMs),
      oneMs: big.b.map((x) => x.wallMs),
      ratios: big.ratios,
      perInvocationRatio,
      pssGrowthBytes: big.a.map((x) => x.peak.pss - x.before.pss),
      rssGrowthBytes: big.a.map((x) => x.peak.rss - x.before.rss),
      peakPssBytes: big.a.map((x) => x.peak.pss),
      onePssGrowthBytes: big.b.map((x) => x.peak.pss - x.before.pss),
      slowestQueueMs: big.a.map((x) => Math.max(0, ...x.queuedMs)),
      slowestStartMs: big.a.map((x) => Math.max(0, ...x.startMs)),
      failures: big.failureTexts,
      point: b13,
    },
  };

  const m14 = many.point;
  const one14 = median(many.b.map((x) => x.wallMs));
  const oneServicePss = median(many.b.map((x) => x.peak.pss - x.before.pss));
  const row14: ResultRow = {
    id: '14',
    measure: `${sMax} services in one invocation: time to all ready and memory`,
    baseline: '1 service in one invocation',
    ours: `${ms(m14.wallMs)} (${ms(m14.wallMs / sMax)} per service); memory ${mib(m14.pssPerUnit * sMax)} PSS (${mib(m14.pssPerUnit)} per service; RSS ${mib(m14.rssPerUnit)} per service); gate queue wait: slowest ${ms(m14.maxQueuedMs)}`,
    theirs: `${ms(one14)}; memory ${mib(oneServicePss)} PSS`,
    figure: `${ratio(m14.ratio)} for ${sMax}× the services (${(m14.ratio / sMax).toFixed(2)} per service); ${m14.failures === 0 ? 'none failed' : `${m14.failures} failed`}`,
    goal: 'reported',
    verdict: m14.failures === 0 ? 'n/a' : 'missed',
    notes: `median of ${bigPairs} pairs after a warm-up invocation, ${api}; the ${sMax} services are ${sMax} definitions (distinct args, so none shares a process) started in parallel through the admission gate (one start per core); ${memoryNote}; ${m14.processes} processes at peak; ${loaded}${many.failureTexts.length > 0 ? `; failures: ${[...new Set(many.failureTexts)].slice(0, 3).join(' | ')}` : ''}`,
    data: {
      services: sMax,
      manyMs: many.a.map((x) => x.wallMs),
      oneMs: many.b.map((x) => x.wallMs),
      ratios: many.ratios,
      pssGrowthBytes: many.a.map((x) => x.peak.pss - x.before.pss),
      onePssGrowthBytes: many.b.map((x) => x.peak.pss - x.before.pss),
      failures: many.failureTexts,
      point: m14,
    },
  };

  const curveRow = (id: string, what: string, points: Point[], unit: string): ResultRow => {
    const last = points.at(-1)!;
    const failures = points.reduce((sum, p) => sum + p.failures, 0);
    return {
      id,
      measure: `growth curve: ${what} (the table under [Growth curve](#growth-curve))`,
      baseline: `1 ${unit}, beside each point`,
      ours: points.map((p) => `${p.n}: ${ms(p.wallMs)}`).join(', '),
      theirs: ms(median(points.map((p) => p.baselineMs))),
      figure: `${ratio(last.ratio / last.n)} time per ${unit} at ${last.n}`,
      goal: 'reported',
      verdict: failures === 0 ? 'n/a' : 'missed',
      notes: `each point is its own A/B series of ${curvePairs} pairs against 1 ${unit} (the largest point is row ${id === '15a' ? '13' : '14'}'s, ${bigPairs} pairs), ${api}; ${memoryNote}; ${loaded}`,
      data: { unit, points },
    };
  };
  return [
    row13,
    row14,
    curveRow('15a', 'concurrent invocations × 2 services', invocationPoints, 'invocation'),
    curveRow('15b', 'services in one invocation', servicePoints, 'service'),
  ];
}
