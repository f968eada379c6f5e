/**
 * Benchmarks 1 and 2: services to ready (copy, environment, spawn, initialize, every list) through our
 * invocation path vs. a script using the official SDK v1 client on the same service with the same
 * process layout (see `lib/services.ts`). Only the start is timed; each side is collected after its
 * sample, untimed, before the other side starts.
 */
import { type BenchContext, type ResultRow, median, ms, now, percentile, ratio, runPairs } from './lib/common.js';
import {
  type BenchProject,
  PARALLEL,
  SERVICE,
  definitionsOf,
  startBaseline,
  startBaselines,
  startOurs,
} from './lib/services.js';

const GOAL = 1.1;

function row(
  id: string,
  measure: string,
  baseline: string,
  a: number[],
  b: number[],
  ratios: number[],
  notes: string,
): ResultRow {
  const r = median(ratios);
  return {
    id,
    measure,
    baseline,
    ours: `${ms(median(a))} (p99 ${ms(percentile(a, 99))})`,
    theirs: `${ms(median(b))} (p99 ${ms(percentile(b, 99))})`,
    figure: ratio(r),
    goal: `≤ ${GOAL.toFixed(2)}×`,
    verdict: r <= GOAL ? 'met' : 'missed',
    notes,
    data: { oursMs: a, baselineMs: b, ratios, medianRatio: r },
  };
}

/** Benchmark 1: one service to ready. */
export async function oneServiceReady(ctx: BenchContext, project: BenchProject): Promise<ResultRow> {
  const pairs = ctx.quick ? 5 : 10;
  const warmup = ctx.quick ? 1 : 2;
  const result = await runPairs(ctx, 'one service', {
    warmup,
    pairs,
    a: async () => {
      const start = now();
      const services = await startOurs(project, 'solo');
      const elapsed = now() - start;
      await services.close();
      return elapsed;
    },
    b: async () => {
      const start = now();
      const service = await startBaseline(project, SERVICE);
      const elapsed = now() - start;
      await service.close();
      return elapsed;
    },
  });
  return row(
    '1',
    'one service to ready (copy, env, spawn, initialize, every list)',
    'official SDK v1 client script, same service and layout',
    result.a,
    result.b,
    result.ratios,
    `median of ${pairs} A/B pairs after ${warmup} warm-up pair(s); ours with the host supervisor registered (as users run it); close not timed`,
  );
}

/** Benchmark 2: eight services to ready in parallel. */
export async function eightServicesReady(ctx: BenchContext, project: BenchProject): Promise<ResultRow> {
  const pairs = ctx.quick ? 5 : 6;
  // The quick run relies on benchmark 1's warm-up of the same path.
  const warmup = ctx.quick ? 0 : 1;
  const definitions = definitionsOf(project, 'eight');
  if (definitions.length !== PARALLEL) throw new Error(`agent eight has ${definitions.length} services`);
  const result = await runPairs(ctx, 'eight services', {
    warmup,
    pairs,
    a: async () => {
      const start = now();
      const services = await startOurs(project, 'eight');
      const elapsed = now() - start;
      await services.close();
      return elapsed;
    },
    b: async () => {
      const start = now();
      const started = await startBaselines(project, definitions);
      const elapsed = now() - start;
      await Promise.all(started.map((s) => s.close()));
      return elapsed;
    },
  });
  return row(
    '2',
    `${PARALLEL} services to ready, in parallel`,
    `the same script starting ${PARALLEL} in parallel`,
    result.a,
    result.b,
    result.ratios,
    `median of ${pairs} A/B pairs after ${warmup} warm-up pair(s); ours: one invocation of ${PARALLEL} services (one budget)`,
  );
}
