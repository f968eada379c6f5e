/**
 * The viewer's one safe open: a plain file opens; a symlink is not followed; a FIFO neither blocks nor
 * opens; a file swapped since the caller looked is refused. And every file of the viewer reads the data dir
 * through it alone (no other `open`/`readFile` of node:fs), so no read path can follow a symlink a service
 * put into a run's folder.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { readEvents } from '../../packages/sdk/src/events/journal.js';
import { openPlainFile, readPlainFile } from '../../packages/sdk/src/store/plainFile.js';
import { tempDir } from '../fixtures/store/tempDir.js';

test('a plain file opens; a symlink, a FIFO, a folder and a swapped file do not', async (t) => {
  const dir = await tempDir(t);
  const journal = join(dir, 'events.jsonl');
  const secret = join(dir, 'secret.txt');
  writeFileSync(journal, '{"type":"run.started"}\n');
  writeFileSync(secret, 'not the journal\n');
  assert.equal(await readPlainFile(journal), '{"type":"run.started"}\n');

  const link = join(dir, 'link.jsonl');
  symlinkSync(secret, link);
  assert.equal(await readPlainFile(link), undefined, 'a symlink is not followed');

  const fifo = join(dir, 'fifo.jsonl');
  execFileSync('mkfifo', [fifo]);
  // Without O_NONBLOCK this open would wait for a writer forever (the test would time out).
  assert.equal(await openPlainFile(fifo), undefined, 'a FIFO is not opened for reading');
  assert.equal(await openPlainFile(dir), undefined, 'a folder is not a plain file');
  assert.equal(await openPlainFile(join(dir, 'missing')), undefined);

  // The caller looked at the journal; then it was replaced by another plain file: refused.
  const looked = lstatSync(journal);
  const same = await openPlainFile(journal, looked);
  assert.ok(same);
  await same.handle.close();
  renameSync(secret, journal);
  assert.equal(await openPlainFile(journal, looked), undefined, 'another file than the one looked at');
});

test('every viewer read of the data dir goes through openPlainFile', () => {
  const uiDir = new URL('../../packages/cli/src/ui/', import.meta.url).pathname;
  const reads = /\b(open|openSync|readFile|readFileSync|createReadStream|opendir)\b/;
  const offenders: string[] = [];
  for (const name of readdirSync(uiDir)) {
    if (!name.endsWith('.ts')) continue;
    const source = readFileSync(join(uiDir, name), 'utf8');
    for (const match of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(?:node:)?fs(?:\/promises)?'/g)) {
      if (reads.test(match[1] ?? '')) offenders.push(`${name}: ${match[0].replace(/\s+/g, ' ')}`);
    }
  }
  assert.deepEqual(offenders, [], "a viewer file opens files on its own instead of through the SDK's openPlainFile");
});

test('the journal reader takes a plain file only: a symlinked or FIFO journal reads as empty, never blocks', async (t) => {
  const dir = await tempDir(t);
  const secret = join(dir, 'secret.jsonl');
  writeFileSync(secret, '{"type":"run.started","run":"elsewhere"}\n');
  const linked = join(dir, 'linked', 'events.jsonl');
  mkdirSync(dirname(linked));
  symlinkSync(secret, linked);
  assert.deepEqual(await readEvents(linked), [], 'a symlinked journal is not followed');
  const fifo = join(dir, 'fifo', 'events.jsonl');
  mkdirSync(dirname(fifo));
  execFileSync('mkfifo', [fifo]);
  // Without O_NONBLOCK this read would wait for a writer forever (status and the run's end with it).
  assert.deepEqual(await readEvents(fifo), [], 'a FIFO journal does not block');
  assert.deepEqual(await readEvents(secret), [{ type: 'run.started', run: 'elsewhere' }], 'a plain journal reads');
});
