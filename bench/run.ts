/**
 * Runs the benchmarks, each as a ratio against a baseline run alternately in this same process launch,
 * and writes `bench/results.json` and `docs/benchmarks.md`. The goals: `GOALS` in bench/report.ts, shown in
 * docs/benchmarks.md.
 *
 *   npm run bench                 the full run (< 10 minutes)
 *   npm run bench -- --quick      fewer samples, 8 instead of 64 concurrent invocations, scale curves up to 8
 *                                 (< 2 minutes)
 *   npm run bench -- --only 1,5   only the benchmarks named; the other rows keep their last figures, each
 *                                 marked with the run that measured it (from bench/results.json, or parsed
 *                                 from docs/benchmarks.md when there is none)
 *   npm run bench -- --note TEXT  a sentence about what else the machine was doing, for docs/benchmarks.md
 *   npm run bench -- --node24 P   the Node 24 binary for the rows measured on both runtimes (9, 10)
 *
 * Every process a benchmark starts is collected, also on error; at the end the run checks /proc for any
 * process carrying this run's marker or tag, kills and reports any it finds, and exits non-zero.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { NODE24_ENV, PROBE_GOAL, VALIDATE_GOAL, probeBench, validateBench } from './cliStart.js';
import { concurrentInvocations } from './concurrentInvocations.js';
import { copyBench } from './copy.js';
import { digestBench } from './digest.js';
import { BENCH_RUN_ENV, type BenchContext, type ResultRow, failedRow, makeScratch, removeDir } from './lib/common.js';
import { MODEL_LOOP_GOAL, modelLoopBench } from './modelLoop.js';
import { findLeftovers, killLeftovers, killWithEnv } from './lib/processes.js';
import { type BenchProject, closeSupervisor, setupProject } from './lib/services.js';
import { mergeRows, previousRows, writeReport } from './report.js';
import { sandboxStart } from './sandboxStart.js';
import { scaleBench } from './scale.js';
import { SERVICE_MEMORY_GOAL, serviceMemoryBench } from './serviceMemory.js';
import { eightServicesReady, oneServiceReady } from './serviceReady.js';
import { supervisorKill } from './supervisorKillRow.js';
import { queueBackendBench } from './queueBackend.js';
import { toolCallBench } from './toolCall.js';
import { admissionBench, warmStartBench } from './warmStarts.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Step {
  /** The benchmark number(s) of the brief. */
  ids: string[];
  name: string;
  goal: string;
  run: (ctx: BenchContext, project: BenchProject) => Promise<ResultRow[]>;
}

const STEPS: Step[] = [
  { ids: ['1'], name: 'one service to ready', goal: '≤ 1.10×', run: async (c, p) => [await oneServiceReady(c, p)] },
  { ids: ['2'], name: '8 services to ready', goal: '≤ 1.10×', run: async (c, p) => [await eightServicesReady(c, p)] },
  { ids: ['3'], name: 'per-invocation copy', goal: '≤ 1.20×', run: async (c) => [await copyBench(c)] },
  { ids: ['4'], name: 'definition digest', goal: '≥ 0.80×', run: (c) => digestBench(c) },
  { ids: ['5'], name: 'tools/call round trip', goal: 'see rows', run: (c, p) => toolCallBench(c, p) },
  { ids: ['6'], name: 'host SIGKILL → every process gone', goal: '≤ 100 ms + grace', run: (c) => supervisorKill(c) },
  {
    ids: ['7'],
    name: 'concurrent invocations × 2 services',
    goal: 'linear',
    run: (c, p) => concurrentInvocations(c, p),
  },
  {
    ids: ['7b'],
    name: 'concurrent invocations through the admission gate',
    goal: 'none fails for queueing',
    run: async (c, p) => [await admissionBench(c, p)],
  },
  {
    ids: ['warm'],
    name: "a delegated invocation's wait for its services, warm start",
    goal: '≤ 0.1×',
    run: async (c) => [await warmStartBench(c)],
  },
  {
    ids: ['8'],
    name: 'model-loop harness overhead per turn',
    goal: MODEL_LOOP_GOAL,
    run: async (c, p) => [await modelLoopBench(c, p)],
  },
  { ids: ['9'], name: 'validate, whole process', goal: `≤ ${VALIDATE_GOAL}×`, run: (c) => validateBench(c) },
  { ids: ['10'], name: 'services probe, whole process', goal: `≤ ${PROBE_GOAL}×`, run: (c, p) => probeBench(c, p) },
  {
    ids: ['11'],
    name: 'a service start inside the sandbox',
    goal: 'reported (≤ 1.15×)',
    run: async (c, p) => [await sandboxStart(c, p)],
  },
  {
    ids: ['16'],
    name: 'the memory one service costs (PSS)',
    goal: SERVICE_MEMORY_GOAL,
    run: async (c, p) => [await serviceMemoryBench(c, p)],
  },
  {
    ids: ['12'],
    name: 'the queue backend over 1, 2, 3 local workers',
    goal: "reported: the queue's overhead on one machine",
    run: (c) => queueBackendBench(c),
  },
  {
    ids: ['13', '14', '15'],
    name: 'scale: concurrent invocations, services in one invocation, the growth curve',
    goal: 'reported',
    run: (c, p) => scaleBench(c, p),
  },
];

function machineState(): { loadavg: number[]; busiest: string[] } {
  let busiest: string[] = [];
  try {
    busiest = execFileSync('ps', ['-eo', 'pcpu,rss,comm', '--sort=-pcpu'], { encoding: 'utf8' })
      .split('\n')
      .slice(1)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !/ ps$/.test(l))
      .slice(0, 5);
  } catch {
    // ps is missing: the load average alone says enough.
  }
  return { loadavg: loadavg().map((l) => Number(l.toFixed(2))), busiest };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      note: { type: 'string' },
      node24: { type: 'string' },
    },
    allowPositionals: false,
  });
  if (values.node24 !== undefined) process.env[NODE24_ENV] = values.node24;
  const only = values.only?.split(',').map((s) => s.trim());
  const token = randomBytes(4).toString('hex');
  // Every process this run starts directly inherits the tag (services get their minimal env and the marker).
  process.env[BENCH_RUN_ENV] = token;
  const scratch = await makeScratch(token);
  // Interrupted: kill every process of this run (detached ones would otherwise outlive it), then go. The
  // supervisors are spared: once their host (this process, or a `services serve`) is gone they collect
  // its services, which carry the marker rather than the tag.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      process.stderr.write(`\n${signal}: collecting this run's processes\n`);
      void killWithEnv(BENCH_RUN_ENV, token, 3000, { spareSupervisors: true })
        .then(() => removeDir(scratch))
        .finally(() => process.exit(130));
    });
  }
  const started = new Date();
  const ctx: BenchContext = {
    quick: values.quick,
    token,
    repo,
    scratch,
    log: (message) => process.stderr.write(`${message}\n`),
  };
  ctx.log(`bench ${ctx.quick ? '--quick ' : ''}run ${token}, scratch ${scratch}`);
  const before = machineState();
  const rows: ResultRow[] = [];
  const timings: Record<string, number> = {};
  let project: BenchProject | undefined;
  try {
    project = await setupProject(ctx, 'main');
    for (const step of STEPS) {
      if (only !== undefined && !step.ids.some((id) => only.includes(id))) continue;
      const t0 = Date.now();
      ctx.log(`[${step.ids.join(',')}] ${step.name}`);
      try {
        rows.push(...(await step.run(ctx, project)));
      } catch (error) {
        ctx.log(`  failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        rows.push(failedRow(step.ids[0]!, step.name, step.goal, error));
      }
      timings[step.ids.join(',')] = Date.now() - t0;
      ctx.log(`  (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
  } finally {
    await closeSupervisor().catch((error) => ctx.log(`closing the supervisor failed: ${String(error)}`));
  }

  // Nothing may be left behind: wait a moment for exits in flight, then look.
  let leftovers = findLeftovers(token);
  for (let i = 0; i < 50 && leftovers.ours.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    leftovers = findLeftovers(token);
  }
  if (leftovers.ours.length > 0) {
    ctx.log(`LEFTOVER PROCESSES (killed now): ${JSON.stringify(leftovers.ours, null, 2)}`);
    killLeftovers(leftovers.ours);
  }
  await removeDir(scratch);

  const after = machineState();
  const finished = new Date();
  const cpu = cpus()[0]?.model ?? 'unknown';
  const machine = {
    nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
    cpu,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    memoryGiB: Number((totalmem() / 2 ** 30).toFixed(1)),
    freeMemoryGiB: Number((freemem() / 2 ** 30).toFixed(1)),
    before,
    after,
  };
  const thisRun = {
    started: started.toISOString(),
    finished: finished.toISOString(),
    mode: ctx.quick ? 'quick' : 'full',
    loadavgStart: before.loadavg,
    loadavgEnd: after.loadavg,
  };
  for (const row of rows) row.run = thisRun;
  const resultsPath = join(repo, 'bench', 'results.json');
  const reportPath = join(repo, 'docs', 'benchmarks.md');
  // `--only`: the rows of every other benchmark stay, each with the run that measured it.
  const allRows = only === undefined ? rows : mergeRows(rows, await previousRows(resultsPath, reportPath));
  const results = {
    mode: ctx.quick ? 'quick' : 'full',
    only: only ?? null,
    note: values.note ?? null,
    started: started.toISOString(),
    finished: finished.toISOString(),
    durationS: Number(((finished.getTime() - started.getTime()) / 1000).toFixed(1)),
    stepMs: timings,
    machine,
    leftovers: leftovers.ours,
    otherMarkedProcesses: leftovers.foreignMarked,
    rows: allRows,
  };
  await writeFile(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  await writeReport(reportPath, results);
  ctx.log(`\nwrote bench/results.json and docs/benchmarks.md in ${results.durationS} s`);
  for (const r of rows) ctx.log(`${r.id.padEnd(3)} ${r.verdict.padEnd(12)} ${r.figure.padEnd(12)} ${r.measure}`);
  if (leftovers.ours.length > 0) {
    ctx.log(`${leftovers.ours.length} process(es) were left behind: a collection bug`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
