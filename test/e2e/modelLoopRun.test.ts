/**
 * A whole run through `runWorkflow` with Main on the `openai` (Chat Completions) model loop against the
 * local model server: Main's tool calls reach a real project service process, the model sees their
 * results, Main's final answer is the run's output, and nothing the run started is left.
 * The run starts one real Node service (about 1–2 s on 2 cores).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runWorkflow } from '../../packages/sdk/src/engine/engine.js';
import { fixtureDefinition } from '../fixtures/engine/workflows.js';
import { scriptedPolicy, startModelServer } from '../fixtures/modelServer/index.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';

test('a run with Main on the openai chat loop calls a project service and ends with the model answer', async (t) => {
  const box = await sandbox(t);
  const model = await startModelServer({
    requireApiKey: 'sk-run-key',
    respond: scriptedPolicy(
      [
        { call: 'notes__write', arguments: { name: 'plan.txt', text: 'the plan' } },
        { call: 'notes__read', arguments: { name: 'plan.txt' } },
      ],
      { final: (results) => `Main read back: ${results.at(-1)}` },
    ),
  });
  t.after(() => model.close());

  const result = await runWorkflow({
    ...box,
    workflow: {
      agents: {
        main: {
          instructions: 'Keep the plan in notes.',
          harness: { type: 'openai', model: 'test-model', baseUrl: `${model.url}/v1`, apiKeyEnv: 'LAB_OPENAI_KEY' },
          mcpServers: [{ name: 'notes', project: 'notes' }],
        },
      },
      mcpDefinitions: { notes: fixtureDefinition('notesService.cjs') },
    },
    requirement: 'write the plan and read it back',
    hostEnv: { ...process.env, LAB_OPENAI_KEY: 'sk-run-key' },
    graceMs: 500,
  });

  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'Main read back: the plan');
  // The service really ran in the workspace, and the model saw each result.
  assert.equal(await readFile(join(box.workspace, 'plan.txt'), 'utf8'), 'the plan');
  assert.equal(model.requests.length, 3);
  const first = model.requests[0]!;
  assert.equal(first.messages[0]?.text, 'write the plan and read it back');
  assert.match(first.system, /Keep the plan in notes\./);
  const offered = first.tools.map((tool) => tool.name);
  for (const name of ['notes__write', 'notes__read', 'scienceevolve__delegate'])
    assert.ok(offered.includes(name), name);
  assert.deepEqual(
    model.requests[2]!.messages.flatMap((m) => m.toolResults ?? []).map((r) => r.text),
    ['wrote plan.txt', 'the plan'],
  );
  assert.equal(JSON.stringify(result.events).includes('sk-run-key'), false, 'no key in the events');

  await assertNothingLeft(box.project, result.events);
});
