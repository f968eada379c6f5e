/**
 * Benchmark 11: the cost of the sandbox on a service start. The same service (`bench/fixtures/benchService.cjs`,
 * agent `solo`) started to ready through the invocation path inside bubblewrap (a project whose workflow says
 * `"sandbox": "required"`) and outside it (the main benchmark project, whose workflow says `"sandbox": "off"`), alternated A B A B in this one launch. Only the start is timed; each side is
 * collected, untimed, before the other starts. Without a working bubblewrap the row says so.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { hostSupervisor } from '../packages/sdk/dist/invocation/hostSupervision.js';
import { sandboxAvailability } from '../packages/sdk/dist/processes/sandbox.js';
import { openProject } from '../packages/sdk/dist/store/projectStore.js';
import { loadWorkflow } from '../packages/sdk/dist/store/workflowLoad.js';
import { readAccepted } from '../packages/sdk/dist/store/workflowVersions.js';
import {
  type BenchContext,
  type ResultRow,
  median,
  ms,
  now,
  percentile,
  ratio,
  runPairs,
  scratchDir,
} from './lib/common.js';
import { type BenchProject, benchWorkflow, startOurs } from './lib/services.js';

/** The goal of BENCH.md: reported, ≤ 1.15×. */
const GOAL = 1.15;
const MEASURE = 'a service start inside the sandbox (bubblewrap)';
const BASELINE = 'the same start outside it, alternated in one launch';

/** The benchmark workflow with every service sandboxed, in its own data dir. */
export async function sandboxedProject(ctx: BenchContext): Promise<BenchProject> {
  const dataDir = await scratchDir(ctx, 'data-sandboxed');
  const projectId = `bench-${ctx.token}-sandboxed`;
  const workspace = join(dataDir, 'workspace');
  await mkdir(workspace, { recursive: true });
  const workflow = { ...(await benchWorkflow(ctx.repo)), orchestration: { sandbox: 'required' } };
  const loaded = await loadWorkflow({ dataDir, project: projectId, workflow });
  const paths = await openProject(dataDir, loaded.project);
  const version = await readAccepted(paths);
  if (version === undefined) throw new Error('the sandboxed benchmark workflow was not accepted');
  const registry = await hostSupervisor(paths);
  return { paths, version, projectId, dataDir, workspace, baselineRoot: dataDir, registry };
}

/** Benchmark 11. */
export async function sandboxStart(ctx: BenchContext, project: BenchProject): Promise<ResultRow> {
  const available = await sandboxAvailability(process.env);
  if (!available.ok) {
    return {
      id: '11',
      measure: MEASURE,
      baseline: BASELINE,
      ours: '—',
      theirs: '—',
      figure: '—',
      goal: `reported (≤ ${GOAL.toFixed(2)}×)`,
      verdict: 'not measured',
      notes: `no sandbox on this machine: ${available.detail}`,
      data: {},
    };
  }
  const sandboxed = await sandboxedProject(ctx);
  const pairs = ctx.quick ? 5 : 10;
  const warmup = ctx.quick ? 1 : 2;
  const start = async (p: BenchProject, sandbox: boolean): Promise<number> => {
    const t0 = now();
    const services = await startOurs(p, 'solo');
    const elapsed = now() - t0;
    const decision = services.outcomes[0]?.sandbox;
    await services.close();
    if (decision?.sandboxed !== sandbox)
      throw new Error(`expected sandboxed=${sandbox}, got ${JSON.stringify(decision)}`);
    return elapsed;
  };
  const result = await runPairs(ctx, 'sandboxed start', {
    warmup,
    pairs,
    a: () => start(sandboxed, true),
    b: () => start(project, false),
  });
  const r = median(result.ratios);
  const diff = median(result.diffs);
  return {
    id: '11',
    measure: MEASURE,
    baseline: BASELINE,
    ours: `${ms(median(result.a))} (p99 ${ms(percentile(result.a, 99))})`,
    theirs: `${ms(median(result.b))} (p99 ${ms(percentile(result.b, 99))})`,
    figure: ratio(r),
    goal: `reported (≤ ${GOAL.toFixed(2)}×)`,
    verdict: r <= GOAL ? 'met' : 'missed',
    notes: `median of ${pairs} A/B pairs after ${warmup} warm-up pair(s); median extra ${ms(diff)} per start; ${available.bwrap}; the one probe run of bubblewrap happened before the timed pairs`,
    data: { oursMs: result.a, baselineMs: result.b, ratios: result.ratios, diffsMs: result.diffs, medianRatio: r },
  };
}
