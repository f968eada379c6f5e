/**
 * Queued invocations re-attach to their MCP tasks (SPEC §7, §10.3), end to end: a real redis-server, real
 * `scienceevolve worker` processes (short lock and stall intervals) and the remote task server (2025-11-25
 * era, in this test's process) whose `work` tool counts its executions in a file. The analyst (a worker
 * invocation, so a queue job) calls a 9 s task; the worker that took the job is SIGKILLed while the task
 * runs. Either the job is taken again by another worker (a stalled job), or — with `--max-stalled 0` — it
 * fails and the coordinator retries the invocation with a new job. Both ways the run finishes with the
 * task's result, the tool ran once, and the replayed call carries the task's id. Every process is proven
 * gone.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { DEFAULT_QUEUE_NAME } from '../../packages/sdk/src/queue/queueClient.js';
import { parseQueueUrl } from '../../packages/sdk/src/queue/queueUrl.js';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { assertGone } from '../fixtures/store/children.js';
import { startRemoteTasks } from '../fixtures/tasks/remoteTasks.js';
import type { CliChild } from '../fixtures/engine/cli.js';
import { assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';
import {
  RUN_TIMEOUT_MS,
  type RunDoc,
  queueCommon,
  queuedRunArgs,
  readJournal,
  readRunRecord,
  startRedis,
  startWorker,
  stopWorker,
} from './helpers.js';

const TASK_MS = 9000;

/** The queued run: Main delegates to the analyst, whose one call is the remote `work` task. */
async function queuedTaskRun(t: TestContext) {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const log = join(box.base, 'remote-tasks.log');
  writeFileSync(log, '');
  const remote = await startRemoteTasks(log, (fn) => t.after(fn), 'legacy');
  const workflowPath = join(box.base, 'workflow.json');
  const scriptPath = join(box.base, 'script.json');
  const scripted = { type: 'scripted' };
  await writeFile(
    workflowPath,
    JSON.stringify({
      orchestration: { invocationRetries: 1 },
      agents: {
        main: { harness: scripted, mcpServers: [] },
        analyst: { harness: scripted, mcpServers: [{ name: 'lab', url: remote.url }] },
      },
    }),
  );
  await writeFile(
    scriptPath,
    JSON.stringify({
      agents: {
        main: [
          { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'run the long task' } },
          { final: '{{0}}' },
        ],
        analyst: [{ call: 'lab__work', arguments: { ms: TASK_MS, text: 'queued' } }, { final: 'got: {{0}}' }],
      },
    }),
  );
  const executions = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('run '));
  const queue = new Queue(DEFAULT_QUEUE_NAME, { connection: parseQueueUrl(redis.url).connection });
  t.after(() => queue.close());
  const files = { workflowPath, scriptPath, extra: ['--forward-timeout-ms', '2000'] };
  return { box, redis, queue, files, executions };
}

/** Polls the queue (60 s) until an active job's log holds an accepted task; that job's id and the task's. */
async function acceptedOnQueue(queue: Queue): Promise<{ job: string; taskId: string }> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    for (const job of await queue.getJobs(['active'])) {
      if (job.id === undefined) continue;
      const { logs } = await queue.getJobLogs(job.id, 0, -1, true);
      const line = logs.find((l) => l.startsWith('task accepted '));
      if (line !== undefined) {
        return { job: job.id, taskId: (JSON.parse(line.slice('task accepted '.length)) as { taskId: string }).taskId };
      }
    }
    if (Date.now() > deadline) assert.fail('no worker logged an accepted task within 60 s');
    await sleep(50);
  }
}

/** SIGKILLs the worker that took the job (its services marked in the project are collected by its supervisor). */
async function killTaker(workers: CliChild[], coordinatorPid: number, project: string): Promise<CliChild> {
  const taker = workers.find((w) => / taken/.test(w.stderr()));
  assert.ok(taker !== undefined, 'a worker took the job');
  const marked = markedProcesses(project).filter((pid) => pid !== coordinatorPid);
  process.kill(taker.pid, 'SIGKILL');
  assert.equal(await taker.exited, null);
  await assertGone(taker.pid);
  for (const pid of marked) await assertGone(pid, 15_000);
  return taker;
}

test('a worker SIGKILLed while its job follows a remote task: the job taken again re-attaches, the tool ran once', {
  timeout: 300_000,
}, async (t) => {
  const { box, redis, queue, files, executions } = await queuedTaskRun(t);
  const workers = [
    await startWorker(t, redis.url, join(box.base, 'worker-1')),
    await startWorker(t, redis.url, join(box.base, 'worker-2')),
  ];
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, files));
  const { job, taskId } = await acceptedOnQueue(queue);
  const first = await killTaker(workers, coordinator.pid, box.project);
  assert.deepEqual(executions(), [`run ${TASK_MS}`], 'killed while the task runs');
  const second = workers.find((w) => w !== first)!;

  assert.equal(await coordinator.exited, 0, coordinator.stderr());
  await assertGone(coordinator.pid);
  const doc = JSON.parse(coordinator.stdout()) as RunDoc;
  assert.equal(doc.status, 'succeeded', coordinator.stderr());
  assert.equal(doc.output, 'got: worked queued');
  assert.deepEqual(executions(), [`run ${TASK_MS}`], 'the tool ran once');
  assert.match(second.stderr(), new RegExp(`job ${job} taken`), 'the second worker took the same job');

  const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.deepEqual(
    analyst.attempts.map((a) => [a.outcome, a.queue?.job]),
    [['succeeded', job]],
    'one attempt: the same job went on',
  );
  assert.deepEqual(
    analyst.attempts[0]!.queue!.workers.map((w) => Number(w.split(':').at(-1))),
    [first.pid, second.pid],
  );
  const journal = readJournal(box, doc.run);
  // The dead taker's acceptance is journaled by the coordinator (from the job's log); the call carries it.
  const accepted = ofType(journal, 'tool.task_accepted').filter((e) => e.invocation === analyst.id);
  assert.deepEqual(
    accepted.map((e) => [e.tool, e.taskId, e.era]),
    [['lab__work', taskId, 'legacy']],
  );
  const called = ofType(journal, 'tool.called').filter((e) => e.invocation === analyst.id);
  assert.deepEqual(
    called.map((e) => [e.tool, e.ok, e.taskId]),
    [['lab__work', true, taskId]],
    'the replayed call re-attached to the task',
  );
  await stopWorker(second);
  await assertNothingLeft(box.project, journal);
});

test('a worker SIGKILLed while a remote task runs, its job failed (--max-stalled 0): the next job re-attaches', {
  timeout: 300_000,
}, async (t) => {
  const { box, redis, queue, files, executions } = await queuedTaskRun(t);
  const stalled = ['--max-stalled', '0'];
  const workers = [
    await startWorker(t, redis.url, join(box.base, 'worker-1'), stalled),
    await startWorker(t, redis.url, join(box.base, 'worker-2'), stalled),
  ];
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, files));
  const { job, taskId } = await acceptedOnQueue(queue);
  const first = await killTaker(workers, coordinator.pid, box.project);
  const second = workers.find((w) => w !== first)!;

  assert.equal(await coordinator.exited, 0, coordinator.stderr());
  await assertGone(coordinator.pid);
  const doc = JSON.parse(coordinator.stdout()) as RunDoc;
  assert.equal(doc.status, 'succeeded', coordinator.stderr());
  assert.equal(doc.output, 'got: worked queued');
  assert.deepEqual(executions(), [`run ${TASK_MS}`], 'the tool ran once');

  const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.deepEqual(
    analyst.attempts.map((a) => [a.outcome, a.error?.code ?? null, a.queue?.job]),
    [
      ['failed', 'worker_lost', job],
      ['succeeded', null, job.replace(/__1$/, '__2')],
    ],
    'the failed job was followed by a new one',
  );
  const journal = readJournal(box, doc.run);
  const mine = journal.filter((e) => 'invocation' in e && e.invocation === analyst.id);
  const acceptedAt = mine.findIndex((e) => e.type === 'tool.task_accepted');
  const failedAt = mine.findIndex((e) => e.type === 'invocation.attempt_failed');
  assert.ok(acceptedAt >= 0 && acceptedAt < failedAt, 'the task was journaled before the next attempt was built');
  assert.deepEqual(
    ofType(mine, 'tool.task_accepted').map((e) => e.taskId),
    [taskId],
  );
  assert.deepEqual(
    ofType(mine, 'tool.called').map((e) => [e.tool, e.ok, e.taskId]),
    [['lab__work', true, taskId]],
    'the new job re-attached to the task',
  );
  await stopWorker(second);
  await assertNothingLeft(box.project, journal);
});

test('the coordinator and the worker SIGKILLed while a remote task runs, then resume: re-attached, the tool ran once', {
  timeout: 300_000,
}, async (t) => {
  const { box, redis, queue, files, executions } = await queuedTaskRun(t);
  const stalled = ['--max-stalled', '0'];
  const first = await startWorker(t, redis.url, join(box.base, 'worker-1'), stalled);
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, { ...files, json: false }));
  const { taskId } = await acceptedOnQueue(queue);
  process.kill(coordinator.pid, 'SIGKILL');
  assert.equal(await coordinator.exited, null);
  await assertGone(coordinator.pid);
  await killTaker([first], coordinator.pid, box.project);
  const runId = /run (run-\S+) started/.exec(coordinator.stderr())![1]!;

  // A new worker (its stall check fails the dead worker's job), and the run resumed.
  const second = await startWorker(t, redis.url, join(box.base, 'worker-2'), stalled);
  const resumed = await runCliToEnd(
    t,
    ['resume', ...queueCommon(box, redis.url), '--forward-timeout-ms', '2000', '--json'],
    RUN_TIMEOUT_MS,
  );
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual((resumed.json as { runs: unknown[] }).runs, [
    { run: runId, status: 'succeeded', output: 'got: worked queued', error: null },
  ]);
  assert.deepEqual(executions(), [`run ${TASK_MS}`], 'the tool ran once');
  const journal = readJournal(box, runId);
  const analyst = readRunRecord(box, runId).invocations.find((i) => i.agent === 'analyst')!;
  assert.deepEqual(
    ofType(journal, 'tool.called')
      .filter((e) => e.invocation === analyst.id)
      .map((e) => [e.tool, e.ok, e.taskId]),
    [['lab__work', true, taskId]],
    'the resumed invocation re-attached to the task',
  );
  await stopWorker(second);
  await assertNothingLeft(box.project, journal);
});
