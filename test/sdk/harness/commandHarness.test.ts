/**
 * The `command` harness with a stand-in CLI (test/fixtures/agents/mcpAgent.mjs, which launches the relay
 * from the MCP configuration the harness wrote, with the v1 SDK's client): through `runWorkflow` with a
 * real project service, the answer and the tool call reach the run; a non-zero exit, a timeout, a missing
 * variable and a cancellation each end with their code; a setsid grandchild the CLI left is collected; and
 * nothing is left running. Each run starts real Node processes (a service, the CLI, the relay): about 1–2 s
 * each on 2 cores, hence the 60 s budgets.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { startRun } from '../../../packages/sdk/src/engine/engine.js';
import type { PublicEvent } from '../../../packages/sdk/src/events/journal.js';
import { createCommandHarness } from '../../../packages/sdk/src/harness/commandHarness.js';
import { nothingJournaled } from '../../../packages/sdk/src/harness/harness.js';
import { SupervisorClient } from '../../../packages/sdk/src/processes/supervisorClient.js';
import { fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { tempDir } from '../../fixtures/store/tempDir.js';
import { waitUntilGone } from '../../fixtures/bridge/processGone.js';
import { assertNothingLeft, ofType, sandbox } from '../engine/helpers.js';

const AGENT = fileURLToPath(new URL('../../fixtures/agents/mcpAgent.mjs', import.meta.url));

/** A workflow whose Main runs the stand-in CLI in `mode`, with the `adds` service. */
function workflow(mode: string, harness: Record<string, unknown> = {}) {
  return {
    orchestration: { invocationRetries: 0 },
    agents: {
      main: {
        harness: { type: 'command', command: 'node', args: [AGENT, '{mcpConfig}', mode, '{prompt}'], ...harness },
        instructions: '',
        mcpServers: [{ name: 'adds', project: 'adds' }],
      },
    },
    mcpDefinitions: { adds: fixtureDefinition('addsNumbers.cjs') },
  };
}

const addTask = JSON.stringify({ tool: 'adds__add', arguments: { a: 2, b: 40 } });

/** The `cli/` directory of Main's first attempt. */
function cliDir(events: readonly PublicEvent[]): string {
  const started = ofType(events, 'invocation.started')[0];
  assert.ok(started, 'an invocation started');
  return join(started.runtimePath as string, 'cli');
}

test('a CLI reaches the live surface through the relay: its answer is the run output, its call is journaled', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const result = await startRun({ ...box, workflow: workflow('call'), requirement: addTask, graceMs: 500 }).result;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'answer from scienceevolve: 42');
  const calls = ofType(result.events, 'tool.called');
  assert.deepEqual(
    calls.map((e) => [e.tool, e.ok, e.summary]),
    [['adds__add', true, '42']],
  );
  // The configuration it was given: 0600, pointing at the relay with the invocation's socket.
  const dir = cliDir(result.events);
  const configPath = join(dir, 'mcp.json');
  assert.equal(statSync(configPath).mode & 0o777, 0o600);
  const config = JSON.parse(readFileSync(configPath, 'utf8'));
  const server = config.mcpServers.scienceevolve;
  assert.equal(server.command, process.execPath);
  assert.match(server.args[0], /dist\/faces\/relay\.js$/);
  assert.ok(!existsSync(server.args[1]), 'the socket is removed when the invocation ends');
  assert.ok(!existsSync(join(server.args[1], '..')), "the socket's directory too");
  assert.equal(statSync(join(dir, 'home')).mode & 0o777, 0o700, 'a fresh home (isolateHome)');
  await assertNothingLeft(box.project, result.events);
});

test('a non-zero exit fails the invocation with harness_failed, its exit code and the log; the stderr lines only in run.json', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const handle = startRun({ ...box, workflow: workflow('exit:3'), requirement: 'x', graceMs: 500 });
  const result = await handle.result;
  assert.equal(result.status, 'failed');
  const attemptError = ofType(result.events, 'invocation.finished')[0]?.error as { code: string; message: string };
  assert.equal(attemptError?.code, 'harness_failed', JSON.stringify(result.events.at(-2)));
  assert.match(attemptError.message, /exited with code 3/);
  assert.match(attemptError.message, /cli\/stderr\.log/);
  // Events never carry log content (a CLI may print its key there): the lines are in the run's record only.
  assert.doesNotMatch(JSON.stringify(result.events), /first line of trouble|the model refused/);
  const runJson = readFileSync(join(box.dataDir, 'projects', box.project, 'runs', handle.runId, 'run.json'), 'utf8');
  assert.match(runJson, /"stderrTail": \[\s*"mcpAgent: first line of trouble",\s*"mcpAgent: the model refused/);
  await assertNothingLeft(box.project, result.events);
});

test('a CLI that prints its mapped secret to stderr: the tail in run.json shows it REDACTED', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const secret = 'sk-cli-secret-7f3e91';
  const handle = startRun({
    ...box,
    workflow: workflow('exit:3', { envFrom: { TOKEN: 'SE_TEST_CLI_SECRET' } }),
    requirement: 'x',
    hostEnv: { PATH: process.env.PATH, SE_TEST_CLI_SECRET: secret },
    graceMs: 500,
  });
  const result = await handle.result;
  assert.equal(result.status, 'failed');
  const runJson = readFileSync(join(box.dataDir, 'projects', box.project, 'runs', handle.runId, 'run.json'), 'utf8');
  assert.match(runJson, /"mcpAgent: using token REDACTED"/);
  assert.ok(!runJson.includes(secret), 'the mapped value is not in run.json');
  assert.ok(!JSON.stringify(result.error).includes(secret), 'nor in the error run prints');
  await assertNothingLeft(box.project, result.events);
});

test('timeoutMs stops the CLI and its relay: harness_timeout', { timeout: 60_000 }, async (t) => {
  const box = await sandbox(t);
  const result = await startRun({
    ...box,
    workflow: workflow('sleep', { timeoutMs: 1500 }),
    requirement: 'x',
    graceMs: 300,
  }).result;
  assert.equal(result.status, 'failed');
  const error = ofType(result.events, 'invocation.finished')[0]?.error as { code: string; message: string };
  assert.equal(error?.code, 'harness_timeout');
  assert.match(error.message, /ran past timeoutMs \(1500 ms\)/);
  const pid = Number(readFileSync(join(box.workspace, 'agent.pid'), 'utf8'));
  await waitUntilGone(pid);
  await assertNothingLeft(box.project, result.events);
});

test('envFrom or apiKeyEnv naming an unset host variable: missing_env before anything starts', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const result = await startRun({
    ...box,
    workflow: workflow('call', { envFrom: { TOKEN: 'SE_TEST_UNSET_TOKEN' }, apiKeyEnv: 'SE_TEST_UNSET_KEY' }),
    requirement: addTask,
    hostEnv: { PATH: process.env.PATH },
    graceMs: 300,
  }).result;
  assert.equal(result.status, 'failed');
  const error = ofType(result.events, 'invocation.finished')[0]?.error as { code: string; message: string };
  assert.equal(error?.code, 'missing_env');
  assert.match(error.message, /SE_TEST_UNSET_TOKEN \(for TOKEN\), SE_TEST_UNSET_KEY \(for apiKeyEnv\) are not set/);
  assert.ok(!existsSync(join(box.workspace, 'agent.pid')), 'the CLI never started');
  await assertNothingLeft(box.project, result.events);
});

test('an envFrom host variable that is empty: missing_env, as for a service', { timeout: 60_000 }, async (t) => {
  const box = await sandbox(t);
  const result = await startRun({
    ...box,
    workflow: workflow('call', { envFrom: { TOKEN: 'SE_TEST_EMPTY_VAR' } }),
    requirement: addTask,
    hostEnv: { PATH: process.env.PATH, SE_TEST_EMPTY_VAR: '' },
    graceMs: 300,
  }).result;
  assert.equal(result.status, 'failed');
  const error = ofType(result.events, 'invocation.finished')[0]?.error as { code: string; message: string };
  assert.equal(error?.code, 'missing_env');
  assert.match(error.message, /SE_TEST_EMPTY_VAR \(for TOKEN\) is not set or empty/);
  assert.ok(!existsSync(join(box.workspace, 'agent.pid')), 'the CLI never started');
  await assertNothingLeft(box.project, result.events);
});

test('an apiKeyEnv whose host variable is empty: missing_env, as for the model loops', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const result = await startRun({
    ...box,
    workflow: workflow('call', { apiKeyEnv: 'SE_TEST_EMPTY_KEY' }),
    requirement: addTask,
    hostEnv: { PATH: process.env.PATH, SE_TEST_EMPTY_KEY: '' },
    graceMs: 300,
  }).result;
  assert.equal(result.status, 'failed');
  const error = ofType(result.events, 'invocation.finished')[0]?.error as { code: string; message: string };
  assert.equal(error?.code, 'missing_env');
  assert.match(error.message, /SE_TEST_EMPTY_KEY \(for apiKeyEnv\) is not set or empty/);
  assert.ok(!existsSync(join(box.workspace, 'agent.pid')), 'the CLI never started');
  await assertNothingLeft(box.project, result.events);
});

test('a grandchild the CLI left behind (setsid, ignores SIGTERM) is collected', { timeout: 60_000 }, async (t) => {
  const box = await sandbox(t);
  const pidsFile = join(box.base, 'pids.json');
  const result = await startRun({
    ...box,
    workflow: workflow(`grandchild:${pidsFile}`),
    requirement: addTask,
    graceMs: 300,
  }).result;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'answer from scienceevolve: 42');
  const pids = JSON.parse(readFileSync(pidsFile, 'utf8')) as { agent: number; grandchild: number };
  await waitUntilGone(pids.agent);
  await waitUntilGone(pids.grandchild);
  await assertNothingLeft(box.project, result.events);
});

test("the run's signal stops the CLI promptly, after a call reached the surface", { timeout: 60_000 }, async (t) => {
  const box = await sandbox(t);
  const abort = new AbortController();
  const handle = startRun({
    ...box,
    workflow: workflow('call-then-sleep'),
    requirement: addTask,
    graceMs: 300,
    signal: abort.signal,
    onEvent: (event) => {
      if (event.type === 'tool.called') abort.abort();
    },
  });
  const result = await handle.result;
  assert.equal(result.status, 'cancelled');
  assert.equal(ofType(result.events, 'tool.called').length, 1);
  const pid = Number(readFileSync(join(box.workspace, 'agent.pid'), 'utf8'));
  await waitUntilGone(pid);
  await assertNothingLeft(box.project, result.events);
});

test('a prompt longer than one argument may be: limit_exceeded before the CLI starts', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const result = await startRun({
    ...box,
    workflow: workflow('call'),
    requirement: `${addTask} ${'x'.repeat(140_000)}`,
    graceMs: 300,
  }).result;
  assert.equal(result.status, 'failed');
  const error = ofType(result.events, 'invocation.finished')[0]?.error as { code: string; message: string };
  assert.equal(error?.code, 'limit_exceeded');
  assert.match(error.message, /over the 131071 bytes Linux allows/);
  assert.ok(!existsSync(join(box.workspace, 'agent.pid')), 'the CLI never started');
  await assertNothingLeft(box.project, result.events);
});

test('command_not_found names the command', { timeout: 60_000 }, async (t) => {
  const box = await sandbox(t);
  const result = await startRun({
    ...box,
    workflow: workflow('call', { command: 'scienceevolve-no-such-cli' }),
    requirement: addTask,
    graceMs: 300,
  }).result;
  assert.equal(result.status, 'failed');
  const error = ofType(result.events, 'invocation.finished')[0]?.error as { code: string; message: string };
  assert.equal(error?.code, 'command_not_found');
  assert.match(error.message, /"scienceevolve-no-such-cli" is not on the CLI's PATH/);
  await assertNothingLeft(box.project, result.events);
});

test('API: toolCallsReached (1 after a call, 0 for an exit 0 without one); the minimal environment and isolateHome', {
  timeout: 60_000,
}, async (t) => {
  const base = await tempDir(t, 'se-cmd-');
  const supervisor = await SupervisorClient.start({ logPath: join(base, 'supervisor.log'), graceMs: 300 });
  t.after(() => supervisor.close());
  const surface = createSurface([
    {
      name: 'lab',
      tools: [
        {
          tool: { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
          handler: (args) => ({ content: [{ type: 'text', text: `echo: ${String(args.text)}` }] }),
        },
      ],
    },
  ]);
  const run = async (
    mode: string,
    attempt: string,
    options: { envFrom?: Record<string, string>; isolateHome?: boolean } = {},
  ) => {
    const runtimePath = join(base, attempt);
    await mkdir(runtimePath);
    const harness = createCommandHarness('worker', {
      type: 'command',
      command: 'node',
      args: [AGENT, '{mcpConfig}', mode, '{prompt}'],
      envFrom: options.envFrom ?? {},
      timeoutMs: 30_000,
      isolateHome: options.isolateHome ?? true,
    });
    return harness.run({
      agent: 'worker',
      instructions: '',
      task: JSON.stringify({ tool: 'lab__echo', arguments: { text: 'hi' } }),
      surface,
      workspace: base,
      signal: new AbortController().signal,
      invocationId: attempt,
      runtimePath,
      hostEnv: { PATH: process.env.PATH, HOME: '/home/someone', SE_TEST_TOKEN: 't-1', SE_TEST_OTHER: 'kept out' },
      registry: supervisor,
      graceMs: 300,
      checkpoint: undefined,
      journaled: nothingJournaled(),
      saveCheckpoint: async () => {},
      report: () => {},
    });
  };
  const lastPid = () => Number(readFileSync(join(base, 'agent.pid'), 'utf8'));
  assert.deepEqual(await run('call', 'a1'), { output: 'answer from scienceevolve: echo: hi', toolCallsReached: 1 });
  await waitUntilGone(lastPid());
  const quiet = await run('quiet', 'a2');
  assert.equal(quiet.toolCallsReached, 0);
  assert.match(quiet.output, /lab__echo/);
  await waitUntilGone(lastPid());

  // The minimal environment, envFrom, the marker; a fresh HOME unless isolateHome is false.
  const isolated = JSON.parse((await run('env', 'a3', { envFrom: { TOKEN: 'SE_TEST_TOKEN' } })).output);
  assert.equal(isolated.HOME, join(base, 'a3', 'cli', 'home'));
  assert.equal(isolated.TOKEN, 't-1');
  assert.equal(isolated.SE_TEST_OTHER, undefined);
  assert.match(isolated.SCIENCEEVOLVE_MARKER, /^se1:harness:\d+:\d+:a3-cli$/);
  assert.deepEqual(
    Object.keys(isolated).sort(),
    ['HOME', 'PATH', 'SCIENCEEVOLVE_MARKER', 'TOKEN'],
    'nothing else of the host',
  );
  await waitUntilGone(lastPid());
  const kept = JSON.parse((await run('env', 'a4', { isolateHome: false })).output);
  assert.equal(kept.HOME, '/home/someone');
  await waitUntilGone(lastPid());
});

test('a scripted Main delegates to a worker run by a CLI; the worker answers from its own live surface', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const base = workflow('call');
  const proposed = {
    ...base,
    agents: {
      main: { harness: { type: 'scripted' }, instructions: '', mcpServers: [] },
      adder: base.agents.main,
    },
  };
  const script = {
    agents: {
      main: [{ call: 'scienceevolve__delegate', arguments: { agent: 'adder', task: addTask } }, { final: '{{0}}' }],
    },
  };
  const result = await startRun({ ...box, workflow: proposed, script, requirement: 'delegate it', graceMs: 500 })
    .result;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'answer from scienceevolve: 42');
  assert.deepEqual(
    ofType(result.events, 'tool.called').map((e) => [e.agent, e.tool, e.ok]),
    [
      ['adder', 'adds__add', true],
      ['main', 'scienceevolve__delegate', true],
    ],
  );
  await assertNothingLeft(box.project, result.events);
});
