/**
 * Jobs a worker refuses fail at once with their own code (BullMQ's UnrecoverableError carries it back), are
 * not retried, and the coordinator records and returns that code — not `worker_lost`. A real redis-server,
 * real worker processes, the built CLI as coordinator.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { Queue } from 'bullmq';
import { DEFAULT_QUEUE_NAME } from '../../packages/sdk/src/queue/queueClient.js';
import { parseQueueUrl } from '../../packages/sdk/src/queue/queueUrl.js';
import { startCli } from '../fixtures/engine/cli.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';
import {
  type RunDoc,
  queuedRunArgs,
  readRunRecord,
  runQueued,
  startRedis,
  startWorker,
  startWorkerWithout,
  stopWorker,
  writeDelegatingRun,
} from './helpers.js';

test('a job altered in Redis (another format) is refused with invalid_job at once: one attempt, not retried', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  // Two retries allowed: a refusal must not use them.
  const files = await writeDelegatingRun(box.base, 1, { retries: 2 });
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, files));
  // No worker yet: the job waits in the queue, where something else rewrites it.
  const queue = new Queue(DEFAULT_QUEUE_NAME, { connection: parseQueueUrl(redis.url).connection });
  t.after(() => queue.close());
  const deadline = Date.now() + 120_000;
  let waiting = await queue.getWaiting();
  while (waiting.length === 0) {
    assert.ok(Date.now() < deadline, `no job was queued within 120 s:\n${coordinator.stderr()}`);
    await sleep(50);
    waiting = await queue.getWaiting();
  }
  const [job] = waiting;
  await job!.updateData({ ...(job!.data as object), format: 99 });
  await queue.close();
  const worker = await startWorker(t, redis.url, join(box.base, 'worker-1'));

  // Main's delegate answers the refusal as an error; the scripted Main then finishes with that answer.
  assert.equal(await coordinator.exited, 0, coordinator.stderr());
  await assertGone(coordinator.pid);
  const doc = JSON.parse(coordinator.stdout()) as RunDoc;
  assert.match(doc.output ?? '', /failed after 1 attempt\(s\): invalid_job: job \S+ is not an invocation job/);
  const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.equal(analyst.attempts.length, 1, 'refused once, never retried');
  const error = analyst.attempts[0]!.error!;
  assert.equal(error.code, 'invalid_job');
  assert.match(error.message, /is not an invocation job of this version \(format 1\)/);
  assert.match(error.remedy ?? '', /run workers of the same ScienceEvolve version/);
  assert.deepEqual(
    (error.data as { workers: string[] }).workers.map((w) => Number(w.split(':').at(-1))),
    [worker.pid],
  );
  const failed = ofType(doc.events, 'invocation.attempt_failed').filter((e) => e.agent === 'analyst');
  assert.deepEqual(
    failed.map((e) => [e.error?.code, e.willRetry]),
    [['invalid_job', false]],
  );
  assert.match(worker.stderr(), /job \S+ failed: refused \[invalid_job\]/);
  await stopWorker(worker);
  await assertNothingLeft(box.project, doc.events);
});

test('Git-off: a worker that cannot see the run workspace refuses the job with workspace_unreachable', async (t) => {
  const box = await sandbox(t);
  // The workspace lives under a directory the worker does not see (no shared filesystem).
  const shared = join(box.base, 'shared');
  const workspace = join(shared, 'study');
  mkdirSync(workspace, { recursive: true });
  const redis = await startRedis(t, box.base);
  const files = await writeDelegatingRun(box.base, 1, { retries: 2 });
  const worker = await startWorkerWithout(t, redis.url, join(box.base, 'worker-1'), shared);
  const { code, stderr, doc } = await runQueued(t, box, redis.url, { ...files, workspace });
  assert.equal(code, 0, stderr);
  const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.equal(analyst.attempts.length, 1, 'refused once, never retried');
  assert.equal(analyst.attempts[0]!.error?.code, 'workspace_unreachable');
  assert.equal(
    analyst.attempts[0]!.error?.message,
    `the run's workspace ${workspace} is not a directory on this worker`,
  );
  // Main's delegate answers the refusal's code (the scripted Main finishes with that answer).
  assert.match(doc.output ?? '', /failed after 1 attempt\(s\): workspace_unreachable: the run's workspace/);
  assert.equal(ofType(doc.events, 'service.ready').filter((e) => e.agent === 'analyst').length, 0, 'nothing started');
  await stopWorker(worker);
  await assertNothingLeft(box.project, doc.events);
});
