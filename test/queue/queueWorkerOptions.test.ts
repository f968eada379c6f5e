/**
 * A worker's counts have sane ranges: `--concurrency` 1..256, `--max-stalled` 0..1000 (and the SDK's
 * `startQueueWorker` refuses the same values with `usage`). Refused before anything connects or starts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startQueueWorker } from '../../packages/sdk/src/worker/queueWorker.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';

test('worker --concurrency and --max-stalled beyond their ranges are usage errors (exit 2)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'se-worker-opts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cases: Array<[string[], RegExp]> = [
    [['--concurrency', '257'], /--concurrency takes a whole number from 1 to 256, not 257/],
    [['--concurrency', '2147483647'], /--concurrency takes a whole number from 1 to 256/],
    [['--concurrency', '0'], /--concurrency takes a whole number from 1 to 256, not 0/],
    [['--max-stalled', '1001'], /--max-stalled takes a whole number from 0 to 1000, not 1001/],
    [['--max-stalled', '2147483647'], /--max-stalled takes a whole number from 0 to 1000/],
    [['--lock-duration-ms', '0'], /--lock-duration-ms takes a whole number from 1 to 2147483647, not 0/],
  ];
  for (const [extra, message] of cases) {
    // Nothing listens here: a value in range would fail later, on the connection, with exit 1.
    const run = await runCliToEnd(t, [
      'worker',
      '--queue',
      `unix://${join(dir, 'none.sock')}`,
      '--data-dir',
      join(dir, 'data'),
      ...extra,
    ]);
    assert.equal(run.code, 2, `${extra.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, message);
  }
});

test('startQueueWorker refuses concurrency and maxStalledCount out of range with usage, before connecting', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'se-worker-opts-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const url = `unix://${join(dir, 'none.sock')}`;
  for (const [option, value] of [
    ['concurrency', 257],
    ['concurrency', 0],
    ['concurrency', 1.5],
    ['maxStalledCount', 1001],
    ['maxStalledCount', -1],
  ] as const) {
    await assert.rejects(
      startQueueWorker({ url, dataDir: join(dir, 'data'), [option]: value }),
      (error: { code: string; message: string }) => {
        assert.equal(error.code, 'usage');
        assert.match(error.message, new RegExp(`${option} must be a whole number from`));
        return true;
      },
    );
  }
});
