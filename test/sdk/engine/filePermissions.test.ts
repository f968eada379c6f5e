/**
 * Files are the user's alone (security findings 9 and 10): after a run every file under the data dir is
 * 0600 and every directory 0700 (walked, nothing skipped); a data dir made wider before is narrowed on
 * open; a symlink planted at a stderr log path is removed and never followed (its target untouched); one
 * planted at the run journal's path makes the append fail with io_error, never write through it.
 * One real service process (addsNumbers.cjs); about 2 s on 2 cores.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { startRun } from '../../../packages/sdk/src/engine/runs.js';
import { EventJournal } from '../../../packages/sdk/src/events/journal.js';
import { StderrLog } from '../../../packages/sdk/src/processes/stderrLog.js';
import { openDataDir } from '../../../packages/sdk/src/store/dataDir.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { tempDir } from '../../fixtures/store/tempDir.js';
import { assertNothingLeft, sandbox } from './helpers.js';

/** Every entry under `dir`, with its type and permission bits, found by lstat (links are not followed). */
function walk(dir: string, out: Array<{ path: string; kind: string; mode: number }> = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = lstatSync(path);
    const kind = info.isDirectory() ? 'dir' : info.isFile() ? 'file' : info.isSymbolicLink() ? 'link' : 'other';
    out.push({ path, kind, mode: info.mode & 0o777 });
    if (kind === 'dir') walk(path, out);
  }
  return out;
}

test('after a run, every file under the data dir is 0600 and every directory 0700', { timeout: 60_000 }, async (t) => {
  const box = await sandbox(t);
  const workflow = {
    agents: { main: agent([['adds', 'adds']]) },
    mcpDefinitions: { adds: fixtureDefinition('addsNumbers.cjs') },
  };
  const script = { agents: { main: [{ call: 'adds__add', arguments: { a: 1, b: 2 } }, { final: '{{0}}' }] } };
  const result = await startRun({ ...box, workflow, script, requirement: 'add', graceMs: 300 }).result;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, '3');
  await assertNothingLeft(box.project, result.events);

  const entries = walk(box.dataDir);
  const kinds = new Set(entries.map((e) => e.path.split('/').at(-1)));
  for (const name of ['format.json', 'accepted.json', 'run.json', 'events.jsonl', 'adds.stderr.log']) {
    assert.ok(kinds.has(name), `the walk saw ${name}`);
  }
  assert.equal(statSync(box.dataDir).mode & 0o777, 0o700, 'the data dir itself');
  // The only links: an invocation's `node_modules/<package>` links to the SDK's own packages (for services'
  // `import`), which point outside the data dir (a link's own mode bits mean nothing on Linux).
  const isModuleLink = (e: { path: string; kind: string }) =>
    e.kind === 'link' &&
    /\/invocations\/[^/]+\/node_modules\/(@modelcontextprotocol\/[a-z]+|zod)$/.test(e.path) &&
    !realpathSync(e.path).startsWith(box.dataDir);
  const wrong = entries.filter((e) =>
    e.kind === 'dir' ? e.mode !== 0o700 : !isModuleLink(e) && (e.kind !== 'file' || e.mode !== 0o600),
  );
  assert.ok(entries.some(isModuleLink), 'the walk saw the module links');
  assert.deepEqual(
    wrong.map((e) => `${e.kind} ${e.mode.toString(8)} ${e.path.slice(box.dataDir.length)}`),
    [],
  );
});

test('a data dir made wider before is narrowed to 0700 when opened', async (t) => {
  const dir = join(await tempDir(t, 'se-modes-'), 'data');
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  await openDataDir(dir);
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(statSync(join(dir, 'format.json')).mode & 0o777, 0o600);
});

test('a symlink planted at a stderr log path is removed, never followed; the target is untouched', async (t) => {
  const base = await tempDir(t, 'se-modes-');
  const target = join(base, 'precious.txt');
  writeFileSync(target, 'the user file\n');
  const logPath = join(base, 'mcp', 'svc.stderr.log');
  mkdirSync(join(base, 'mcp'));
  symlinkSync(target, logPath);
  const log = new StderrLog(logPath);
  t.after(() => log.finish());
  const stream = new PassThrough();
  log.attach(stream);
  stream.end('service noise\n');
  await log.ended;
  assert.equal(readFileSync(logPath, 'utf8'), 'service noise\n', 'the service wrote its own log');
  assert.equal(readFileSync(target, 'utf8'), 'the user file\n', 'neither truncated nor written');
  const info = lstatSync(logPath);
  assert.ok(info.isFile());
  assert.equal(info.mode & 0o777, 0o600);
});

test('a symlink planted at the journal path: the append fails with io_error and the target is untouched', async (t) => {
  const base = await tempDir(t, 'se-modes-');
  const target = join(base, 'precious.txt');
  writeFileSync(target, 'the user file\n');
  const journal = new EventJournal(join(base, 'runs', 'r1', 'events.jsonl'));
  symlinkSync(target, journal.path);
  assert.throws(
    () => journal.append({ type: 'run.started', run: 'r1', at: new Date(0).toISOString() } as never),
    (error: { code?: string; message?: string }) =>
      error.code === 'io_error' && /symbolic link/.test(error.message ?? ''),
  );
  assert.equal(readFileSync(target, 'utf8'), 'the user file\n');
});
