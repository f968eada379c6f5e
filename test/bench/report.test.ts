/**
 * The benchmark page's generator keeps every row: `--only` merges this run's rows into the previous ones
 * (by benchmark number), and a page this generator wrote reads back into the same rows with their runs.
 * No benchmark runs here and no timing is asserted.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ResultRow, RowRun } from '../../bench/lib/common.js';
import { type RunResults, mergeRows, previousRows, renderReport, rowsFromPage } from '../../bench/report.js';

const OLD: RowRun = {
  started: '2026-11-29T15:09:38.348Z',
  finished: '2026-11-29T15:15:04.108Z',
  mode: 'full',
  loadavgStart: [3.52, 5.34, 9.98],
  loadavgEnd: [28.58, 16.51, 12.91],
};
const NEW: RowRun = {
  started: '2026-11-30T18:49:11.339Z',
  finished: '2026-11-30T18:49:52.197Z',
  mode: 'quick',
  loadavgStart: [9.1, 7.69, 7.95],
  loadavgEnd: [7.55, 7.45, 7.86],
};

function row(id: string, figure: string, run: RowRun, notes = `notes of ${id} | with a pipe`): ResultRow {
  return {
    id,
    measure: `measure ${id}`,
    baseline: 'baseline',
    ours: 'p50 1 ms',
    theirs: 'p50 2 ms',
    figure,
    goal: '≤ 1.10×',
    verdict: 'met',
    notes,
    data: {},
    run,
  };
}

function results(rows: ResultRow[], run: RowRun, only: string[] | null): RunResults {
  const machine = { loadavg: run.loadavgStart, busiest: [] };
  return {
    mode: run.mode,
    only,
    note: null,
    started: run.started,
    finished: run.finished,
    durationS: 1,
    machine: {
      nproc: 2,
      cpu: 'cpu',
      node: 'v20',
      platform: 'linux x64',
      memoryGiB: 1,
      freeMemoryGiB: 1,
      before: machine,
      after: { loadavg: run.loadavgEnd, busiest: [] },
    },
    leftovers: [],
    otherMarkedProcesses: 0,
    rows,
  };
}

const previous = [
  row('1', '1.00×', OLD),
  row('4', '2.46×', OLD, 'the small definition'),
  row('4', '0.47×', OLD, 'the large definition'),
  row('5a', '+0.08 ms', OLD),
  row('5b', '3.5×', OLD),
  row('7', '81×', OLD),
];

test('--only replaces the rows of the benchmarks it ran (5 replaces 5a and 5b) and keeps every other row', () => {
  const merged = mergeRows([row('5a', '+0.09 ms', NEW), row('8', '+15 ms', NEW), row('1', '0.98×', NEW)], previous);
  assert.deepEqual(
    merged.map((r) => [r.id, r.figure, r.run?.mode]),
    [
      ['1', '0.98×', 'quick'],
      ['4', '2.46×', 'full'],
      ['4', '0.47×', 'full'],
      ['5a', '+0.09 ms', 'quick'],
      ['7', '81×', 'full'],
      ['8', '+15 ms', 'quick'],
    ],
  );
});

test('a page of one run reads back into its rows, each with that run', () => {
  const page = renderReport(results(previous, OLD, null));
  const rows = rowsFromPage(page);
  assert.deepEqual(
    rows.map((r) => [r.id, r.figure, r.verdict, r.notes, r.run]),
    previous.map((r) => [r.id, r.figure, r.verdict, r.notes, OLD]),
  );
});

test('a page of rows from several runs reads back with each row its own run', () => {
  const merged = mergeRows([row('1', '0.98×', NEW)], previous);
  const page = renderReport(results(merged, NEW, ['1']));
  assert.match(page, /## Runs/);
  const rows = rowsFromPage(page);
  assert.deepEqual(
    rows.map((r) => [r.id, r.figure, r.run]),
    merged.map((r) => [r.id, r.figure, r.run]),
  );
});

test('the previous rows come from results.json when it exists, else from the page', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-report-'));
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const json = join(dir, 'results.json');
  const page = join(dir, 'benchmarks.md');
  assert.deepEqual(await previousRows(json, page), []);

  await writeFile(page, renderReport(results(previous, OLD, null)));
  const fromPage = await previousRows(json, page);
  assert.deepEqual(
    fromPage.map((r) => [r.id, r.figure, r.data.source !== undefined]),
    previous.map((r) => [r.id, r.figure, true]),
  );

  // A results.json written before rows carried their run: every row gets the file's run.
  const withoutRuns = previous.map(({ run: _run, ...rest }) => ({ ...rest, data: { samples: [1, 2] } }));
  await writeFile(json, JSON.stringify(results(withoutRuns, OLD, null)));
  const fromJson = await previousRows(json, page);
  assert.deepEqual(
    fromJson.map((r) => [r.id, r.data, r.run]),
    previous.map((r) => [r.id, { samples: [1, 2] }, OLD]),
  );
});
