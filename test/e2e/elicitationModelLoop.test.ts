/**
 * Questions from servers answered by the model (SPEC §7): a 2025-11-25 service that asks with
 * `elicitation/create` and a 2026-07-28 service that answers `input_required` each get their answer from
 * the model policy in a model-loop run against the local model server: the first call comes back as a
 * tool error stating the question and its schema; the model calls the same tool again with `answer`,
 * which the bridge takes out of the arguments and gives the service. The question and the answer are
 * journaled (`tool.question`), the secret field redacted. One real Node service a run.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runWorkflow } from '../../packages/sdk/src/engine/engine.js';
import { asksV2Entry } from '../fixtures/elicitation/asksV2.mjs';
import { scriptedPolicy, startModelServer } from '../fixtures/modelServer/index.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';

function definition(era: 'legacy' | 'modern'): { entrypoint: string; files: Record<string, string> } {
  if (era === 'legacy') {
    return {
      entrypoint: 'server.cjs',
      files: { 'server.cjs': readFileSync(new URL('../fixtures/elicitation/asksV1.cjs', import.meta.url), 'utf8') },
    };
  }
  return {
    entrypoint: 'server.mjs',
    // The fixture travels with the definition: a sandboxed service cannot import from a checkout under /tmp.
    files: {
      'server.mjs': asksV2Entry((name: string) => import.meta.resolve(name), './asksV2.mjs'),
      'asksV2.mjs': readFileSync(new URL('../fixtures/elicitation/asksV2.mjs', import.meta.url), 'utf8'),
    },
  };
}

for (const era of ['legacy', 'modern'] as const) {
  test(`model policy (${era}): the model answers the service's question by calling again`, async (t) => {
    const box = await sandbox(t);
    const model = await startModelServer({
      respond: scriptedPolicy(
        [
          { call: 'trips__book', arguments: { city: 'Oslo' } },
          { call: 'trips__book', arguments: { city: 'Oslo', answer: { date: '2027-05-01', access_token: '4321' } } },
        ],
        { final: (results) => `done: ${results.at(-1)}` },
      ),
    });
    t.after(() => model.close());
    const result = await runWorkflow({
      ...box,
      workflow: {
        agents: {
          main: {
            harness: { type: 'openai', model: 'test-model', baseUrl: `${model.url}/v1`, apiKeyEnv: 'LAB_OPENAI_KEY' },
            mcpServers: [{ name: 'trips', project: 'trips' }],
            elicitation: 'model',
          },
        },
        mcpDefinitions: { trips: definition(era) },
      },
      requirement: 'book a trip to Oslo',
      hostEnv: { ...process.env, LAB_OPENAI_KEY: 'sk-test' },
      graceMs: 500,
    });
    assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
    assert.equal(result.output, 'done: booked Oslo on 2027-05-01');
    // The model saw the question as the first call's tool error.
    const firstResult = model.requests[1]!.messages.flatMap((m) => m.toolResults ?? [])[0]!.text;
    assert.match(firstResult, /asks, during tool "book": Which date should the trip to Oslo be\?/);
    assert.match(firstResult, /"date"/);
    assert.match(firstResult, /"answer"/);
    const questions = result.events.filter((e) => e.type === 'tool.question') as unknown as Array<{
      action: string;
      content?: Record<string, unknown>;
      message: string;
    }>;
    assert.deepEqual(
      questions.map((q) => q.action),
      ['cancel', 'accept'],
    );
    assert.deepEqual(questions[1]!.content, { date: '2027-05-01', access_token: 'REDACTED' });
    assert.equal(JSON.stringify(result.events).includes('4321'), false, 'the secret field is not journaled');
    assert.equal(readFileSync(join(box.workspace, 'asks.log'), 'utf8'), 'asked\nasked\n');
    await assertNothingLeft(box.project, result.events);
  });
}
