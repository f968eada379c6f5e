/**
 * Face tasks (faces/faceTasks.ts) beyond the main path of tasksFaceClients.test.ts, on in-process faces
 * over a real task service:
 *
 * - the socket face a run's agent CLI reaches, over the run's observed surface: a 2025-11-25 client's
 *   face task is journaled as the service's task (`tool.task_accepted`, `tool.called` with its id); a
 *   face task is unknown on another connection; closing the connection cancels its running task at the
 *   service;
 * - a 2026-07-28 client: a tool listed without task support becomes a face task when the service answers
 *   it with one; a tool the service answers directly is answered directly; a cancelled face task's
 *   `tasks/get` says `cancelled`, and cancelling it again is refused.
 *
 * Timeout 90 s a test: a service start and a few seconds of tasks on a loaded machine.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { observeSurface } from '../../packages/sdk/src/engine/toolJournal.js';
import type { RunEventInput } from '../../packages/sdk/src/events/runEvents.js';
import { FaceTasks } from '../../packages/sdk/src/faces/faceTasks.js';
import { LineTransport } from '../../packages/sdk/src/faces/lineTransport.js';
import { startSocketFace } from '../../packages/sdk/src/faces/socketFace.js';
import type { StdioServiceSpec } from '../../packages/sdk/src/sessions/stdioLaunch.js';
import { cancelTask, pollTask, sendTaskCall, TASK_CLIENT_CAPABILITIES } from '../../packages/sdk/src/sessions/tasks.js';
import { createSurface } from '../../packages/sdk/src/surface/surface.js';
import { tasksV2Entry } from '../fixtures/tasks/tasksV2.mjs';
import { faceClient } from '../sdk/faces/faceClients.js';
import { assertAllGone, fixtureSpec, startService, tempDir } from '../sdk/sessions/helpers.js';

const TASKS_V1 = new URL('../fixtures/tasks/tasksV1.cjs', import.meta.url).pathname;

function taskSpec(t: TestContext, era: 'legacy' | 'modern'): { spec: StdioServiceSpec; log: string } {
  const dir = tempDir(t);
  const log = join(dir, 'tasks.log');
  writeFileSync(log, '');
  const base = fixtureSpec(t, 'plain.cjs', { serviceName: 'lab', args: [log] });
  if (era === 'legacy') return { spec: { ...base, entrypointPath: TASKS_V1 }, log };
  const entry = join(dir, 'entry.mjs');
  writeFileSync(
    entry,
    tasksV2Entry((name: string) => import.meta.resolve(name)),
  );
  return { spec: { ...base, entrypointPath: entry }, log };
}

const lines = (log: string) => readFileSync(log, 'utf8').split('\n').filter(Boolean);

async function logged(log: string, prefix: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const line = lines(log).find((l) => l.startsWith(prefix));
    if (line !== undefined) return line;
    if (Date.now() > deadline) assert.fail(`the service never logged "${prefix}…": ${lines(log).join(' | ')}`);
    await sleep(50);
  }
}

/** A v1 client declaring tasks, connected to the socket face at `socketPath` (and its socket). */
async function socketClient(
  t: TestContext,
  socketPath: string,
  name: string,
): Promise<{ client: V1Client; socket: ReturnType<typeof connect> }> {
  const socket = connect(socketPath);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  t.after(() => socket.destroy());
  const client = new V1Client(
    { name, version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {}, requests: {} } } },
  );
  await client.connect(new LineTransport(socket, socket) as never);
  t.after(() => client.close().catch(() => {}));
  return { client, socket };
}

test('socket face in a run (2025-11-25): a face task is journaled, private to its connection, cancelled when it closes', {
  timeout: 90_000,
}, async (t) => {
  const { spec, log } = taskSpec(t, 'legacy');
  const { session } = await startService(t, spec);
  const surface = createSurface([session], { timeoutMs: 2000 });
  const events: RunEventInput[] = [];
  const observed = observeSurface(surface, { invocation: 'inv-1', agent: 'main', emit: (e) => events.push(e) });
  const face = await startSocketFace(observed);
  t.after(() => face.close());

  const { client: one, socket: oneSocket } = await socketClient(t, face.socketPath, 'one');
  const stream = one.experimental.tasks.callToolStream(
    { name: 'lab__work', arguments: { ms: 2500, text: 'in a run' } },
    CallToolResultSchema,
    { task: {} },
  );
  let faceTaskId: string | undefined;
  let text: string | undefined;
  for await (const message of stream) {
    if (message.type === 'taskCreated') faceTaskId = message.task.taskId;
    if (message.type === 'result') text = (message.result.content[0] as { text?: string } | undefined)?.text;
    if (message.type === 'error') assert.fail(message.error.message);
  }
  assert.equal(text, 'worked in a run');
  const accepted = events.filter((e) => e.type === 'tool.task_accepted') as { taskId?: string }[];
  assert.equal(accepted.length, 1, 'the service task behind the face task was journaled');
  assert.notEqual(accepted[0]?.taskId, faceTaskId, 'the journal has the service task id, the client the face one');
  const called = events.find((e) => e.type === 'tool.called') as { taskId?: string; ok?: boolean } | undefined;
  assert.equal(called?.ok, true);
  assert.equal(called?.taskId, accepted[0]?.taskId);

  // Another connection cannot reach the first one's task.
  const { client: two } = await socketClient(t, face.socketPath, 'two');
  await assert.rejects(two.experimental.tasks.getTask(faceTaskId!), /no task/);
  assert.deepEqual((await two.experimental.tasks.listTasks()).tasks, []);

  // A task still running when its connection closes is cancelled at the service.
  await one.request(
    { method: 'tools/call', params: { name: 'lab__work', arguments: { ms: 60_000 }, task: {} } },
    CreateTaskResultSchema,
  );
  await logged(log, 'run 60000');
  // As the relay does when its CLI exits: the face sees the connection end.
  oneSocket.end();
  await logged(log, 'cancelled ');
  await one.close();
  assert.deepEqual(
    lines(log).filter((l) => l.startsWith('run ')),
    ['run 2500', 'run 60000'],
    'each call ran the tool once',
  );
  await two.close();
  await face.close();
  surface.close();
  await session.close();
  await assertAllGone([session.pid]);
});

test('2026-07-28 face client: a tool listed without task support becomes a face task when the service makes it one', {
  timeout: 90_000,
}, async (t) => {
  const { spec, log } = taskSpec(t, 'modern');
  const { session } = await startService(t, spec);
  const surface = createSurface([session], { timeoutMs: 2000 });
  for (const kind of ['stdio 2026-07-28', 'http 2026-07-28'] as const) {
    const client = await faceClient(t, surface, kind, { capabilities: TASK_CLIENT_CAPABILITIES });
    const quiet = (await client.listTools()).tools.find((tool) => tool.name === 'lab__quiet_work');
    assert.equal(quiet?.execution, undefined, 'the tool lists no task support');
    const answer = await sendTaskCall(client, { name: 'lab__quiet_work', arguments: { ms: 2500 } }, { timeout: 2000 });
    assert.equal(answer.kind, 'task', `${kind}: the service's task became a face task`);
    if (answer.kind !== 'task') return;
    const result = await pollTask(client, answer.task, {
      what: 'quiet work',
      requestTimeoutMs: 2000,
      deadlineAt: Date.now() + 30_000,
    });
    assert.equal((result.content[0] as { text?: string }).text, 'worked 2500');

    // Answered directly by the service: answered directly by the face.
    const direct = await sendTaskCall(client, { name: 'lab__plain_work', arguments: { ms: 50 } }, { timeout: 2000 });
    assert.equal(direct.kind, 'result');

    // Cancelled: tasks/get says so; a second cancel is refused; the service recorded the first.
    const long = await sendTaskCall(client, { name: 'lab__work', arguments: { ms: 60_000 } }, { timeout: 2000 });
    assert.equal(long.kind, 'task');
    if (long.kind !== 'task') return;
    await cancelTask(client, long.task);
    const status = (await client.request(
      { method: 'tasks/get', params: { taskId: long.task.taskId } } as never,
      { '~standard': { version: 1, vendor: 'test', validate: (value: unknown) => ({ value }) } } as never,
    )) as { status?: string };
    assert.equal(status.status, 'cancelled');
    await assert.rejects(cancelTask(client, long.task), /already cancelled/);
  }
  await logged(log, 'cancelled ');
  assert.equal(lines(log).filter((l) => l.startsWith('cancelled ')).length, 2, 'each cancel reached the service');
  assert.deepEqual(
    lines(log).filter((l) => l.startsWith('run ') || l.startsWith('plain ')),
    ['run 2500', 'plain 50', 'run 60000', 'run 2500', 'plain 50', 'run 60000'],
    'each call ran the tool once',
  );
  surface.close();
  await session.close();
  await assertAllGone([session.pid]);
});

test('a face client that declares tasks keeps the progress of a call answered directly', {
  timeout: 90_000,
}, async (t) => {
  const { session } = await startService(t, fixtureSpec(t, 'reportsProgress.cjs'));
  const surface = createSurface([session], { timeoutMs: 5000 });
  for (const kind of ['stdio 2026-07-28', 'http 2026-07-28'] as const) {
    const client = await faceClient(t, surface, kind, { capabilities: TASK_CLIENT_CAPABILITIES });
    const progress: number[] = [];
    const result = (await client.callTool(
      { name: 'reportsProgress__work', arguments: { steps: 3, stepMs: 100 } },
      { onprogress: (p) => progress.push(p.progress) },
    )) as { content: { type: string; text?: string }[] };
    assert.equal(result.content[0]?.text, 'done after 3 steps');
    assert.deepEqual(progress, [1, 2, 3], `${kind}: the service's progress reached the client`);
  }
  surface.close();
  await session.close();
  await assertAllGone([session.pid]);
});

test('a face keeps at most its limit of tasks; closing it cancels the running ones at the service', {
  timeout: 90_000,
}, async (t) => {
  const { spec, log } = taskSpec(t, 'legacy');
  const { session } = await startService(t, spec);
  const surface = createSurface([session], { timeoutMs: 2000 });
  const tasks = new FaceTasks(surface, { maxTasks: 1 });
  t.after(() => tasks.close());
  const signal = new AbortController().signal;
  const first = await tasks.call('lab__work', { ms: 60_000 }, { era: 'legacy' }, signal);
  assert.equal(first.kind, 'task');
  await assert.rejects(
    tasks.call('lab__work', { ms: 60_000 }, { era: 'legacy' }, signal),
    (error: { code?: number; message?: string }) =>
      error.code === -32600 && /at most 1 tasks/.test(error.message ?? ''),
  );
  await logged(log, 'run 60000');
  await tasks.close();
  await logged(log, 'cancelled ');
  assert.deepEqual(
    lines(log).filter((l) => l.startsWith('run ')),
    ['run 60000'],
    'the refused call never reached the service',
  );
  surface.close();
  await session.close();
  await assertAllGone([session.pid]);
});
