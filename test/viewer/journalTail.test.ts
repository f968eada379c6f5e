/**
 * The viewer's journal tail: whole lines only, in order, from the start or after a given index; a torn
 * last line waits for its newline; a complete line that is not JSON is reported; a journal written after
 * the tail started is found.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type JournalLine, JournalTail } from '../../packages/cli/src/ui/journalTail.js';
import { tempDir } from '../fixtures/store/tempDir.js';

/** A tail that collects its lines, and a wait for a number of them (5 s at most). */
function collect(t: import('node:test').TestContext, path: string, fromIndex = 0) {
  const lines: JournalLine[] = [];
  const tail = new JournalTail(path, (more) => lines.push(...more), { pollMs: 20, fromIndex });
  t.after(() => tail.close());
  const waitFor = async (count: number) => {
    const deadline = Date.now() + 5000;
    while (lines.length < count) {
      if (Date.now() > deadline) assert.fail(`only ${lines.length} of ${count} lines: ${JSON.stringify(lines)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  return { lines, tail, waitFor };
}

test('whole lines in order; a torn line waits for its newline; a line that is not JSON is reported', async (t) => {
  const dir = await tempDir(t);
  const path = join(dir, 'events.jsonl');
  appendFileSync(path, '{"type":"a"}\n{"type":"b"}\n{"type":');
  const { lines, tail, waitFor } = collect(t, path);
  await waitFor(2);
  assert.deepEqual(lines, [
    { index: 0, event: { type: 'a' } },
    { index: 1, event: { type: 'b' } },
  ]);
  tail.poke();
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(lines.length, 2, 'the torn line is not handed on');
  appendFileSync(path, '"c"}\nnot json\n\n{"type":"d"}\n');
  await waitFor(5);
  const corrupt = lines[3] as JournalLine | undefined;
  assert.ok(corrupt !== undefined && 'corrupt' in corrupt);
  assert.match(corrupt.corrupt, /^line 4 is not JSON/);
  assert.deepEqual(lines.slice(2), [
    { index: 2, event: { type: 'c' } },
    { index: 3, corrupt: corrupt.corrupt },
    { index: 4, event: { type: 'd' } },
  ]);
});

test('a journal written after the tail started is read; fromIndex skips what a reader already has', async (t) => {
  const dir = await tempDir(t);
  const runDir = join(dir, 'run');
  mkdirSync(runDir);
  const path = join(runDir, 'events.jsonl');
  const { lines, waitFor } = collect(t, path, 1);
  appendFileSync(path, '{"n":0}\n{"n":1}\n{"n":2}\n');
  await waitFor(2);
  assert.deepEqual(lines, [
    { index: 1, event: { n: 1 } },
    { index: 2, event: { n: 2 } },
  ]);
});

test('a journal that is a symlink is not followed (a service may write into the run folder)', async (t) => {
  const dir = await tempDir(t);
  const secret = join(dir, 'secret.jsonl');
  writeFileSync(secret, '{"secret":true}\n');
  const path = join(dir, 'events.jsonl');
  symlinkSync(secret, path);
  const { lines, tail, waitFor } = collect(t, path);
  tail.poke();
  await new Promise((resolve) => setTimeout(resolve, 100));
  // The symlink gives way to the real journal: the first line handed on must be the journal's own.
  rmSync(path);
  appendFileSync(path, '{"type":"real"}\n');
  await waitFor(1);
  assert.deepEqual(lines, [{ index: 0, event: { type: 'real' } }]);
});
