/**
 * The queue backend's faults, end to end with a real redis-server and real worker processes (short lock
 * and stall intervals): a worker SIGKILLed mid-invocation, the coordinator SIGKILLed and resumed, Redis
 * stopped mid-run. Each test runs one worker invocation with real services: about 15–40 s each on 2 cores.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runEventsPath, runRecordPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';
import { startRedis, startWorker, stopWorker, waitForFile, writeDelegatingRun } from './helpers.js';

function journal(path: string): RunEvent[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RunEvent);
}

test('a worker SIGKILLed mid-invocation: the job completes on another worker, nothing of the dead one is left', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  // The analyst sleeps 8 s in its `slow` service: time enough to kill its worker mid-invocation.
  const { workflowPath, scriptPath } = await writeDelegatingRun(box.base, 1, { slowMs: 8000 });
  const workers = [
    await startWorker(t, redis.url, join(box.base, 'worker-1')),
    await startWorker(t, redis.url, join(box.base, 'worker-2')),
  ];
  const coordinator = startCli(t, [
    'run',
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    '--workspace',
    box.workspace,
    '--workflow',
    workflowPath,
    '--script',
    scriptPath,
    '--grace-ms',
    '300',
    '--queue',
    redis.url,
    '--json',
    'add',
  ]);
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
  const doc = JSON.parse(coordinator.stdout()) as { run: string; status: string; output: string; events: RunEvent[] };
  assert.equal(doc.status, 'succeeded');
  // The second worker ran the invocation from its start with fresh services: the count ran twice.
  assert.equal(doc.output, 'task-0#2=0');
  const record = JSON.parse(
    readFileSync(runRecordPath(new ProjectPaths(box.dataDir, box.project), doc.run), 'utf8'),
  ) as RunRecord;
  const analyst = record.invocations.find((i) => i.agent === 'analyst')!;
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
  const { workflowPath, scriptPath } = await writeDelegatingRun(box.base, 1, { slowMs: 3000 });
  const worker = await startWorker(t, redis.url, join(box.base, 'worker-1'));
  const common = ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '300', '--queue', redis.url];
  const coordinator = startCli(t, [
    'run',
    ...common,
    '--workspace',
    box.workspace,
    '--workflow',
    workflowPath,
    '--script',
    scriptPath,
    'add',
  ]);
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
  const paths = new ProjectPaths(box.dataDir, box.project);
  const record = JSON.parse(readFileSync(runRecordPath(paths, runId), 'utf8')) as RunRecord;
  const analysts = record.invocations.filter((i) => i.agent === 'analyst');
  assert.equal(analysts.length, 1);
  assert.equal(analysts[0]!.state, 'succeeded');
  assert.deepEqual(
    analysts[0]!.attempts.map((a) => [a.attempt, a.outcome, a.queue?.job]),
    [[1, 'succeeded', `${runId}__${analysts[0]!.id}__1`]],
  );
  await stopWorker(worker);
  await assertNothingLeft(box.project, journal(runEventsPath(paths, runId)));
});

test('Redis stopped mid-run: a clear error, nothing left running; resume continues once it is back', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const { workflowPath, scriptPath } = await writeDelegatingRun(box.base, 1, { slowMs: 3000 });
  const worker = await startWorker(t, redis.url, join(box.base, 'worker-1'));
  const common = [
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    '--grace-ms',
    '300',
    '--queue',
    redis.url,
    '--queue-unreachable-ms',
    '1500',
  ];
  const coordinator = startCli(t, [
    'run',
    ...common,
    '--workspace',
    box.workspace,
    '--workflow',
    workflowPath,
    '--script',
    scriptPath,
    'add',
  ]);
  await waitForFile(join(box.workspace, 'calls.log'), /task-0/);
  await redis.stop();
  const code = await coordinator.exited;
  assert.equal(code, 1, coordinator.stderr());
  await assertGone(coordinator.pid);
  const stderr = coordinator.stderr();
  assert.match(stderr, /error \[queue_unreachable\]: the queue at unix:\/\/\S+redis\.sock did not answer/);
  assert.match(stderr, /the run was interrupted; continue it with: scienceevolve resume/);
  const runId = /run (run-\S+) started/.exec(stderr)![1]!;
  const paths = new ProjectPaths(box.dataDir, box.project);
  // The coordinator's own processes (Main's services) are gone.
  const before = journal(runEventsPath(paths, runId));
  for (const e of ofType(before, 'service.ready')) await assertGone(e.pid!);
  const stopped = JSON.parse(readFileSync(runRecordPath(paths, runId), 'utf8')) as RunRecord;
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
  await assertNothingLeft(box.project, journal(runEventsPath(paths, runId)));
});
