/**
 * The growth-curve section of the benchmark page is generated from the raw points of rows 15a and 15b in
 * bench/results.json: every point becomes a table line with its figures, the page still reads back into
 * its rows, and a row without points (read back from the page) gives no section. No benchmark runs here
 * and no timing is asserted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResultRow } from '../../bench/lib/common.js';
import { type CurvePoint, type RunResults, renderCurves, renderReport, rowsFromPage } from '../../bench/report.js';

const MiB = 2 ** 20;

function point(n: number, wallMs: number, ratio: number, queued: number): CurvePoint {
  return {
    n,
    pairs: 5,
    wallMs,
    ratio,
    pssPerUnit: 26.5 * MiB,
    rssPerUnit: 63 * MiB,
    footprintPerUnit: (26.5 + 150 / n) * MiB,
    medianMaxQueuedMs: queued,
    failures: n === 64 ? 1 : 0,
    load: [4.25, 5.5],
  };
}

function curveRow(id: string, points: CurvePoint[] | undefined): ResultRow {
  return {
    id,
    measure: `growth curve ${id}`,
    baseline: '1',
    ours: 'x',
    theirs: 'y',
    figure: 'z',
    goal: 'reported',
    verdict: 'n/a',
    notes: `notes of ${id}`,
    data: points === undefined ? {} : { unit: 'invocation', points },
  };
}

const invocations = [point(1, 400, 1, 0), point(2, 700, 1.6, 330), point(64, 26_000, 70, 25_500)];
const services = [point(1, 190, 1, 0), point(32, 5_200, 28, 4_900)];

function results(rows: ResultRow[]): RunResults {
  const state = { loadavg: [4.25, 3, 2], busiest: [] };
  return {
    mode: 'full',
    only: null,
    note: null,
    started: '2026-11-30T23:40:00.000Z',
    finished: '2026-11-30T23:50:00.000Z',
    durationS: 600,
    machine: {
      nproc: 2,
      cpu: 'cpu',
      node: 'v20',
      platform: 'linux x64',
      memoryGiB: 1,
      freeMemoryGiB: 1,
      before: state,
      after: state,
    },
    leftovers: [],
    otherMarkedProcesses: 0,
    rows,
  };
}

test('each point of 15a and 15b becomes a table line with its figures, and a bar of its time', () => {
  const lines = renderCurves([curveRow('15a', invocations), curveRow('15b', services)]);
  assert.equal(lines[0], '## Growth curve');
  const line64 = lines.find((l) => l.startsWith('| 64 |'));
  assert.ok(line64, 'the 64-invocation point has its line');
  const cells = line64.split('|').map((c) => c.trim());
  // invocations, batch, per invocation, × one, × one per invocation, gate wait, PSS, RSS, footprint, failed, load
  assert.deepEqual(cells.slice(1, 12), [
    '64',
    '26000 ms',
    '406 ms',
    '70.00×',
    '1.09×',
    '25500 ms',
    '26.5 MiB',
    '63.0 MiB',
    '28.8 MiB',
    '1',
    '4.25 → 5.50',
  ]);
  assert.ok(lines.some((l) => l.startsWith('| 32 | 5200 ms | 163 ms | 28.00× | 0.88× |')));
  // The bar chart: one line per point, the largest value the longest bar.
  const bars = lines.filter((l) => /^ {0,3}\d+ │/.test(l));
  assert.equal(bars.length, invocations.length + services.length);
  const barOf = (prefix: string) => (lines.find((l) => l.startsWith(prefix)) ?? '').split('█').length - 1;
  assert.equal(barOf('   1 │'), Math.round((400 / 406.25) * 40), 'the first chart: 400 ms against 406 ms at 64');
  assert.equal(barOf('  64 │'), 40);
});

test('rows without points (read back from the page) give no curve section; the page reads back its rows', () => {
  assert.deepEqual(renderCurves([curveRow('15a', undefined), curveRow('13', undefined)]), []);
  const page = renderReport(results([curveRow('15a', invocations), curveRow('15b', services)]));
  assert.match(page, /## Growth curve/);
  assert.ok(page.indexOf('## Growth curve') < page.indexOf('## Goals'));
  const back = rowsFromPage(page);
  assert.deepEqual(
    back.map((r) => [r.id, r.notes]),
    [
      ['15a', 'notes of 15a'],
      ['15b', 'notes of 15b'],
    ],
  );
  // Read back, the rows have lost their points: the next page has no curve rather than a wrong one.
  assert.doesNotMatch(renderReport(results(back)), /## Growth curve/);
});
