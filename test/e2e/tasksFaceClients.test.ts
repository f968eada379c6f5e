/**
 * A face client that declares tasks gets a task of the face's own (SPEC §7; faces/faceTasks.ts), through
 * the stdio face (`services serve`) and the HTTP face (`services serve --http`), on both eras:
 *
 * - 2025-11-25: the v1 SDK's experimental tasks client (`client.experimental.tasks`) against a project
 *   service on the v1 SDK's experimental tasks (tasksV1.cjs);
 * - 2026-07-28: the official v2 client declaring `io.modelcontextprotocol/tasks`, driven by the SDK's own
 *   task calls (sessions/tasks.ts, ext-tasks' schemas) against the 2026-era fixture (tasksV2.mjs);
 * - the same two clients through the stdio face in front of the remote task server of each era
 *   (remoteTasks.ts); and `@modelcontextprotocol/ext-tasks`' own requester session through the HTTP face,
 *   both eras.
 *
 * The task tool works 5 s and the forwarding timeout is 2 s: the client gets a task at once, polls it
 * through the face to `completed` and reads the result; the tool ran once; the face's task id is not the
 * service's. A second call is cancelled through the face, and the service records the `tasks/cancel`.
 * The built CLI and the services are real processes; every one is proven gone.
 *
 * Timeout 120 s a test: a serve process, a supervisor, a service and a 5 s task on a loaded machine.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  createTaskSessionFromClient,
  type RawClientDispatch,
  resultFromTaskOutcome,
  toolDeclarationFromMcpTool,
} from '@modelcontextprotocol/ext-tasks/client';
import { TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { loadWorkflow } from '../../packages/sdk/src/store/workflowLoad.js';
import { cancelTask, pollTask, sendTaskCall, TASK_CLIENT_CAPABILITIES } from '../../packages/sdk/src/sessions/tasks.js';
import { agent } from '../fixtures/engine/workflows.js';
import { startRemoteTasks } from '../fixtures/tasks/remoteTasks.js';
import { tasksV2Entry } from '../fixtures/tasks/tasksV2.mjs';
import {
  assertGone,
  assertNothingLeft,
  killLeftovers,
  type Lab,
  labServeArgs,
  markedProcesses,
  processesMentioning,
  spawnNode,
} from './helpers.js';

type Era = 'legacy' | 'modern';
type Face = 'stdio' | 'http';

/** The task fixture of `era` as a workflow definition (its log is tasks.log in the workspace). */
function taskDefinition(era: Era): { entrypoint: string; files: Record<string, string> } {
  if (era === 'legacy') {
    return {
      entrypoint: 'server.cjs',
      files: { 'server.cjs': readFileSync(new URL('../fixtures/tasks/tasksV1.cjs', import.meta.url), 'utf8') },
    };
  }
  return {
    entrypoint: 'server.mjs',
    files: {
      'server.mjs': tasksV2Entry((name: string) => import.meta.resolve(name), './tasksV2.mjs'),
      'tasksV2.mjs': readFileSync(new URL('../fixtures/tasks/tasksV2.mjs', import.meta.url), 'utf8'),
    },
  };
}

/**
 * A project whose agent `main` has the task service `lab` of `era`, loaded into a fresh data dir: a project
 * service, or with `remote` the remote task server of that era (remoteTasks.ts, in this process).
 */
async function taskProject(t: TestContext, era: Era, remote = false): Promise<Lab> {
  const dir = mkdtempSync(join(tmpdir(), 'se-e2e-'));
  const project = `e2e-${randomBytes(4).toString('hex')}`;
  t.after(async () => {
    killLeftovers({ dir, projectId: project });
    const deadline = Date.now() + 5000;
    while (processesMentioning(dir).length + markedProcesses(project).length > 0 && Date.now() < deadline)
      await sleep(25);
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });
  const dataDir = join(dir, 'data');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const workflowPath = join(dir, 'workflow.json');
  const workflow = remote
    ? {
        agents: {
          main: {
            harness: { type: 'scripted' },
            mcpServers: [
              {
                name: 'lab',
                url: (await startRemoteTasks(join(workspace, 'tasks.log'), (fn) => t.after(fn), era)).url,
              },
            ],
          },
        },
      }
    : { agents: { main: agent([['lab', 'lab']]) }, mcpDefinitions: { lab: taskDefinition(era) } };
  writeFileSync(workflowPath, JSON.stringify(workflow));
  await loadWorkflow({ dataDir, project, workflow: workflowPath });
  return { dir, dataDir, workspace, project, workflowPath };
}

/** The service's log lines (`run <ms>`, `done <taskId>`, `cancelled <taskId>`). */
function logLines(lab: Lab): string[] {
  try {
    return readFileSync(join(lab.workspace, 'tasks.log'), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** Waits (to 15 s) until the service's log has a line starting with `prefix`. */
async function logged(lab: Lab, prefix: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const line = logLines(lab).find((l) => l.startsWith(prefix));
    if (line !== undefined) return line;
    if (Date.now() > deadline) assert.fail(`the service never logged "${prefix}…": ${logLines(lab).join(' | ')}`);
    await sleep(50);
  }
}

const SERVE_OPTIONS = ['--forward-timeout-ms', '2000'];

/** How a client reaches the face: the serve process's pid (to prove it gone) and the transport of `era`'s client. */
async function faceTransport(
  t: TestContext,
  lab: Lab,
  face: Face,
  era: Era,
): Promise<{ transport: unknown; pid: () => number | null; stop: () => Promise<void> }> {
  const [, ...args] = labServeArgs(lab, SERVE_OPTIONS);
  if (face === 'stdio') {
    const transport =
      era === 'legacy'
        ? new V1StdioClientTransport({
            command: process.execPath,
            args: [labServeArgs(lab)[0]!, ...args],
            stderr: 'pipe',
          })
        : new StdioClientTransport({
            command: process.execPath,
            args: [labServeArgs(lab)[0]!, ...args],
            stderr: 'pipe',
          });
    // The serve process ends when its client closes its stdin.
    return { transport, pid: () => transport.pid, stop: async () => {} };
  }
  const tokenFile = join(lab.dir, 'token');
  const serve = spawnNode(
    t,
    labServeArgs(lab, [...SERVE_OPTIONS, '--http', '--port', '0', '--token-file', tokenFile, '--json']),
  );
  const { url } = await serve.json<{ url: string }>(60_000);
  const token = readFileSync(tokenFile, 'utf8');
  const requestInit = { headers: { Authorization: `Bearer ${token}` } };
  const stop = async () => {
    serve.child.kill('SIGTERM');
    await serve.exited;
  };
  const transport =
    era === 'legacy'
      ? new V1StreamableHTTPClientTransport(new URL(url), { requestInit })
      : new StreamableHTTPClientTransport(new URL(url), { requestInit });
  return { transport, pid: () => serve.pid, stop };
}

/** 2025-11-25: the v1 SDK's experimental tasks client. */
async function legacyClientRound(t: TestContext, lab: Lab, face: Face): Promise<number | null> {
  const { transport, pid, stop } = await faceTransport(t, lab, face, 'legacy');
  const client = new V1Client(
    { name: `face-tasks ${face} 2025`, version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {}, requests: {} } } },
  );
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport as Transport);
  const servePid = pid();
  const caps = client.getServerCapabilities() as { tasks?: { requests?: { tools?: { call?: unknown } } } };
  assert.ok(caps.tasks?.requests?.tools?.call, `the face declares task support: ${JSON.stringify(caps)}`);
  const { tools } = await client.listTools();
  const work = tools.find((tool) => tool.name === 'lab__work');
  assert.equal((work?.execution as { taskSupport?: string } | undefined)?.taskSupport, 'optional');

  // Completed: the official client creates the task, polls it through the face and reads its result.
  const started = Date.now();
  const seen: string[] = [];
  let faceTaskId: string | undefined;
  let result: { content: { type: string; text?: string }[]; isError?: boolean } | undefined;
  const stream = client.experimental.tasks.callToolStream(
    { name: 'lab__work', arguments: { ms: 5000, text: `${face} 2025` } },
    CallToolResultSchema,
    { task: { ttl: 600_000 }, timeout: 3000 },
  );
  for await (const message of stream) {
    if (message.type === 'taskCreated') {
      faceTaskId = message.task.taskId;
      assert.ok(
        Date.now() - started < 4000,
        `the task was answered at once, long before the 5 s work ended (${Date.now() - started} ms)`,
      );
    }
    if (message.type === 'taskStatus') seen.push(message.task.status);
    if (message.type === 'result') result = message.result as typeof result;
    if (message.type === 'error') assert.fail(`the task failed: ${message.error.message}`);
  }
  assert.ok(faceTaskId !== undefined, 'a task was created');
  assert.ok(seen.includes('working') && seen.at(-1) === 'completed', `polled to completion: ${seen}`);
  assert.equal(result?.isError, undefined);
  assert.equal(result?.content[0]?.text, `worked ${face} 2025`);
  assert.ok(Date.now() - started >= 5000, 'the result is the 5 s work');
  const done = await logged(lab, 'done ');
  assert.notEqual(done, `done ${faceTaskId}`, "the face's task id is its own, not the service's");
  const task = await client.experimental.tasks.getTask(faceTaskId);
  assert.equal(task.status, 'completed');
  if (face === 'stdio') {
    // The connection's own tasks are listed; the HTTP face lists none (its clients share one token).
    const listed = await client.experimental.tasks.listTasks();
    assert.deepEqual(
      listed.tasks.map((t) => t.taskId),
      [faceTaskId],
    );
  } else {
    assert.equal((caps.tasks as { list?: unknown }).list, undefined, 'the HTTP face does not offer tasks/list');
    await assert.rejects(client.experimental.tasks.listTasks(), /-32601|not support|refused/i);
  }

  // Cancelled through the face: the service's task is cancelled too.
  const created = await client.request(
    { method: 'tools/call', params: { name: 'lab__work', arguments: { ms: 60_000 }, task: { ttl: 600_000 } } },
    CreateTaskResultSchema,
  );
  await logged(lab, 'run 60000');
  const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
  assert.equal(cancelled.status, 'cancelled');
  await logged(lab, 'cancelled ');
  assert.equal((await client.experimental.tasks.getTask(created.task.taskId)).status, 'cancelled');
  await assert.rejects(client.experimental.tasks.getTask('0'.repeat(32)), /no task/);
  await client.close();
  await stop();
  return servePid;
}

/** 2026-07-28: the official v2 client declaring the tasks extension. */
async function modernClientRound(t: TestContext, lab: Lab, face: Face): Promise<number | null> {
  const { transport, pid, stop } = await faceTransport(t, lab, face, 'modern');
  const client = new Client(
    { name: `face-tasks ${face} 2026`, version: '1.0.0' },
    { capabilities: TASK_CLIENT_CAPABILITIES, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport as StreamableHTTPClientTransport);
  const servePid = pid();
  assert.equal(client.getProtocolEra(), 'modern');
  const caps = client.getServerCapabilities() as { extensions?: Record<string, unknown> };
  assert.ok(caps.extensions?.[TASKS_EXTENSION_ID_V2] !== undefined, `the face declares tasks: ${JSON.stringify(caps)}`);
  // Listing waits for the services to start (the face answers before they are ready).
  assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'lab__work'));

  const started = Date.now();
  const answer = await sendTaskCall(
    client,
    { name: 'lab__work', arguments: { ms: 5000, text: `${face} 2026` } },
    { timeout: 3000 },
  );
  assert.equal(answer.kind, 'task', 'the face answers with a task');
  if (answer.kind !== 'task') return servePid;
  assert.ok(
    Date.now() - started < 4000,
    `the task was answered at once, long before the 5 s work ended (${Date.now() - started} ms)`,
  );
  const statuses: string[] = [];
  const result = (await pollTask(client, answer.task, {
    what: 'the face task',
    requestTimeoutMs: 3000,
    deadlineAt: Date.now() + 60_000,
    onStatus: (status) => statuses.push(status),
  })) as { content: { type: string; text?: string }[]; isError?: boolean };
  assert.ok(statuses.includes('working') && statuses.at(-1) === 'completed', `polled to completion: ${statuses}`);
  assert.equal(result.isError, undefined);
  assert.equal(result.content[0]?.text, `worked ${face} 2026`);
  assert.ok(Date.now() - started >= 5000, 'the result is the 5 s work');
  const done = await logged(lab, 'done ');
  assert.notEqual(done, `done ${answer.task.taskId}`, "the face's task id is its own, not the service's");

  const second = await sendTaskCall(client, { name: 'lab__work', arguments: { ms: 60_000 } }, { timeout: 3000 });
  assert.equal(second.kind, 'task');
  if (second.kind !== 'task') return servePid;
  await logged(lab, 'run 60000');
  await cancelTask(client, second.task);
  await logged(lab, 'cancelled ');
  await assert.rejects(
    pollTask(client, second.task, {
      what: 'the cancelled task',
      requestTimeoutMs: 3000,
      deadlineAt: Date.now() + 10_000,
    }),
    (error: { code?: string }) => error.code === 'task_cancelled',
  );
  await client.close();
  await stop();
  return servePid;
}

for (const era of ['legacy', 'modern'] as const) {
  test(`stdio face, remote task server (${era === 'legacy' ? '2025-11-25' : '2026-07-28'}), client declaring tasks: a face task polled to its result; a cancel reaches the server`, {
    timeout: 120_000,
  }, async (t) => {
    const lab = await taskProject(t, era, true);
    const servePid = await (era === 'legacy' ? legacyClientRound(t, lab, 'stdio') : modernClientRound(t, lab, 'stdio'));
    const runs = logLines(lab).filter((l) => l.startsWith('run '));
    assert.deepEqual(runs, ['run 5000', 'run 60000'], 'each call ran the tool once');
    if (servePid !== null) await assertGone(servePid, 20_000);
    await assertNothingLeft({ dir: lab.dir, projectId: lab.project }, 20_000);
  });
  for (const face of ['stdio', 'http'] as const) {
    test(`${face} face, ${era === 'legacy' ? '2025-11-25' : '2026-07-28'} client declaring tasks: a 5 s tool is a face task, polled to its result; a cancel reaches the service`, {
      timeout: 120_000,
    }, async (t) => {
      const lab = await taskProject(t, era);
      const servePid = await (era === 'legacy' ? legacyClientRound(t, lab, face) : modernClientRound(t, lab, face));
      const runs = logLines(lab).filter((l) => l.startsWith('run '));
      assert.deepEqual(runs, ['run 5000', 'run 60000'], 'each call ran the tool once');
      if (servePid !== null) await assertGone(servePid, 20_000);
      await assertNothingLeft({ dir: lab.dir, projectId: lab.project }, 20_000);
    });
  }
}

/**
 * `@modelcontextprotocol/ext-tasks`' requester session through the HTTP face: 2025-11-25 through the v2
 * client in that era, 2026-07-28 through a raw dispatch of its own (the package needs one for that era: the
 * official client does not decode `resultType: "task"`).
 */
for (const era of ['legacy', 'modern'] as const) {
  test(`http face, ext-tasks requester (${era === 'legacy' ? '2025-11-25' : '2026-07-28'}): a 5 s tool settles as a face task; its cancel reaches the service`, {
    timeout: 120_000,
  }, async (t) => {
    const lab = await taskProject(t, era);
    const tokenFile = join(lab.dir, 'token');
    const serve = spawnNode(
      t,
      labServeArgs(lab, [...SERVE_OPTIONS, '--http', '--port', '0', '--token-file', tokenFile, '--json']),
    );
    const { url } = await serve.json<{ url: string }>(60_000);
    const token = readFileSync(tokenFile, 'utf8');
    const clientInfo = { name: `ext-tasks ${era}`, version: '1.0.0' };
    const client = new Client(clientInfo, {
      capabilities: TASK_CLIENT_CAPABILITIES,
      versionNegotiation: { mode: era === 'legacy' ? 'legacy' : { pin: '2026-07-28' } },
    });
    t.after(() => client.close().catch(() => {}));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    let nextId = 1;
    const rawDispatch = async (request: unknown, options?: { signal?: AbortSignal }) => {
      const r = request as { method: string; params?: Record<string, unknown> };
      const id = `ext-${nextId++}`;
      const name = r.params?.name ?? r.params?.taskId;
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': r.method,
          ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id, ...r }),
        ...(options?.signal === undefined ? {} : { signal: options.signal }),
      });
      const text = await response.text();
      const messages = (response.headers.get('content-type') ?? '').includes('text/event-stream')
        ? text
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => JSON.parse(line.slice(5)))
        : [JSON.parse(text)];
      const answer = messages.find((m: { id?: unknown }) => m.id === id);
      assert.ok(answer !== undefined, `an answer to ${r.method}: ${text.slice(0, 300)}`);
      return answer.error === undefined
        ? { kind: 'result' as const, result: answer.result }
        : { kind: 'error' as const, error: answer.error };
    };
    const session =
      era === 'modern'
        ? createTaskSessionFromClient(client, {
            endpointId: `face-${era}`,
            rawDispatch: rawDispatch as RawClientDispatch,
            v2RequestFraming: {
              protocolVersion: '2026-07-28',
              clientInfo,
              clientCapabilities: TASK_CLIENT_CAPABILITIES as unknown as Record<string, never>,
            },
          })
        : createTaskSessionFromClient(client, { endpointId: `face-${era}` });
    t.after(() => session.close().catch(() => {}));
    const tool = (await client.listTools()).tools.find((listed) => listed.name === 'lab__work');
    assert.ok(tool !== undefined);
    const declaration = toolDeclarationFromMcpTool(tool);

    const started = Date.now();
    const execution = await session.callTool(
      'lab__work',
      { ms: 5000, text: `ext-tasks ${era}` },
      { declaration, task: { preference: 'require' }, requestTimeoutMs: 3000 },
    );
    assert.equal(execution.kind, 'task', 'the face answered with a task');
    const { outcome } = await execution.settle();
    const result = resultFromTaskOutcome(outcome) as { content: { type: string; text?: string }[] };
    assert.equal(result.content[0]?.text, `worked ext-tasks ${era}`);
    assert.ok(Date.now() - started >= 5000, 'the result is the 5 s work');

    const long = await session.callTool(
      'lab__work',
      { ms: 60_000 },
      { declaration, task: { preference: 'require' }, requestTimeoutMs: 3000 },
    );
    assert.equal(long.kind, 'task');
    await logged(lab, 'run 60000');
    await long.cancel();
    await logged(lab, 'cancelled ');
    assert.deepEqual(
      logLines(lab).filter((l) => l.startsWith('run ')),
      ['run 5000', 'run 60000'],
      'each call ran the tool once',
    );
    await session.close();
    await client.close();
    serve.child.kill('SIGTERM');
    await serve.exited;
    await assertGone(serve.pid, 20_000);
    await assertNothingLeft({ dir: lab.dir, projectId: lab.project }, 20_000);
  });
}
