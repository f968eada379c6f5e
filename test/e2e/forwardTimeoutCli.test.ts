/**
 * `--forward-timeout-ms` reaches the SDK from the command line: `run` and `services serve` with a 300 ms
 * forwarding timeout answer a 20 s tool call `forward_timeout` at once (the default is 60 s), and
 * `services probe` and `resume` take the option. The built CLI in child processes, a real service
 * (`sleepsOnCall.cjs`) behind it; every process is proven gone.
 *
 * Timeouts are generous (60 s a command): each starts a supervisor and a Node service on a loaded machine.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertGone } from '../fixtures/store/children.js';
import { type EngineSandbox, assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';
import { BIN } from './helpers.js';

/** The 20 s call that a 300 ms forwarding timeout cuts short. */
const CALL = { call: 'slow__sleep', arguments: { ms: 20_000 } };
const TIMEOUT = ['--forward-timeout-ms', '300'];

/** A sandbox with a workflow whose Main has the sleeping service (and a script that calls it once). */
async function slowProject(t: TestContext): Promise<EngineSandbox & { workflow: string; script: string }> {
  const box = await sandbox(t);
  const workflow = join(box.base, 'workflow.json');
  const script = join(box.base, 'script.json');
  await writeFile(
    workflow,
    JSON.stringify({
      agents: { main: agent([['slow', 'slow']]) },
      mcpDefinitions: { slow: fixtureDefinition('sleepsOnCall.cjs') },
    }),
  );
  await writeFile(script, JSON.stringify({ agents: { main: [CALL, { final: 'answered: {{1}}' }] } }));
  return { ...box, workflow, script };
}

/** Waits until no process carries the project's marker (5 s). */
async function noneMarked(project: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (markedProcesses(project).length > 0) {
    if (Date.now() > deadline) assert.fail(`processes of project ${project} still alive: ${markedProcesses(project)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test('run --forward-timeout-ms 300: a 20 s call is answered forward_timeout at once', async (t) => {
  const box = await slowProject(t);
  const started = Date.now();
  const run = await runCliToEnd(t, [
    'run',
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    '--workspace',
    box.workspace,
    '--workflow',
    box.workflow,
    '--script',
    box.script,
    '--grace-ms',
    '300',
    ...TIMEOUT,
    '--json',
    'call the slow tool',
  ]);
  assert.equal(run.code, 0, run.stderr);
  const doc = run.json as { status: string; output: string; events: RunEvent[] };
  const [called] = ofType(doc.events, 'tool.called');
  assert.ok(called !== undefined, 'the call was answered');
  assert.equal(called.ok, false);
  assert.match(called.summary, /did not answer tool "sleep" within 0\.3 s/);
  assert.ok(called.durationMs < 10_000, `answered at the timeout (${called.durationMs} ms), not after 20 s`);
  assert.ok(Date.now() - started < 20_000, 'the run did not wait for the call');
  await assertNothingLeft(box.project, doc.events);
});

test('services serve --forward-timeout-ms 300: the surface answers forward_timeout; probe and resume take it', async (t) => {
  const box = await slowProject(t);
  const place = ['--data-dir', box.dataDir, '--project', box.project, '--workspace', box.workspace];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      BIN,
      'services',
      'serve',
      ...place,
      '--workflow',
      box.workflow,
      '--agent',
      'main',
      '--grace-ms',
      '300',
      ...TIMEOUT,
    ],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'forward-timeout-e2e', version: '1.0.0' }, { capabilities: {} });
  client.onerror = () => {};
  t.after(() => client.close().catch(() => {}));
  await client.connect(transport);
  const pid = transport.pid;
  assert.ok(pid !== null);
  const started = Date.now();
  const result = (await client.callTool({ name: CALL.call, arguments: CALL.arguments })) as {
    isError?: boolean;
    content: { type: string; text?: string }[];
    _meta?: Record<string, { code?: string }>;
  };
  assert.ok(Date.now() - started < 10_000, 'answered at the timeout, not after 20 s');
  assert.equal(result.isError, true);
  assert.match(result.content[0]?.text ?? '', /did not answer tool "sleep" within 0\.3 s/);
  const codes = Object.values(result._meta ?? {}).map((m) => m?.code);
  assert.ok(codes.includes('forward_timeout'), JSON.stringify(result._meta));
  await client.close();
  await assertGone(pid);
  await noneMarked(box.project);

  // probe forwards no call, but takes the engine block as serve does; resume takes it too (nothing to resume).
  const probe = await runCliToEnd(t, [
    'services',
    'probe',
    ...place,
    '--agent',
    'main',
    '--grace-ms',
    '300',
    ...TIMEOUT,
    '--json',
  ]);
  assert.equal(probe.code, 0, probe.stderr);
  assert.equal((probe.json as { services: { state: string }[] }).services[0]?.state, 'ready');
  const resume = await runCliToEnd(t, [
    'resume',
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    ...TIMEOUT,
    '--json',
  ]);
  assert.equal(resume.code, 0, resume.stderr);
  assert.deepEqual(resume.json, { runs: [] });
  await noneMarked(box.project);
});
