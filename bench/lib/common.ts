/**
 * What every benchmark shares: the run's context, the A/B pair runner (A B A B …, warm-up first, medians
 * of the pairs), latency percentiles, and the row format `run.ts` writes to `bench/results.json` and
 * `docs/benchmarks.md`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

/** The environment variable every process the benchmarks start directly carries (for the leftover check). */
export const BENCH_RUN_ENV = 'SCIENCEEVOLVE_BENCH_RUN';

/** One run of the benchmarks. */
export interface BenchContext {
  quick: boolean;
  /** A token unique to this run: in every project id and in {@link BENCH_RUN_ENV}. */
  token: string;
  /** The repository root. */
  repo: string;
  /** A scratch directory for this run, removed at the end. */
  scratch: string;
  log(message: string): void;
}

/** Whether a goal is met. `n/a` when there is no goal or nothing was measured. */
export type Verdict = 'met' | 'missed' | 'n/a' | 'not measured';

/** One line of the results table. */
export interface ResultRow {
  /** The benchmark's number in the goals table of docs/benchmarks.md (`GOALS` in bench/report.ts). */
  id: string;
  measure: string;
  baseline: string;
  /** The project's figure, human-readable (e.g. "352 ms"). */
  ours: string;
  /** The baseline's figure, human-readable. */
  theirs: string;
  /** The comparison the goal is about (e.g. "1.04×" or "+0.06 ms"). */
  figure: string;
  goal: string;
  verdict: Verdict;
  /** How it was measured, caveats. */
  notes: string;
  /** Raw figures for results.json. */
  data: Record<string, unknown>;
  /**
   * The run that measured the row (a run with `--only` keeps the other rows of the previous results, each
   * with its own run). Set by `run.ts`.
   */
  run?: RowRun;
}

/** When and how a row was measured. */
export interface RowRun {
  /** ISO 8601. */
  started: string;
  /** ISO 8601. */
  finished: string;
  /** `full` or `quick`. */
  mode: string;
  /** Load average (1/5/15 min) at the start and at the end of that run. */
  loadavgStart: number[];
  loadavgEnd: number[];
}

export const now = (): number => performance.now();

/** The median of a list of numbers (NaN for an empty list). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The nearest-rank percentile `p` (0–100) of a list of numbers. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** Milliseconds, rounded for reading. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value >= 100) return `${Math.round(value)} ms`;
  if (value >= 10) return `${value.toFixed(1)} ms`;
  return `${value.toFixed(2)} ms`;
}

export function ratio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}×` : '—';
}

/** The result of {@link runPairs}: A's samples, B's samples, and per-pair ratios A/B. */
export interface PairResult {
  a: number[];
  b: number[];
  ratios: number[];
  diffs: number[];
}

/**
 * Runs `warmup` untimed pairs, then `pairs` timed pairs, strictly alternating A B A B …. Each function
 * returns its own figure (a duration, or a p50 of a batch). The caller decides what a sample is.
 */
export async function runPairs(
  ctx: BenchContext,
  label: string,
  options: { warmup: number; pairs: number; a: () => Promise<number>; b: () => Promise<number> },
): Promise<PairResult> {
  const t0 = now();
  for (let i = 0; i < options.warmup; i++) {
    await options.a();
    await options.b();
  }
  if (options.warmup > 0) ctx.log(`  ${label} warm-up: ${((now() - t0) / 1000).toFixed(1)} s`);
  const result: PairResult = { a: [], b: [], ratios: [], diffs: [] };
  for (let i = 0; i < options.pairs; i++) {
    const a = await options.a();
    const b = await options.b();
    result.a.push(a);
    result.b.push(b);
    result.ratios.push(a / b);
    result.diffs.push(a - b);
    ctx.log(
      `  ${label} pair ${i + 1}/${options.pairs}: A ${a.toFixed(2)} B ${b.toFixed(2)} (A/B ${(a / b).toFixed(3)})`,
    );
  }
  return result;
}

/** Times one async step in milliseconds. */
export async function time(work: () => Promise<unknown>): Promise<number> {
  const start = now();
  await work();
  return now() - start;
}

/** A fresh directory under the run's scratch directory. */
export function scratchDir(ctx: BenchContext, prefix: string): Promise<string> {
  return mkdtemp(join(ctx.scratch, `${prefix}-`));
}

/** Creates the run's scratch directory. */
export function makeScratch(token: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `scienceevolve-bench-${token}-`));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** A row for a benchmark that could not run (an error is reported, never hidden). */
export function failedRow(id: string, measure: string, goal: string, error: unknown): ResultRow {
  const message = error instanceof Error ? error.message : String(error);
  return {
    id,
    measure,
    baseline: '—',
    ours: '—',
    theirs: '—',
    figure: '—',
    goal,
    verdict: 'not measured',
    notes: `the benchmark failed: ${message.split('\n')[0]}`,
    data: { error: message },
  };
}
