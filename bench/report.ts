/**
 * Writes `docs/benchmarks.md` from a run's results: the table, each row's method, the machine. A run with
 * `--only` measures some rows; {@link mergeRows} keeps every other row of the previous results with the
 * run that measured it, so the page never loses a row.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { ResultRow, RowRun } from './lib/common.js';

export interface RunResults {
  mode: string;
  only: string[] | null;
  note: string | null;
  started: string;
  finished: string;
  durationS: number;
  machine: {
    nproc: number;
    cpu: string;
    node: string;
    platform: string;
    memoryGiB: number;
    freeMemoryGiB: number;
    before: { loadavg: number[]; busiest: string[] };
    after: { loadavg: number[]; busiest: string[] };
  };
  leftovers: unknown[];
  otherMarkedProcesses: number;
  rows: ResultRow[];
}

/**
 * The goals every benchmark is held to (numbered as the rows of the results table; rows without a number
 * are not built yet). Each is a ratio against a baseline run beside it, except the SIGKILL row.
 */
export const GOALS: ReadonlyArray<{ id: string; measure: string; baseline: string; goal: string }> = [
  {
    id: '1',
    measure: 'one service to ready (copy, env, spawn, initialize, every list)',
    baseline: 'a script using the official SDK client on the same service, same process layout',
    goal: '≤ 1.10×',
  },
  {
    id: '2',
    measure: '8 services to ready, in parallel',
    baseline: 'the same script starting 8 in parallel',
    goal: '≤ 1.10×',
  },
  {
    id: '5a',
    measure: '`tools/call` through the in-process surface',
    baseline: 'direct official client',
    goal: '≤ +0.1 ms p50',
  },
  {
    id: '5b',
    measure: '`tools/call` through the stdio bridge',
    baseline: 'direct official client',
    goal: '≤ 1.5× p50',
  },
  {
    id: '5c',
    measure: '`tools/call` through the HTTP face',
    baseline: 'supergateway `--stateful` in front of the same service',
    goal: '≤ 0.5× p50',
  },
  { id: '3', measure: 'per-invocation copy, 100 files × 500 KB', baseline: '`cp -r` of the same tree', goal: '≤ 1.2×' },
  {
    id: '4',
    measure: 'digest of the same definition (up to the 1 MiB limit of `mcpDefinitions`)',
    baseline: '`sha256sum` over the same bytes',
    goal: '≥ 0.8× throughput',
  },
  {
    id: '6',
    measure: 'host SIGKILL → every process of every group gone',
    baseline: '— (absolute, p95 over ≥ 20 trials)',
    goal: '≤ 100 ms + grace',
  },
  {
    id: '7',
    measure: '64 concurrent invocations × 2 services',
    baseline: '1 invocation × 2 services',
    goal: 'no start fails its budget for queueing; queue wait reported apart; host memory per invocation reported',
  },
  {
    id: '7b',
    measure: '64 concurrent invocations × 2 services through the admission gate, default 35 s budget',
    baseline: '1 invocation × 2 services',
    goal: 'none fails its start for queueing; the slowest queue wait and start time reported apart',
  },
  {
    id: '8',
    measure: 'model-loop harness overhead per turn, against a local model server',
    baseline: "the provider library's own tool loop calling the same tools directly",
    goal: '≤ +1 ms per turn',
  },
  {
    id: '9',
    measure: 'a cheap command (`validate` of a small workflow), whole process, on Node 20 (9a) and 24 (9b)',
    baseline: '`node -e 0`',
    goal: '≤ 1.3×',
  },
  {
    id: '10',
    measure: '`services probe` of one service, whole process, on Node 20 (10a) and 24 (10b)',
    baseline: 'a script with the official client doing the same start, list and close',
    goal: '≤ 1.10×',
  },
  {
    id: 'warm',
    measure: "a delegated invocation's wait for its services, warm start",
    baseline: 'the same invocation started cold',
    goal: '≤ 0.1×',
  },
  {
    id: '11',
    measure: 'a service start inside the sandbox',
    baseline: 'the same start outside it',
    goal: 'reported (goal ≤ 1.15×)',
  },
  {
    id: '12',
    measure: 'the queue backend: 64 invocations over 1, 2, 3 local workers',
    baseline: 'the same 64 in one process',
    goal: "reported: the queue's overhead on one machine",
  },
  {
    id: '13',
    measure: '64 concurrent invocations × 2 services, wall time and host memory per invocation (admission gate on)',
    baseline: '1 invocation × 2 services',
    goal: 'no start fails for queueing; queue wait reported apart; host memory per invocation reported',
  },
  {
    id: '14',
    measure: '32 services in one invocation: time to all ready, and memory',
    baseline: '1 service in one invocation',
    goal: 'reported',
  },
  {
    id: '15',
    measure:
      'the growth curve: 1 … 64 concurrent invocations × 2 services (15a), 1 … 32 services in one invocation (15b)',
    baseline: '1 invocation (1 service) beside each point',
    goal: 'reported ([Growth curve](#growth-curve))',
  },
  {
    id: '16',
    measure: "the memory one service costs (PSS): the service, its sandbox processes and the supervisor's growth",
    baseline: 'the same service started by the official v1 client',
    goal: 'reported',
  },
];

/** One point of a growth curve (rows 15a and 15b, written by bench/scale.ts). */
export interface CurvePoint {
  /** Concurrent invocations (15a) or services in one invocation (15b). */
  n: number;
  pairs: number;
  /** Median wall time of the batch to every service ready, ms. */
  wallMs: number;
  /** Median of the per-pair ratios against the baseline beside it. */
  ratio: number;
  /** Median PSS growth per invocation (15a) or per service (15b), bytes. */
  pssPerUnit: number;
  /** The same in RSS, bytes. */
  rssPerUnit: number;
  /** Median PSS at peak of host + supervisor + services, divided by n, bytes. */
  footprintPerUnit: number;
  /** The median over the batches of each batch's longest wait at the admission gate, ms. */
  medianMaxQueuedMs: number;
  failures: number;
  /** Load average (1 min) when the point started and ended. */
  load: [number, number];
}

function curveOf(row: ResultRow | undefined): CurvePoint[] | undefined {
  const points = row?.data.points;
  if (!Array.isArray(points) || points.length === 0) return undefined;
  return points as CurvePoint[];
}

const MiB = 2 ** 20;
const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
const msText = (value: number) => (Number.isFinite(value) ? `${Math.round(value)} ms` : '—');

/** A bar chart in a code block: one line per point, the bar proportional to `value`. */
function bars(label: string, points: readonly CurvePoint[], value: (p: CurvePoint) => number, unit: string): string[] {
  const max = Math.max(...points.map(value).filter(Number.isFinite));
  const width = 40;
  const lines = ['```', label];
  for (const p of points) {
    const v = value(p);
    const length = Number.isFinite(v) && max > 0 ? Math.max(1, Math.round((v / max) * width)) : 0;
    lines.push(`${String(p.n).padStart(4)} │${'█'.repeat(length)} ${fixed(v, 0)} ${unit}`);
  }
  lines.push('```');
  return lines;
}

/**
 * The "Growth curve" section: rows 15a and 15b as tables (and bar charts of the time per unit), from the
 * raw points in bench/results.json. Empty when those rows carry no points (read back from the page).
 */
export function renderCurves(rows: readonly ResultRow[]): string[] {
  const invocations = curveOf(rows.find((r) => r.id === '15a'));
  const services = curveOf(rows.find((r) => r.id === '15b'));
  if (invocations === undefined && services === undefined) return [];
  const lines: string[] = ['## Growth curve', ''];
  lines.push(
    'How the time to every service ready and the host memory grow with the load (rows 15a and 15b; their ' +
      'largest points are rows 13 and 14). Each point is the median of its own A/B series against one ' +
      'invocation (one service) started beside it; "× one" is the median of the per-pair ratios, so it ' +
      'holds up on a loaded machine better than the absolute times. Memory is PSS (shared pages divided ' +
      'among the processes that map them) of the host, its supervisor and every service process at the ' +
      'moment all are ready, minus the same sum before the batch; "footprint" is the whole sum at that ' +
      'moment divided by the count, the host (here the benchmark runner) and supervisor included. The ' +
      'admission gate admits one start per core (2 here), so a batch queues: "gate wait" is the slowest ' +
      "start's wait for its turn (median over the batches), outside every start's 35 s budget.",
  );
  lines.push('');
  if (invocations !== undefined) {
    lines.push('### Concurrent invocations × 2 services (15a)');
    lines.push('');
    lines.push(
      '| invocations | batch to ready | per invocation | × one (batch) | × one, per invocation | gate wait | memory per invocation (PSS) | RSS per invocation | footprint per invocation | failed | load (1 min) |',
    );
    lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
    for (const p of invocations) {
      lines.push(
        `| ${p.n} | ${msText(p.wallMs)} | ${msText(p.wallMs / p.n)} | ${fixed(p.ratio, 2)}× | ${fixed(p.ratio / p.n, 2)}× | ${msText(p.medianMaxQueuedMs)} | ${fixed(p.pssPerUnit / MiB, 1)} MiB | ${fixed(p.rssPerUnit / MiB, 1)} MiB | ${fixed(p.footprintPerUnit / MiB, 1)} MiB | ${p.failures} | ${p.load.map((l) => fixed(l, 2)).join(' → ')} |`,
      );
    }
    lines.push('');
    lines.push(...bars('invocations   wall time per invocation', invocations, (p) => p.wallMs / p.n, 'ms'));
    lines.push('');
  }
  if (services !== undefined) {
    lines.push('### Services in one invocation (15b)');
    lines.push('');
    lines.push(
      '| services | to all ready | per service | × one service | × one, per service | gate wait | memory per service (PSS) | RSS per service | footprint per service | failed | load (1 min) |',
    );
    lines.push('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
    for (const p of services) {
      lines.push(
        `| ${p.n} | ${msText(p.wallMs)} | ${msText(p.wallMs / p.n)} | ${fixed(p.ratio, 2)}× | ${fixed(p.ratio / p.n, 2)}× | ${msText(p.medianMaxQueuedMs)} | ${fixed(p.pssPerUnit / MiB, 1)} MiB | ${fixed(p.rssPerUnit / MiB, 1)} MiB | ${fixed(p.footprintPerUnit / MiB, 1)} MiB | ${p.failures} | ${p.load.map((l) => fixed(l, 2)).join(' → ')} |`,
      );
    }
    lines.push('');
    lines.push(...bars('services   time to all ready', services, (p) => p.wallMs, 'ms'));
    lines.push('');
  }
  return lines;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const VERDICT: Record<ResultRow['verdict'], string> = {
  met: '**met**',
  missed: '**MISSED**',
  'n/a': 'n/a',
  'not measured': 'not measured',
};

/** The benchmark number a row belongs to: `5` for `5a`. */
const stepOf = (id: string): string => /^\d+/.exec(id)?.[0] ?? id;

/** Orders rows by benchmark number, then suffix; rows with the same id keep their order. */
function byId(a: ResultRow, b: ResultRow): number {
  const n = Number(stepOf(a.id)) - Number(stepOf(b.id));
  if (n !== 0 && Number.isFinite(n)) return n;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * This run's rows, plus every previous row of a benchmark this run did not measure (by benchmark number:
 * running `5` replaces `5a`, `5b` and `5c`). Each previous row keeps the run that measured it.
 */
export function mergeRows(current: readonly ResultRow[], previous: readonly ResultRow[]): ResultRow[] {
  const measured = new Set(current.map((row) => stepOf(row.id)));
  const kept = previous.filter((row) => !measured.has(stepOf(row.id)));
  return [...kept, ...current].sort(byId);
}

/**
 * The rows of the last results, each with its run: from `bench/results.json` when it exists, else parsed
 * from `docs/benchmarks.md` as this generator writes it (the raw samples are then not available). An
 * empty list when neither exists.
 */
export async function previousRows(resultsPath: string, reportPath: string): Promise<ResultRow[]> {
  const json = await readFile(resultsPath, 'utf8').catch(() => undefined);
  if (json !== undefined) {
    const results = JSON.parse(json) as RunResults;
    const own = runOf(results);
    return results.rows.map((row) => ({ ...row, run: row.run ?? own }));
  }
  const page = await readFile(reportPath, 'utf8').catch(() => undefined);
  return page === undefined ? [] : rowsFromPage(page);
}

function runOf(r: RunResults): RowRun {
  return {
    started: r.started,
    finished: r.finished,
    mode: r.mode,
    loadavgStart: r.machine.before.loadavg,
    loadavgEnd: r.machine.after.loadavg,
  };
}

/** Splits a Markdown table line on the `|` that `cell` did not escape. */
function cellsOf(line: string): string[] {
  const cells: string[] = [];
  let current = '';
  for (let i = 1; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && line[i + 1] === '|') {
      current += '|';
      i++;
    } else if (c === '|') {
      cells.push(current.trim());
      current = '';
    } else current += c;
  }
  return cells;
}

const VERDICT_OF: Record<string, ResultRow['verdict']> = {
  '**met**': 'met',
  '**MISSED**': 'missed',
  'n/a': 'n/a',
  'not measured': 'not measured',
};

/** The rows of a page this generator wrote (before rows carried their run, the page's one run). */
export function rowsFromPage(page: string): ResultRow[] {
  const lines = page.split('\n');
  const runLine = /^\*\*Run:\*\* (\w+).*?, (\S+) → (\S+) \(/.exec(lines.find((l) => l.startsWith('**Run:**')) ?? '');
  const load = /load average \(1\/5\/15 min\) ([\d. /]+) at the start and ([\d. /]+) at the end/.exec(page);
  const numbers = (text: string | undefined) => (text ?? '').split('/').map((n) => Number(n.trim()));
  const pageRun: RowRun | undefined =
    runLine === null
      ? undefined
      : {
          mode: runLine[1]!,
          started: runLine[2]!,
          finished: runLine[3]!,
          loadavgStart: numbers(load?.[1]),
          loadavgEnd: numbers(load?.[2]),
        };
  // Rows of several runs: each run is a line of the "Runs" section, found by the row's "measured" label.
  const runs = new Map<string, RowRun>();
  if (pageRun !== undefined) runs.set(runLabel(pageRun), pageRun);
  for (const line of lines) {
    const run = /^- (.+?) \((\S+) → (\S+)\): rows .*; load ([\d. /]+) → ([\d. /]+) on/.exec(line);
    if (run === null) continue;
    runs.set(run[1]!, {
      mode: run[1]!.split(', ').at(-1)!,
      started: run[2]!,
      finished: run[3]!,
      loadavgStart: numbers(run[4]),
      loadavgEnd: numbers(run[5]),
    });
  }
  const header = lines.findIndex((l) => l.startsWith('| # | measure | baseline | ours |'));
  if (header < 0) return [];
  // `cell` escaped the pipes of a note; the note itself has none escaped.
  const notes = lines
    .filter((l) => l.startsWith('- **'))
    .map((l) => /^- \*\*([^*]*)\*\* (.*)\.$/.exec(l))
    .map((n) => (n === null ? null : ([n[1]!, n[2]!.replace(/\\\|/g, '|')] as const)));
  const rows: ResultRow[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const [id, measure, baseline, ours, theirs, figure, goal, verdict, measuredIn] = cellsOf(line);
    const note = notes.find((n) => n !== null && n[0] === id && !rows.some((r) => r.notes === n[1]));
    rows.push({
      id: id ?? '',
      measure: measure ?? '',
      baseline: baseline ?? '',
      ours: ours ?? '',
      theirs: theirs ?? '',
      figure: figure ?? '',
      goal: goal ?? '',
      verdict: VERDICT_OF[verdict ?? ''] ?? 'not measured',
      notes: note?.[1] ?? '',
      data: { source: 'docs/benchmarks.md (the raw samples of that run were not kept)' },
      ...(measuredIn === undefined
        ? pageRun === undefined
          ? {}
          : { run: pageRun }
        : runs.has(measuredIn)
          ? { run: runs.get(measuredIn)! }
          : {}),
    });
  }
  return rows;
}

/** "2026-11-29 15:09 UTC, full" */
function runLabel(run: RowRun | undefined): string {
  if (run === undefined) return '—';
  return `${run.started.slice(0, 10)} ${run.started.slice(11, 16)} UTC, ${run.mode}`;
}

export function renderReport(r: RunResults): string {
  const m = r.machine;
  const lines: string[] = [];
  lines.push('# Benchmarks');
  lines.push('');
  lines.push(
    '<!-- Generated by `npm run bench` (bench/run.ts) from bench/results.json; edit the generator, not this file. -->',
  );
  lines.push('');
  lines.push(
    'Every figure is a ratio (or difference) against a baseline run alternately in the same process launch ' +
      '(A B A B …, a warm-up first, medians of at least 5 pairs): the machines are shared, so absolute times ' +
      'are only context. A goal missed is reported as missed, with the figure. The goals: [below](#goals). ' +
      'How each benchmark is built and why: [decisions/benchmarks.md](decisions/benchmarks.md).',
  );
  lines.push('');
  lines.push(
    `**Run:** ${r.mode}${r.only ? ` (only ${r.only.join(', ')})` : ''}, ${r.started} → ${r.finished} (${r.durationS} s).` +
      (r.rows.some((row) => row.run !== undefined && row.run.started !== r.started)
        ? ' Rows this run did not measure keep the figures of the run that did (the "measured" column; its machine state under [Runs](#runs)).'
        : ''),
  );
  lines.push(
    `**Machine:** \`nproc\` ${m.nproc}, ${m.cpu}, Node ${m.node}, ${m.platform}, ${m.memoryGiB} GiB RAM (${m.freeMemoryGiB} GiB free at the end).`,
  );
  lines.push(
    `**What the machine was doing:** load average (1/5/15 min) ${m.before.loadavg.join(' / ')} at the start and ${m.after.loadavg.join(' / ')} at the end, on ${m.nproc} cores` +
      (m.before.loadavg[0]! > m.nproc * 0.75 || m.after.loadavg[0]! > m.nproc * 0.75
        ? ' — other work was running beside the benchmarks (a shared machine), so spreads are wider than on an idle one.'
        : '.') +
      (r.note ? ` ${r.note}` : ''),
  );
  if (m.before.busiest.length > 0) {
    lines.push(
      `Busiest processes at the start (\`ps -eo pcpu,rss,comm\`): ${m.before.busiest.map((b) => `\`${b}\``).join(', ')}.`,
    );
  }
  lines.push('');
  lines.push('| # | measure | baseline | ours | baseline figure | figure | goal | verdict | measured |');
  lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const row of r.rows) {
    lines.push(
      `| ${row.id} | ${cell(row.measure)} | ${cell(row.baseline)} | ${cell(row.ours)} | ${cell(row.theirs)} | ${cell(row.figure)} | ${cell(row.goal)} | ${VERDICT[row.verdict]} | ${runLabel(row.run)} |`,
    );
  }
  lines.push('');
  lines.push('## How each row was measured');
  lines.push('');
  for (const row of r.rows) lines.push(`- **${row.id}** ${cell(row.notes)}.`);
  lines.push('');
  lines.push(
    r.leftovers.length === 0
      ? "**Processes left behind:** none (checked in /proc for this run's `SCIENCEEVOLVE_MARKER` and tag at the end)."
      : `**Processes left behind:** ${r.leftovers.length} — a collection bug; see bench/results.json.`,
  );
  if (r.otherMarkedProcesses > 0) {
    lines.push(
      `(${r.otherMarkedProcesses} process(es) of other runs on this machine carried a \`SCIENCEEVOLVE_MARKER\`; they are not this run's.)`,
    );
  }
  const runs = new Map<string, RowRun>();
  for (const row of r.rows) if (row.run !== undefined) runs.set(row.run.started, row.run);
  if (runs.size > 1) {
    lines.push('');
    lines.push('## Runs');
    lines.push('');
    lines.push('The rows above come from these runs (load average 1/5/15 min at the start and at the end of each):');
    lines.push('');
    for (const run of [...runs.values()].sort((a, b) => (a.started < b.started ? 1 : -1))) {
      const ids = r.rows.filter((row) => row.run?.started === run.started).map((row) => row.id);
      lines.push(
        `- ${runLabel(run)} (${run.started} → ${run.finished}): rows ${[...new Set(ids)].join(', ')}; load ${run.loadavgStart.join(' / ')} → ${run.loadavgEnd.join(' / ')} on ${m.nproc} cores.`,
      );
    }
  }
  const curves = renderCurves(r.rows);
  if (curves.length > 0) {
    lines.push('');
    lines.push(...curves.slice(0, -1));
  }
  lines.push('');
  lines.push('## Goals');
  lines.push('');
  lines.push(
    'Each goal is a ratio measured in one run, the project against a baseline run alternately on the same ' +
      'machine; tests never assert timings. Latencies are reported as p50 and p99; where the runtime matters ' +
      '(start-up, compile cache) a row is to be reported on Node 20 and on Node 24. Rows without a number ' +
      'are not measured yet.',
  );
  lines.push('');
  lines.push('| # | measure | baseline run beside it | goal |');
  lines.push('| --- | --- | --- | --- |');
  for (const goal of GOALS) {
    lines.push(`| ${goal.id} | ${cell(goal.measure)} | ${cell(goal.baseline)} | ${cell(goal.goal)} |`);
  }
  lines.push('');
  return lines.join('\n');
}

export async function writeReport(path: string, results: RunResults): Promise<void> {
  await writeFile(path, renderReport(results));
}
