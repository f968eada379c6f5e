/**
 * Benchmarks of fair and warm starts.
 *
 * warm — a delegated invocation's wait for its services when the same agent is delegated again: a scripted run
 * through the engine (built SDK) in which Main delegates to a worker with 2 services, sleeps 1.5 s (the
 * time a worker's result takes to read) and delegates to it again; the wait is the second worker
 * invocation's `invocation.started` → `invocation.state running`. A: warm starts on (the default); B: the
 * same run with `prestart: false` (a cold start). Alternated, one run per sample.
 *
 * 7b — N concurrent invocations × 2 services (N = 64; 8 with --quick) through the admission gate with the
 * default 35 s startup budget (counted from admission): the slowest invocation's queue wait and its start
 * time (admission → ready) reported apart, and how many invocations failed their start; against
 * 1 invocation × 2 services, alternated.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { startRun } from '../packages/sdk/dist/engine/runs.js';
import type { RunEvent } from '../packages/sdk/dist/events/runEvents.js';
import { startInvocationServices } from '../packages/sdk/dist/invocation/invocation.js';
import { type BenchContext, type ResultRow, median, ms, now, ratio, runPairs, scratchDir } from './lib/common.js';
import type { BenchProject } from './lib/services.js';

const WARM_GOAL = 0.1;

export async function warmStartBench(ctx: BenchContext): Promise<ResultRow> {
  const dataDir = await scratchDir(ctx, 'data-warm');
  const workspace = join(dataDir, 'workspace');
  await mkdir(workspace, { recursive: true });
  const bench = await readFile(join(ctx.repo, 'bench', 'fixtures', 'benchService.cjs'), 'utf8');
  const sleeps = await readFile(join(ctx.repo, 'bench', 'fixtures', 'sleepService.cjs'), 'utf8');
  const scripted = (mcpServers: Array<{ name: string; project: string }>) => ({
    harness: { type: 'scripted' },
    instructions: '',
    mcpServers,
  });
  const workflow = {
    agents: {
      main: scripted([{ name: 'slow', project: 'slow' }]),
      analyst: scripted([
        { name: 'a', project: 'a' },
        { name: 'b', project: 'b' },
      ]),
    },
    mcpDefinitions: {
      slow: { command: 'node', entrypoint: 'server.cjs', files: { 'server.cjs': sleeps } },
      a: { command: 'node', entrypoint: 'server.cjs', args: ['--instance', 'a'], files: { 'server.cjs': bench } },
      b: { command: 'node', entrypoint: 'server.cjs', args: ['--instance', 'b'], files: { 'server.cjs': bench } },
    },
  };
  const analyst = [{ call: 'a__add', arguments: { a: 1, b: 2 } }, { final: '{{0}}' }];
  const script = {
    agents: {
      main: [
        { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'first' } },
        { call: 'slow__sleep', arguments: { ms: 1500 } },
        { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'second' } },
        { final: '{{0}} {{2}}' },
      ],
      analyst: [...analyst, ...analyst],
    },
  };
  let taken = 0;
  /** The cost where it does not pay: a whole run that delegates to the worker once, in ms. */
  const single = async (prestart: boolean): Promise<number> => {
    const t0 = now();
    const result = await startRun({
      dataDir,
      workspace,
      project: `bench-${ctx.token}-warm`,
      workflow,
      script: {
        agents: {
          main: [
            { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'once' } },
            { final: '{{0}}' },
          ],
          analyst,
        },
      },
      requirement: 'once',
      graceMs: 500,
      prestart,
    } as Parameters<typeof startRun>[0]).result;
    if (result.status !== 'succeeded') throw new Error(`the single-delegate run ended ${result.status}`);
    return now() - t0;
  };
  /** One run; the second worker invocation's wait for its services, in ms. */
  const once = async (prestart: boolean): Promise<number> => {
    const started = new Map<string, number>();
    const waits: number[] = [];
    const handle = startRun({
      dataDir,
      workspace,
      project: `bench-${ctx.token}-warm`,
      workflow,
      script,
      requirement: 'twice',
      graceMs: 500,
      prestart,
      onEvent: (event: RunEvent) => {
        if (!('agent' in event) || event.agent !== 'analyst') return;
        if (event.type === 'invocation.started') started.set(event.invocation, now());
        if (event.type === 'invocation.state' && event.to === 'running') {
          waits.push(now() - started.get(event.invocation)!);
        }
        if (event.type === 'service.ready' && event.prestarted) taken += 1;
      },
    } as Parameters<typeof startRun>[0]);
    const result = await handle.result;
    if (result.status !== 'succeeded' || waits.length !== 2) {
      throw new Error(`the warm-start run ended ${result.status}: ${JSON.stringify(result.error)}`);
    }
    return waits[1]!;
  };
  const pairs = ctx.quick ? 3 : 7;
  const result = await runPairs(ctx, 'second delegate', {
    warmup: 1,
    pairs,
    a: () => once(true),
    b: () => once(false),
  });
  const r = median(result.ratios);
  const cost = await runPairs(ctx, 'one delegate, whole run', {
    warmup: 0,
    pairs,
    a: () => single(true),
    b: () => single(false),
  });
  const costRatio = median(cost.ratios);
  return {
    id: 'warm',
    measure: "a delegated invocation's wait for its 2 services, the same agent delegated again (warm start)",
    baseline: 'the same invocation started cold (`prestart: false`)',
    ours: ms(median(result.a)),
    theirs: ms(median(result.b)),
    figure: `${r.toFixed(3)}×`,
    goal: `≤ ${WARM_GOAL}×`,
    verdict: r <= WARM_GOAL ? 'met' : 'missed',
    notes: `median of ${pairs} pairs after a warm-up pair; one scripted run per sample (Main delegates, sleeps 1.5 s, delegates again); the wait is invocation.started → running of the second delegate, surface building included; ${taken} warm service.ready events seen over the A runs. The cost where it does not pay — a whole run that delegates to the worker once, so its prestarted set is collected unused at the run end: ${ms(median(cost.a))} on against ${ms(median(cost.b))} off (${costRatio.toFixed(2)}×, median of ${pairs} pairs)`,
    data: {
      warmMs: result.a,
      coldMs: result.b,
      ratios: result.ratios,
      medianRatio: r,
      singleDelegateRunOnMs: cost.a,
      singleDelegateRunOffMs: cost.b,
      singleDelegateRatio: costRatio,
    },
  };
}

export async function admissionBench(ctx: BenchContext, project: BenchProject): Promise<ResultRow> {
  const n = ctx.quick ? 8 : 64;
  const pairs = ctx.quick ? 2 : 3;
  const slowestQueue: number[] = [];
  const slowestStart: number[] = [];
  const slowestWait: number[] = [];
  let failed = 0;
  let failedForQueue = 0;
  const codes = new Set<string>();

  const batch = async (count: number, record: boolean): Promise<number> => {
    const t0 = now();
    const all = await Promise.all(
      Array.from({ length: count }, async () => {
        let queued = 0;
        let start = 0;
        const services = await startInvocationServices({
          paths: project.paths,
          version: project.version,
          agent: 'pair',
          runId: 'bench',
          workspace: project.workspace,
          registry: project.registry,
          cancelOnFailure: true,
          onEvent: (event) => {
            if (event.type !== 'service.ready') return;
            queued = Math.max(queued, event.queuedMs ?? 0);
            start = Math.max(start, event.startMs);
          },
        });
        return { services, queued, start, wait: now() - t0 };
      }),
    );
    const elapsed = now() - t0;
    try {
      if (record) {
        slowestQueue.push(Math.max(...all.map((x) => x.queued)));
        slowestStart.push(Math.max(...all.map((x) => x.start)));
        slowestWait.push(Math.max(...all.map((x) => x.wait)));
        for (const x of all) {
          if (x.services.failures.length === 0) continue;
          failed += 1;
          for (const f of x.services.failures) codes.add(f.code);
          if (x.services.failures.some((f) => f.code === 'start_queue_timeout' || f.code === 'startup_timeout')) {
            failedForQueue += 1;
          }
        }
      }
    } finally {
      await Promise.allSettled(all.map((x) => x.services.close()));
    }
    return elapsed;
  };
  await batch(1, false);
  const result = await runPairs(ctx, `${n} invocations through the gate`, {
    warmup: 0,
    pairs,
    a: () => batch(n, true),
    b: () => batch(1, false),
  });
  const worstQueue = Math.max(...slowestQueue);
  const worstStart = Math.max(...slowestStart);
  return {
    id: '7b',
    measure: `${n} concurrent invocations × 2 services through the admission gate, default 35 s budget`,
    baseline: '1 invocation × 2 services',
    ours: `slowest invocation: queue wait ${ms(worstQueue)}, start (admission → ready) ${ms(worstStart)}, whole wait ${ms(Math.max(...slowestWait))}; ${failed} of ${n * pairs} invocations failed their start`,
    theirs: ms(median(result.b)),
    figure: `${failed === 0 ? 'none' : failed} failed; ${ratio(median(result.ratios))} the time of one`,
    goal: 'none fails for queueing; queue wait apart',
    verdict: failedForQueue === 0 && failed === 0 ? 'met' : 'missed',
    notes: `${pairs} pairs; the gate admits one start per core (2 here); a start's 35 s budget counts from its admission, the queue wait is its own figure${codes.size > 0 ? `; failure codes: ${[...codes].join(', ')}` : ''}`,
    data: {
      invocations: n,
      manyMs: result.a,
      oneMs: result.b,
      slowestQueueMs: slowestQueue,
      slowestStartMs: slowestStart,
      slowestWaitMs: slowestWait,
      failed,
      failedForQueue,
    },
  };
}
