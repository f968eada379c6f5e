/**
 * A run in which Main is the `openai` model loop (Chat Completions) and delegates to a worker that is a
 * real agent CLI (`command` preset). One local model server answers both: Main's requests arrive on
 * Chat Completions, the CLI's on its own wire protocol (Codex: Responses; Claude Code: Anthropic
 * Messages). The worker has a project service `counts` (test/fixtures/engine/countsCalls.cjs) that appends
 * each call to `calls.log` in the workspace, so the test counts the calls that really reached it.
 *
 * Checked: the service was called exactly once, by the worker; the worker's answer (built by the model
 * from the tool result) reached Main's model as the delegate result and Main's final answer; the events
 * and `status` show both invocations — Main's model usage, the worker's tool calls (`toolCallsReached`
 * in the run record); and nothing of the run (services, CLI, relay) is left running.
 *
 * scripts/test-clis.mjs runs these inside a loopback-only network namespace when it can.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { startRun } from '../../packages/sdk/src/engine/engine.js';
import type { RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import { runStatus } from '../../packages/sdk/src/engine/runStatus.js';
import type { HarnessPreset } from '../../packages/sdk/src/workflow/workflowSchema.js';
import { fixtureDefinition } from '../fixtures/engine/workflows.js';
import { type ModelRequest, scriptedPolicy, startModelServer } from '../fixtures/modelServer/index.js';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';
import { CLI_BIN, assertWorkspaceEmpty, watchProcessesIn } from './helpers.js';

/** Main's usage per model reply, fixed so the totals can be checked exactly. */
const MAIN_USAGE = { inputTokens: 120, outputTokens: 15 };

interface DelegationCase {
  preset: HarnessPreset;
  /** The wire protocol the CLI speaks (how the server tells the worker's requests from Main's). */
  protocol: ModelRequest['protocol'];
  /** Appended to the model server's URL for the CLI (each CLI has its own idea of a base URL). */
  baseUrlSuffix: string;
}

async function runDelegation(t: TestContext, c: DelegationCase): Promise<void> {
  const box = await sandbox(t);
  const label = `label-${c.preset}`;
  const main = scriptedPolicy(
    [
      {
        call: 'scienceevolve__delegate',
        arguments: { agent: 'counter', task: `Count the label "${label}" once with the counts tool and report it.` },
      },
    ],
    { final: (results) => `Main reports: ${results.at(-1) ?? '(nothing)'}`, usage: MAIN_USAGE },
  );
  const worker = scriptedPolicy([{ call: 'count', arguments: { label } }], {
    // The model reads the count from what the tool answered (each CLI wraps a result its own way).
    final: (results) => {
      const seen = new RegExp(`${label}#\\d+`).exec(results.join('\n'))?.[0];
      return seen === undefined ? `No count in: ${results.join(' | ')}` : `The counter answered ${seen}.`;
    },
  });
  const server = await startModelServer({
    respond: (request, index) => (request.protocol === 'openai-chat' ? main : worker)(request, index),
    requireApiKey: 'test-key-456',
  });
  t.after(() => server.close());

  const workflow = {
    orchestration: { invocationRetries: 0 },
    agents: {
      main: {
        harness: { type: 'openai', model: 'main-model', baseUrl: `${server.url}/v1`, apiKeyEnv: 'SE_TEST_MODEL_KEY' },
        instructions: 'You coordinate. Delegate counting to the counter.',
        mcpServers: [],
      },
      counter: {
        harness: {
          type: 'command',
          preset: c.preset,
          model: 'worker-model',
          baseUrl: `${server.url}${c.baseUrlSuffix}`,
          apiKeyEnv: 'SE_TEST_MODEL_KEY',
          timeoutMs: 240_000,
        },
        instructions: 'You are a careful assistant. Use the tools you are given.',
        mcpServers: [{ name: 'counts', project: 'counts' }],
      },
    },
    mcpDefinitions: { counts: fixtureDefinition('countsCalls.cjs') },
  };
  const watch = watchProcessesIn(box.workspace);
  t.after(() => watch.stop());
  const handle = startRun({
    ...box,
    workflow,
    requirement: 'Have the counter count once and tell me what it answered.',
    hostEnv: {
      PATH: `${CLI_BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: process.env.HOME,
      USER: process.env.USER,
      SE_TEST_MODEL_KEY: 'test-key-456',
    },
    graceMs: 1000,
  });
  const result = await handle.result;

  const started = ofType(result.events, 'invocation.started');
  const context = () =>
    `status ${result.status}, error ${JSON.stringify(result.error)}; requests: ${JSON.stringify(
      server.requests.map((r) => ({ protocol: r.protocol, tools: r.tools.map((x) => x.name) })),
    )}; last messages: ${JSON.stringify(server.requests.at(-1)?.messages)}; calls: ${JSON.stringify(
      ofType(result.events, 'tool.called'),
    )}; output: ${JSON.stringify(result.output)}; rejected: ${JSON.stringify(server.rejected)}; runtime: ${JSON.stringify(
      started.map((e) => e.runtimePath),
    )}`;
  assert.equal(result.status, 'succeeded', context());

  // The call reached the service: exactly one line in its log, written by the worker's call.
  assert.equal(await readFile(join(box.workspace, 'calls.log'), 'utf8'), `${label}\n`, context());
  assert.deepEqual(
    ofType(result.events, 'tool.called').map((e) => [e.agent, e.tool, e.ok, e.summary]),
    [
      ['counter', 'counts__count', true, `${label}#1`],
      ['main', 'scienceevolve__delegate', true, `The counter answered ${label}#1.`],
    ],
    context(),
  );

  // Both sides of the server were used: Main on Chat Completions, the CLI on its own protocol, which was
  // offered the service's tool and got its result back.
  const mainRequests = server.requests.filter((r) => r.protocol === 'openai-chat');
  const workerRequests = server.requests.filter((r) => r.protocol === c.protocol);
  assert.equal(mainRequests.length, 2, context());
  assert.ok(
    workerRequests.some((r) => r.tools.some((x) => /counts__count$/.test(x.name))),
    `the count tool was offered to the CLI: ${context()}`,
  );
  assert.ok(
    workerRequests.some((r) =>
      r.messages.some((m) => (m.toolResults ?? []).some((x) => x.text.includes(`${label}#1`))),
    ),
    `the tool result reached the CLI's model: ${context()}`,
  );
  assert.ok(
    server.requests.every((r) => r.apiKey === 'test-key-456'),
    'the key from apiKeyEnv was used',
  );

  // The worker's answer reached Main's model as the delegate result, and Main's final answer.
  const delegateResults = mainRequests[1]!.messages.flatMap((m) => m.toolResults ?? []).map((r) => r.text);
  assert.deepEqual(delegateResults, [`The counter answered ${label}#1.`], context());
  assert.equal(result.output, `Main reports: The counter answered ${label}#1.`, context());

  // The events show both invocations; Main's usage per model call and in total.
  assert.deepEqual(
    started.map((e) => [e.agent, e.parent === null]),
    [
      ['main', true],
      ['counter', false],
    ],
  );
  const mainId = started[0]!.invocation;
  const workerId = started[1]!.invocation;
  assert.equal(started[1]!.parent, mainId);
  const modelCalls = ofType(result.events, 'model.called');
  assert.deepEqual(
    modelCalls.map((e) => [e.agent, e.turn, e.usage.inputTokens, e.usage.outputTokens]),
    [
      ['main', 1, 120, 15],
      ['main', 2, 120, 15],
    ],
  );
  const finished = ofType(result.events, 'invocation.finished');
  const mainFinished = finished.find((e) => e.invocation === mainId);
  assert.equal(mainFinished?.status, 'succeeded');
  assert.deepEqual(
    [mainFinished?.usage?.modelCalls, mainFinished?.usage?.inputTokens, mainFinished?.usage?.outputTokens],
    [2, 240, 30],
  );
  assert.equal(finished.find((e) => e.invocation === workerId)?.status, 'succeeded');
  const runFinished = ofType(result.events, 'run.finished')[0];
  assert.deepEqual([runFinished?.usage.modelCalls, runFinished?.usage.inputTokens], [2, 240]);

  // `status` shows both invocations: Main's usage, the worker's tool calls.
  const report = await runStatus({ dataDir: box.dataDir, project: box.project });
  const run = report.projects[0]?.runs.find((r) => r.run === handle.runId);
  assert.ok(run, `status lists run ${handle.runId}`);
  assert.equal(run.status, 'succeeded');
  assert.deepEqual(
    run.invocations.map((i) => [i.agent, i.state, i.usage.modelCalls, i.usage.inputTokens, i.toolCalls]),
    [
      ['main', 'succeeded', 2, 240, 1],
      ['counter', 'succeeded', 0, 0, 1],
    ],
  );
  assert.equal(run.usage.inputTokens, 240);
  // The run record keeps what the CLI's surface counted: one call reached it.
  const runDir = join(box.dataDir, 'projects', box.project, 'runs', handle.runId);
  const record = JSON.parse(await readFile(join(runDir, 'run.json'), 'utf8')) as RunRecord;
  const workerRecord = record.invocations.find((i) => i.id === workerId);
  assert.deepEqual(
    workerRecord?.attempts.map((a) => [a.outcome, a.toolCalls, a.toolCallsReached]),
    [['succeeded', 1, 1]],
  );
  assert.deepEqual(
    record.invocations.find((i) => i.id === mainId)?.attempts.map((a) => a.toolCallsReached ?? null),
    [null],
    "Main's model loop is not a CLI: no count reported by a harness",
  );

  // Nothing is left: every service pid ESRCH, no process carries the project's markers (the CLI's marker
  // is under the project too), and every process seen working in the workspace (the CLI, its children,
  // the relay, the services) is gone.
  await assertNothingLeft(box.project, result.events);
  await assertWorkspaceEmpty(box.workspace, watch.stop());
}

test('Main on openai delegates to a codex worker that calls a project service', { timeout: 300_000 }, async (t) => {
  await runDelegation(t, { preset: 'codex', protocol: 'openai-responses', baseUrlSuffix: '/v1' });
});

test('Main on openai delegates to a claude worker that calls a project service', { timeout: 300_000 }, async (t) => {
  await runDelegation(t, { preset: 'claude', protocol: 'anthropic', baseUrlSuffix: '' });
});
