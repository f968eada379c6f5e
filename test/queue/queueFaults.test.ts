/**
 * The queue backend's faults, end to end with a real redis-server and real worker processes (short lock
 * and stall intervals): a worker SIGKILLed mid-invocation, the coordinator SIGKILLed and resumed, Redis
 * stopped mid-run. Each test runs one worker invocation with real services: about 15–40 s each on 2 cores.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';
import { Queue } from 'bullmq';
import { DEFAULT_QUEUE_NAME } from '../../packages/sdk/src/queue/queueClient.js';
import { parseQueueUrl } from '../../packages/sdk/src/queue/queueUrl.js';
import {
  type RunDoc,
  queueCommon,
  queuedRunArgs,
  readJournal,
  readRunRecord,
  startRedis,
  startWorker,
  stopWorker,
  waitForFile,
  writeDelegatingRun,
} from './helpers.js';

test('a worker SIGKILLed mid-invocation: the job completes on another worker, nothing of the dead one is left', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  // The analyst sleeps 8 s in its `slow` service: time enough to kill its worker mid-invocation.
  const files = await writeDelegatingRun(box.base, 1, { slowMs: 8000 });
  const workers = [
    await startWorker(t, redis.url, join(box.base, 'worker-1')),
    await startWorker(t, redis.url, join(box.base, 'worker-2')),
  ];
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, files));
  // The analyst counted and now sleeps, on whichever worker took the job.
  await waitForFile(join(box.workspace, 'calls.log'), /task-0/);
  const first = workers.find((w) => / taken/.test(w.stderr()))!;
  assert.ok(first !== undefined, 'a worker took the job');
  const second = workers.find((w) => w !== first)!;
  const dead = markedProcesses(box.project).filter((pid) => pid !== coordinator.pid);
  process.kill(first.pid, 'SIGKILL');
  assert.equal(await first.exited, null);
  await assertGone(first.pid);
  assert.equal(readFileSync(join(box.workspace, 'calls.log'), 'utf8'), 'task-0\n', 'killed mid-invocation');

  const code = await coordinator.exited;
  assert.equal(code, 0, coordinator.stderr());
  const doc = JSON.parse(coordinator.stdout()) as RunDoc;
  assert.equal(doc.status, 'succeeded');
  // The second worker ran the invocation from its start with fresh services: the count ran twice.
  assert.equal(doc.output, 'task-0#2=0');
  const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.equal(analyst.attempts.length, 1);
  assert.equal(analyst.attempts[0]!.outcome, 'succeeded');
  assert.deepEqual(
    analyst.attempts[0]!.queue!.workers.map((w) => Number(w.split(':').at(-1))),
    [first.pid, second.pid],
    'the attempt records both workers that took its job, in order',
  );
  // The dead worker's services (and the processes it had marked) were collected by its supervisor.
  for (const pid of dead) await assertGone(pid, 15_000);
  await stopWorker(second);
  await assertNothingLeft(box.project, doc.events);
});

test('the coordinator SIGKILLed, then resume: the finished job is taken as it is, not run twice', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const files = await writeDelegatingRun(box.base, 1, { slowMs: 3000 });
  const worker = await startWorker(t, redis.url, join(box.base, 'worker-1'));
  const common = queueCommon(box, redis.url);
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, { ...files, json: false }));
  await waitForFile(join(box.workspace, 'calls.log'), /task-0/);
  process.kill(coordinator.pid, 'SIGKILL');
  assert.equal(await coordinator.exited, null);
  await assertGone(coordinator.pid);
  const runId = /run (run-\S+) started/.exec(coordinator.stderr())![1]!;
  // The job finishes on the worker while no coordinator waits for it.
  await worker.waitForStderr(/job \S+ succeeded/, 120_000);

  const resumed = await runCliToEnd(t, ['resume', ...common, '--json'], 180_000);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual((resumed.json as { runs: unknown[] }).runs, [
    { run: runId, status: 'succeeded', output: 'task-0#1=0', error: null },
  ]);
  assert.equal(readFileSync(join(box.workspace, 'calls.log'), 'utf8'), 'task-0\n', 'the job ran once');
  assert.equal(worker.stderr().match(/ taken/g)?.length, 1, 'the worker took one job');
  const analysts = readRunRecord(box, runId).invocations.filter((i) => i.agent === 'analyst');
  assert.equal(analysts.length, 1);
  assert.equal(analysts[0]!.state, 'succeeded');
  assert.deepEqual(
    analysts[0]!.attempts.map((a) => [a.attempt, a.outcome, a.queue?.job]),
    [[1, 'succeeded', `${runId}__${analysts[0]!.id}__1`]],
  );
  await stopWorker(worker);
  await assertNothingLeft(box.project, readJournal(box, runId));
});

test('Redis stopped mid-run: a clear error, nothing left running; resume continues once it is back', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const files = await writeDelegatingRun(box.base, 1, { slowMs: 3000 });
  const worker = await startWorker(t, redis.url, join(box.base, 'worker-1'));
  const unreachable = ['--queue-unreachable-ms', '1500'];
  const common = [...queueCommon(box, redis.url), ...unreachable];
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, { ...files, extra: unreachable, json: false }));
  await waitForFile(join(box.workspace, 'calls.log'), /task-0/);
  await redis.stop();
  const code = await coordinator.exited;
  assert.equal(code, 1, coordinator.stderr());
  await assertGone(coordinator.pid);
  const stderr = coordinator.stderr();
  assert.match(stderr, /error \[queue_unreachable\]: the queue at unix:\/\/\S+redis\.sock did not answer/);
  assert.match(stderr, /the run was interrupted; continue it with: scienceevolve resume/);
  const runId = /run (run-\S+) started/.exec(stderr)![1]!;
  // The coordinator's own processes (Main's services) are gone.
  const before = readJournal(box, runId);
  for (const e of ofType(before, 'service.ready')) await assertGone(e.pid!);
  const stopped = readRunRecord(box, runId);
  assert.equal(stopped.status, 'interrupted');
  assert.equal(stopped.error?.code, 'queue_unreachable');

  await redis.start();
  const resumed = await runCliToEnd(t, ['resume', ...common, '--json'], 180_000);
  assert.equal(resumed.code, 0, resumed.stderr);
  const [only] = (resumed.json as { runs: Array<{ run: string; status: string; output: string }> }).runs;
  assert.equal(only?.run, runId);
  assert.equal(only?.status, 'succeeded');
  // The job either completed when Redis came back or, its lock lost meanwhile, ran again from its start.
  assert.match(only?.output ?? '', /^task-0#[12]=0$/);
  await stopWorker(worker);
  await assertNothingLeft(box.project, readJournal(box, runId));
});

test('a worker stopped with a second signal hands its job back: another worker takes it, no failure counted', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  // The analyst sleeps 8 s in its `slow` service: time enough to stop its worker mid-invocation.
  const files = await writeDelegatingRun(box.base, 1, { slowMs: 8000, retries: 0 });
  const workers = [
    await startWorker(t, redis.url, join(box.base, 'worker-1')),
    await startWorker(t, redis.url, join(box.base, 'worker-2')),
  ];
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, files));
  await waitForFile(join(box.workspace, 'calls.log'), /task-0/);
  const first = workers.find((w) => / taken/.test(w.stderr()))!;
  assert.ok(first !== undefined, 'a worker took the job');
  const second = workers.find((w) => w !== first)!;
  const services = markedProcesses(box.project).filter((pid) => pid !== coordinator.pid);
  process.kill(first.pid, 'SIGTERM');
  await first.waitForStderr(/received SIGTERM: draining/);
  process.kill(first.pid, 'SIGTERM');
  assert.equal(await first.exited, 0, first.stderr());
  await assertGone(first.pid);
  assert.match(first.stderr(), /job \S+ handed back to the queue/);
  assert.match(first.stdout(), /stopped \(jobs handed back\)/);
  assert.doesNotMatch(first.stderr(), /job \S+ failed/);

  assert.equal(await coordinator.exited, 0, coordinator.stderr());
  await assertGone(coordinator.pid);
  const doc = JSON.parse(coordinator.stdout()) as RunDoc;
  assert.equal(doc.status, 'succeeded');
  // The second worker ran the invocation from its start: the count ran twice.
  assert.equal(doc.output, 'task-0#2=0');
  // The stopped worker's services (as Main's, now the run is over) are gone.
  for (const pid of services) await assertGone(pid);
  const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.equal(analyst.attempts.length, 1, 'no failed attempt: the same job went on');
  assert.equal(analyst.attempts[0]!.outcome, 'succeeded');
  assert.deepEqual(
    analyst.attempts[0]!.queue!.workers.map((w) => Number(w.split(':').at(-1))),
    [first.pid, second.pid],
  );
  // BullMQ counted neither a failure nor a stall for the job.
  const queue = new Queue(DEFAULT_QUEUE_NAME, { connection: parseQueueUrl(redis.url).connection });
  t.after(() => queue.close());
  const job = await queue.getJob(analyst.attempts[0]!.queue!.job);
  assert.ok(job !== undefined);
  // attemptsMade counts finished processing (the completed one only); the handed-back start is not a failure.
  assert.deepEqual(
    { attemptsMade: job.attemptsMade, stalledCounter: job.stalledCounter, failedReason: job.failedReason ?? null },
    { attemptsMade: 1, stalledCounter: 0, failedReason: null },
  );
  await queue.close();
  await stopWorker(second);
  await assertNothingLeft(box.project, doc.events);
});
