import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { withFileLock } from '../../../packages/sdk/src/store/fileLock.ts';

test("waiters that all find a dead holder's lock never hold it together (takeover under a guard)", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'se-lock-'));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  for (let run = 0; run < 100; run++) {
    const path = join(dir, `${run}.lock`);
    // A holder that no longer exists (pid 999999 with a start time no process has).
    writeFileSync(path, JSON.stringify({ pid: 999_999, start: '1' }));
    let inside = 0;
    let most = 0;
    await Promise.all(
      [0, 1, 2, 3].map(() =>
        withFileLock(path, async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((r) => setTimeout(r, 1));
          inside--;
        }),
      ),
    );
    assert.equal(most, 1, `run ${run}: two holders at once`);
  }
  assert.deepEqual(readdirSync(dir), [], 'no lock, guard or temporary file is left');
});

test('a holder releases only its own lock', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'se-lock-'));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const path = join(dir, '.lock');
  await withFileLock(path, async () => {
    // Someone replaced the lock (it cannot happen to a live holder, but release must not assume it).
    writeFileSync(path, JSON.stringify({ pid: process.pid, start: 'other' }));
  });
  assert.deepEqual(readdirSync(dir), ['.lock'], 'the other lock stays');
});
