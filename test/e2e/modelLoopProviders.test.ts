/**
 * Every model-loop provider in ONE run (issue 11, "Done when"): Main on `openai` Chat Completions delegates
 * in turn to three workers — `openai` Responses, `anthropic` and `gemini` — all served by one local model
 * server speaking the four wire protocols. Each worker calls a real project service (`countsCalls.cjs`,
 * which appends to calls.log in the workspace); Main's final answer is built from the workers' tool
 * results. The test asserts what the server received (each protocol's tools offered, tool results sent
 * back), that `scienceevolve status --json` (the real CLI) shows usage per invocation and a run total equal
 * to what the server reported, and that nothing is left running. Starts four real Node services, one at a
 * time, and one CLI process: about 5–10 s on 2 cores.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runWorkflow } from '../../packages/sdk/src/engine/engine.js';
import type { StatusReport } from '../../packages/sdk/src/engine/runStatus.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { fixtureDefinition } from '../fixtures/engine/workflows.js';
import {
  type ModelRequest,
  type Protocol,
  type ReplyUsage,
  type RespondFn,
  resultText,
  scriptedPolicy,
  startModelServer,
} from '../fixtures/modelServer/index.js';
import { assertNothingLeft, markedProcesses, sandbox } from '../sdk/engine/helpers.js';

/** The worker of each non-Main protocol, and the label its count call writes. */
const WORKERS: ReadonlyArray<{ agent: string; protocol: Protocol }> = [
  { agent: 'responder', protocol: 'openai-responses' },
  { agent: 'claude', protocol: 'anthropic' },
  { agent: 'gem', protocol: 'gemini' },
];

/** Distinct usage numbers per request, so a sum that missed or doubled a call cannot match by chance. */
function usageOf(index: number): Required<ReplyUsage> {
  return { inputTokens: 1000 + 37 * index, outputTokens: 20 + 3 * index };
}

test('one run: Main (openai chat) delegates to openai responses, anthropic and gemini workers that call a real service', async (t) => {
  const box = await sandbox(t);
  const reported = new Map<number, { protocol: Protocol; usage: Required<ReplyUsage> }>();
  const main = scriptedPolicy(
    WORKERS.map((w) => ({ call: 'delegate', arguments: { agent: w.agent, task: `count "${w.agent}"` } })),
    { final: (results) => `Main collected: ${results.join(' | ')}` },
  );
  const worker = (label: string) =>
    scriptedPolicy([{ call: 'counts__count', arguments: { label } }], {
      final: (results) => `${label} counted ${results.join(',')}`,
    });
  const policies = new Map<Protocol, RespondFn>([
    ['openai-chat', main],
    ...WORKERS.map((w) => [w.protocol, worker(w.agent)] as [Protocol, RespondFn]),
  ]);
  const model = await startModelServer({
    requireApiKey: 'sk-providers',
    respond: async (request: ModelRequest, index: number) => {
      const policy = policies.get(request.protocol);
      assert.ok(policy, `no policy for ${request.protocol}`);
      const reply = await policy(request, index);
      const usage = usageOf(index);
      reported.set(index, { protocol: request.protocol, usage });
      return { ...reply, usage };
    },
  });
  t.after(() => model.close());

  const key = { apiKeyEnv: 'LAB_MODEL_KEY', model: 'test-model' };
  const counts = { mcpServers: [{ name: 'counts', project: 'counts' }] };
  const result = await runWorkflow({
    ...box,
    workflow: {
      agents: {
        main: {
          instructions: 'You are Main.',
          harness: { type: 'openai', api: 'chat', baseUrl: `${model.url}/v1`, ...key },
        },
        responder: {
          instructions: 'You are responder.',
          harness: { type: 'openai', api: 'responses', baseUrl: `${model.url}/v1`, ...key },
          ...counts,
        },
        claude: {
          instructions: 'You are claude.',
          harness: { type: 'anthropic', baseUrl: `${model.url}/v1`, ...key },
          ...counts,
        },
        gem: {
          instructions: 'You are gem.',
          harness: { type: 'gemini', baseUrl: `${model.url}/v1beta`, ...key },
          ...counts,
        },
      },
      mcpDefinitions: { counts: fixtureDefinition('countsCalls.cjs') },
    },
    requirement: 'have every worker count once',
    hostEnv: { ...process.env, LAB_MODEL_KEY: 'sk-providers' },
    graceMs: 500,
  });

  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(
    result.output,
    'Main collected: responder counted responder#1 | claude counted claude#1 | gem counted gem#1',
  );
  // The real service ran once per worker, in the workspace.
  assert.equal(readFileSync(join(box.workspace, 'calls.log'), 'utf8'), 'responder\nclaude\ngem\n');
  assert.deepEqual(model.rejected, []);

  // What the server received: two requests per protocol but Main's four; each offered that agent's tools
  // in its own protocol, and the last one sent back the tool results.
  const byProtocol = (protocol: Protocol) => model.requests.filter((r) => r.protocol === protocol);
  assert.equal(byProtocol('openai-chat').length, 4);
  const mainOffered = byProtocol('openai-chat')[0]!.tools.map((tool) => tool.name);
  assert.ok(mainOffered.includes('scienceevolve__delegate'), mainOffered.join(', '));
  assert.deepEqual(
    byProtocol('openai-chat')
      .at(-1)!
      .messages.flatMap((m) => m.toolResults ?? [])
      .map((r) => resultText(r.text)),
    WORKERS.map((w) => `${w.agent} counted ${w.agent}#1`),
  );
  for (const w of WORKERS) {
    const requests = byProtocol(w.protocol);
    assert.equal(requests.length, 2, `${w.protocol}: ${requests.length} requests`);
    for (const request of requests) {
      assert.match(request.system, new RegExp(`You are ${w.agent}\\.`));
      assert.equal(request.apiKey, 'sk-providers');
      assert.deepEqual(
        request.tools.map((tool) => tool.name),
        ['counts__count'],
        `${w.protocol} offers the worker's one tool`,
      );
    }
    const params = requests[0]!.tools[0]!.parameters as { properties?: Record<string, unknown> };
    assert.ok(params.properties && Object.hasOwn(params.properties, 'label'), `${w.protocol}: the tool's schema`);
    assert.equal(requests[0]!.messages[0]?.text, `count "${w.agent}"`);
    const calls = requests[1]!.messages.flatMap((m) => m.toolCalls ?? []);
    const results = requests[1]!.messages.flatMap((m) => m.toolResults ?? []);
    assert.deepEqual(
      calls.map((c) => [c.name, c.arguments]),
      [['counts__count', { label: w.agent }]],
    );
    assert.deepEqual(
      results.map((r) => resultText(r.text)),
      [`${w.agent}#1`],
      `${w.protocol}: the tool result went back`,
    );
  }

  // status --json through the real CLI: usage per invocation, and the run total, as the server reported.
  const status = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--project', box.project, '--json']);
  assert.equal(status.code, 0, status.stderr);
  const run = (status.json as StatusReport).projects[0]!.runs.find((r) => r.run === result.run)!;
  assert.equal(run.status, 'succeeded');
  const sum = (protocols: Protocol[]) => {
    const picked = [...reported.values()].filter((r) => protocols.includes(r.protocol));
    const inputTokens = picked.reduce((n, r) => n + r.usage.inputTokens, 0);
    const outputTokens = picked.reduce((n, r) => n + r.usage.outputTokens, 0);
    return { modelCalls: picked.length, inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
  };
  const shown = (u: { modelCalls: number; inputTokens: number; outputTokens: number; totalTokens: number }) => ({
    modelCalls: u.modelCalls,
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    totalTokens: u.totalTokens,
  });
  assert.equal(reported.size, model.requests.length);
  const agentProtocol = new Map<string, Protocol>([
    ['main', 'openai-chat'],
    ...WORKERS.map((w) => [w.agent, w.protocol] as [string, Protocol]),
  ]);
  assert.deepEqual(
    run.invocations.map((i) => i.agent),
    ['main', ...WORKERS.map((w) => w.agent)],
  );
  for (const invocation of run.invocations) {
    assert.deepEqual(shown(invocation.usage), sum([agentProtocol.get(invocation.agent)!]), invocation.agent);
  }
  assert.deepEqual(shown(run.usage), sum([...agentProtocol.values()]), 'the run total');
  t.diagnostic(`run usage ${JSON.stringify(run.usage)}`);

  await assertNothingLeft(box.project, result.events);
  assert.deepEqual(markedProcesses(box.project), []);
});
