/**
 * Durations entering the supervisor package are capped at 2^31 − 1 ms (a longer `setTimeout` fires after
 * 1 ms): a terminate option, and the grace a host sends in its `hello`. Absent, NaN, infinite or negative
 * values take the default. No process is started here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Supervisor } from '../../packages/supervisor/src/supervisor.js';
import { cappedDurationMs, DEFAULT_GRACE_MS, MAX_TIMER_MS } from '../../packages/supervisor/src/terminate.js';
import { tempDir } from '../fixtures/store/tempDir.js';

test('cappedDurationMs: each value with the duration it gives', () => {
  const cases: [number | undefined, number][] = [
    [undefined, 2000],
    [Number.NaN, 2000],
    [Number.POSITIVE_INFINITY, 2000],
    [-1, 2000],
    [0, 0],
    [500, 500],
    [MAX_TIMER_MS, MAX_TIMER_MS],
    [2 ** 31, MAX_TIMER_MS],
    [1e300, MAX_TIMER_MS],
  ];
  for (const [value, expected] of cases) assert.equal(cappedDurationMs(value, 2000), expected, String(value));
  assert.equal(MAX_TIMER_MS, 2_147_483_647);
});

test("a host's hello with a grace above 2^31 − 1 ms is capped where it enters the supervisor", async (t) => {
  const dir = await tempDir(t);
  const logPath = join(dir, 'supervisor.log');
  const supervisor = new Supervisor({ send: () => {} });
  supervisor.handle({ type: 'hello', graceMs: 2 ** 40, logPath, hostPid: process.pid });
  assert.equal(supervisor.state, 'watching');
  const log = readFileSync(logPath, 'utf8');
  assert.match(log, new RegExp(`grace ${MAX_TIMER_MS} ms`), log);
  assert.doesNotMatch(log, new RegExp(String(2 ** 40)));

  const other = new Supervisor({ send: () => {} });
  other.handle({ type: 'hello', graceMs: Number.POSITIVE_INFINITY, logPath, hostPid: process.pid });
  assert.match(readFileSync(logPath, 'utf8'), new RegExp(`grace ${DEFAULT_GRACE_MS} ms`));
});
