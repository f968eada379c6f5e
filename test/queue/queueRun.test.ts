/**
 * The queue backend end to end: a real redis-server, real `scienceevolve worker` processes with their own
 * data dirs, the built CLI as coordinator. A run whose Main delegates 6 invocations to queue workers gives
 * the same output and the same events as the same run in one process; every attempt records its job and
 * worker; nothing any process started is left. Three workers, six invocations with real services: about
 * 15–30 s on 2 cores.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';
import {
  RUN_TIMEOUT_MS,
  readRunRecord,
  runQueued,
  startRedis,
  startWorker,
  stopWorker,
  writeDelegatingRun,
} from './helpers.js';

/**
 * What must be equal between a local and a queued run: each event's type, agent and outcome fields. Services
 * of one invocation start and stop concurrently, so a run of consecutive events of one type is compared as
 * a set (sorted), in local runs as in queued ones.
 */
function shape(events: readonly RunEvent[]): string[] {
  const lines = events.map((e) => {
    const fields = e as unknown as Record<string, unknown>;
    const parts = [e.type, String(fields.agent ?? '')];
    for (const key of ['status', 'from', 'to', 'tool', 'service', 'ok', 'attempt']) {
      if (Object.hasOwn(fields, key)) parts.push(`${key}=${String(fields[key])}`);
    }
    return parts.join(' ');
  });
  const out: string[] = [];
  let group: string[] = [];
  const flush = () => {
    out.push(...group.sort());
    group = [];
  };
  lines.forEach((line, i) => {
    if (group.length > 0 && events[i]!.type !== events[i - 1]!.type) flush();
    group.push(line);
  });
  flush();
  return out;
}

test('6 invocations over 3 queue workers: the same output and events as the same run in one process', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const { workflowPath, scriptPath, expected } = await writeDelegatingRun(box.base, 6);
  const workers = await Promise.all([1, 2, 3].map((n) => startWorker(t, redis.url, join(box.base, `worker-${n}`))));

  const queued = await runQueued(t, box, redis.url, { workflowPath, scriptPath });
  assert.equal(queued.code, 0, queued.stderr);
  const doc = queued.doc;
  assert.equal(doc.status, 'succeeded');
  assert.equal(doc.output, expected);

  // The same run in one process, in its own project and workspace.
  const local = await sandbox(t);
  const localRun = await runCliToEnd(
    t,
    [
      'run',
      '--data-dir',
      local.dataDir,
      '--project',
      local.project,
      '--workspace',
      local.workspace,
      '--workflow',
      workflowPath,
      '--script',
      scriptPath,
      '--grace-ms',
      '300',
      // Warm starts are a single-process feature (a queue worker's services start on its own machine).
      '--no-prestart',
      '--json',
      'add',
    ],
    RUN_TIMEOUT_MS,
  );
  assert.equal(localRun.code, 0, localRun.stderr);
  const localDoc = localRun.json as { output: string; events: RunEvent[] };
  assert.equal(localDoc.output, doc.output);
  assert.deepEqual(shape(doc.events), shape(localDoc.events));

  const record = readRunRecord(box, doc.run);
  const analysts = record.invocations.filter((i) => i.agent === 'analyst');
  assert.equal(analysts.length, 6);
  const workerIds = new Set<string>();
  for (const invocation of analysts) {
    assert.equal(invocation.state, 'succeeded');
    assert.equal(invocation.attempts.length, 1);
    const queue = invocation.attempts[0]!.queue;
    assert.ok(queue !== undefined, 'the attempt records its job');
    assert.equal(queue.job, `${doc.run}__${invocation.id}__1`);
    assert.equal(queue.workers.length, 1, `one worker took job ${queue.job}`);
    workerIds.add(queue.workers[0]!);
  }
  const started = workers.map((w) => `:${w.pid}`);
  for (const id of workerIds)
    assert.ok(
      started.some((s) => id.endsWith(s)),
      `${id} is one of the test's workers`,
    );
  // The workers' invocation services ran in the workers' data dirs, not the coordinator's.
  const ready = doc.events.filter((e) => e.type === 'service.ready' && (e as { agent?: string }).agent === 'analyst');
  assert.equal(ready.length, 18);
  for (const worker of workers) await stopWorker(worker);
  await assertNothingLeft(box.project, doc.events);
  await assertNothingLeft(local.project, localDoc.events);
});
