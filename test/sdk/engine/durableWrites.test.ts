/**
 * The engine's frequent writers: checkpoints and the run record. Each write is atomic; a state is taken
 * when it is saved (checkpoints) or when its write starts (the run record); a burst of saves while a write
 * is in progress shares one write queued behind it; the file ends holding the newest state.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CheckpointWriter } from '../../../packages/sdk/src/engine/checkpoints.ts';
import { RunFile, type RunRecord } from '../../../packages/sdk/src/engine/runRecord.ts';

function scratch(t: import('node:test').TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'se-writes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

const owner = { run: 'run-1', invocation: 'inv-1', agent: 'main' };

test('a checkpoint is serialized when saved: a change to the object right after is not written', async (t) => {
  const path = join(scratch(t), 'nested', 'checkpoints', 'inv-1.json');
  const writer = new CheckpointWriter(path, owner);
  const state = { step: 1, messages: ['a'] };
  const saved = writer.save(1, state);
  state.step = 99;
  state.messages.push('changed after the save');
  await saved;
  const file = JSON.parse(readFileSync(path, 'utf8'));
  assert.deepEqual(file.state, { step: 1, messages: ['a'] });
  assert.equal(file.format, 1);
  assert.equal(file.invocation, 'inv-1');
  assert.equal(file.attempt, 1);
  assert.match(file.savedAt, /^\d{4}-\d\d-\d\dT/);
});

test('a burst of checkpoint saves shares one queued write; the newest state wins; every save resolves', async (t) => {
  const dir = scratch(t);
  const path = join(dir, 'inv-1.json');
  const writer = new CheckpointWriter(path, owner);
  const first = writer.save(1, { n: 0 });
  // The first write starts at the next microtask; the saves after it queue behind it.
  await Promise.resolve();
  const queued = Array.from({ length: 20 }, (_, i) => writer.save(2, { n: i + 1 }));
  // Every save made during the first write joined the one write queued behind it.
  assert.equal(new Set(queued).size, 1);
  assert.notEqual(queued[0], first);
  await Promise.all([first, ...queued]);
  const file = JSON.parse(readFileSync(path, 'utf8'));
  assert.deepEqual(file.state, { n: 20 });
  assert.equal(file.attempt, 2);
  assert.deepEqual(readdirSync(dir), ['inv-1.json'], 'no temporary file is left');
  // A save after the queue drained writes again.
  await writer.save(3, { n: 21 });
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).state, { n: 21 });
});

test('a checkpoint that is not JSON is refused with invalid_checkpoint, and the file keeps the last good one', async (t) => {
  const path = join(scratch(t), 'inv-1.json');
  const writer = new CheckpointWriter(path, owner);
  await writer.save(1, { good: true });
  await assert.rejects(writer.save(1, { n: 1n }), { code: 'invalid_checkpoint' });
  await assert.rejects(writer.save(1, undefined), { code: 'invalid_checkpoint' });
  assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')).state, { good: true });
});

test('run record saves made during a write share the next one, which takes the record as it is then', async (t) => {
  const path = join(scratch(t), 'runs', 'run-1', 'run.json');
  const record = { run: 'run-1', status: 'running', counter: 0 } as unknown as RunRecord & { counter: number };
  const file = new RunFile(path, record);
  const first = file.save();
  await Promise.resolve();
  const later = [file.save(), file.save(), file.save()];
  assert.equal(new Set(later).size, 1);
  record.counter = 3;
  await Promise.all([first, ...later]);
  assert.equal(JSON.parse(readFileSync(path, 'utf8')).counter, 3);
});
