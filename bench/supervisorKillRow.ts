/**
 * Benchmark 6: host SIGKILL → every process of every group gone. The measurement itself is
 * `bench/supervisorKill.ts` (written separately); this runs it as a child process and reads the last
 * JSON line it prints. When the file does not exist, the row says "not measured".
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_RUN_ENV, type BenchContext, type ResultRow, ms } from './lib/common.js';
import { exited, stopGroup } from './lib/processes.js';

const MEASURE = 'host SIGKILL → every process of every group gone';
const GOAL = '≤ 100 ms + grace (p95 over ≥ 20 trials)';

function pick(json: Record<string, unknown>, ...names: string[]): number | undefined {
  for (const name of names) {
    const value = json[name];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return undefined;
}

/** "label: p50 …, p95 … (grace …)" of one scenario of the script's JSON, when it has one. */
function scenario(value: unknown, label: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const p50 = pick(v, 'p50Ms');
  const p95 = pick(v, 'p95Ms');
  if (p95 === undefined) return undefined;
  const grace = pick(v, 'graceMs');
  const met = typeof v.met === 'boolean' ? (v.met ? 'met' : 'missed') : '';
  return `${label}: p50 ${ms(p50 ?? Number.NaN)}, p95 ${ms(p95)}${grace === undefined ? '' : ` (grace ${grace} ms)`}${met ? ` ${met}` : ''}`;
}

export async function supervisorKill(ctx: BenchContext): Promise<ResultRow[]> {
  const script = join(ctx.repo, 'bench', 'supervisorKill.ts');
  if (!existsSync(script)) {
    return [
      {
        id: '6',
        measure: MEASURE,
        baseline: '— (absolute)',
        ours: '—',
        theirs: '—',
        figure: '—',
        goal: GOAL,
        verdict: 'not measured',
        notes: 'not measured: bench/supervisorKill.ts did not exist when this run was made',
        data: {},
      },
    ];
  }
  // --quick: 3 trials and a 500 ms grace keep it within the quick run's budget (the goal is relative to the grace).
  const args = ctx.quick ? ['--quick', '--trials', '3', '--grace-ms', '500'] : [];
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ctx.repo,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, [BENCH_RUN_ENV]: ctx.token },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const limitMs = ctx.quick ? 60_000 : 180_000;
  const timer = setTimeout(() => void stopGroup(child), limitMs);
  try {
    await exited(child);
  } finally {
    clearTimeout(timer);
    await stopGroup(child);
  }
  const line = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'))
    .pop();
  if (child.exitCode !== 0 || line === undefined) {
    throw new Error(
      `bench/supervisorKill.ts exited with ${child.exitCode ?? child.signalCode} without a JSON line: ${stderr.trim().split('\n').slice(-3).join(' / ')}`,
    );
  }
  const json = JSON.parse(line) as Record<string, unknown>;
  const p95 = pick(json, 'p95Ms', 'p95', 'allGoneP95Ms');
  const p50 = pick(json, 'p50Ms', 'p50', 'allGoneP50Ms');
  const p99 = pick(json, 'p99Ms', 'p99', 'allGoneP99Ms');
  const grace = pick(json, 'graceMs', 'grace');
  const trials = pick(json, 'trials', 'n', 'count');
  const limit = 100 + (grace ?? 0);
  const verdict =
    p95 === undefined
      ? 'n/a'
      : typeof json.met === 'boolean'
        ? json.met
          ? 'met'
          : 'missed'
        : p95 <= limit
          ? 'met'
          : 'missed';
  return [
    {
      id: '6',
      measure: MEASURE,
      baseline: '— (absolute)',
      ours: `${scenario(json.ignoring, 'SIGTERM ignored') ?? `p50 ${ms(p50 ?? Number.NaN)}, p95 ${ms(p95 ?? Number.NaN)}, p99 ${ms(p99 ?? Number.NaN)}`}${scenario(json.honouring, 'SIGTERM honoured') === undefined ? '' : `; ${scenario(json.honouring, 'SIGTERM honoured')}`}`,
      theirs: '—',
      figure: `p95 ${ms(p95 ?? Number.NaN)}`,
      goal: grace === undefined ? GOAL : `≤ ${limit} ms (100 ms + ${grace} ms grace), p95`,
      verdict,
      notes: `measured by bench/supervisorKill.ts${args.map((a) => ` ${a}`).join('')}${trials === undefined ? '' : ` over ${trials} trials`}, run as a child; the figure and verdict are its SIGTERM-ignoring scenario (the worst case; met only when both scenarios are); its whole JSON is in results.json`,
      data: json,
    },
  ];
}
