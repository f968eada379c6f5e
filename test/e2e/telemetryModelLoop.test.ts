/**
 * A model-loop run with OpenTelemetry export on (docs/telemetry.md): Main on the `openai` chat loop against
 * the local model server, its tool calls reaching a real project service. The model calls are the AI SDK's
 * own GenAI spans, in the run's trace under Main's attempt, and their token counts add up to what
 * `status --json` reports for the run. One real service and the CLI in a child process: 120 s.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixtureDefinition } from '../fixtures/engine/workflows.js';
import { scriptedPolicy, startModelServer } from '../fixtures/modelServer/index.js';
import { startOtlpReceiver } from '../fixtures/otel/otlpReceiver.js';
import { assertNothingLeft, killLeftovers, tempDir } from './helpers.js';
import { assertOneTrace, parentOf, runCliWith } from './telemetryHelpers.js';

test("a model-loop run's model-call spans carry the token counts status --json reports", async (t) => {
  const dir = tempDir(t);
  t.after(() => killLeftovers({ dir }));
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const model = await startModelServer({
    respond: scriptedPolicy(
      [
        { call: 'notes__write', arguments: { name: 'plan.txt', text: 'the plan' } },
        { call: 'notes__read', arguments: { name: 'plan.txt' } },
      ],
      { final: (results) => `Main read back: ${results.at(-1)}` },
    ),
  });
  t.after(() => model.close());
  const workflow = {
    agents: {
      main: {
        instructions: 'Keep the plan in notes.',
        harness: { type: 'openai', model: 'test-model', baseUrl: `${model.url}/v1`, apiKeyEnv: 'LAB_OPENAI_KEY' },
        mcpServers: [{ name: 'notes', project: 'notes' }],
      },
    },
    mcpDefinitions: { notes: { command: 'node', ...fixtureDefinition('notesService.cjs') } },
  };
  writeFileSync(join(dir, 'workflow.json'), JSON.stringify(workflow));
  mkdirSync(join(dir, 'ws'));
  const dataDir = join(dir, 'data');
  const r = await runCliWith(
    [
      'run',
      '--data-dir',
      dataDir,
      '--workflow',
      join(dir, 'workflow.json'),
      '--workspace',
      join(dir, 'ws'),
      '--json',
      'plan',
    ],
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, LAB_OPENAI_KEY: 'sk-telemetry-key' },
  );
  assert.equal(r.code, 0, r.stderr);
  const run = r.json as { run: string; status: string; output: string };
  assert.equal(run.status, 'succeeded');
  assert.equal(run.output, 'Main read back: the plan');

  const status = await runCliWith(['status', '--data-dir', dataDir, '--json'], {});
  const shown = (status.json as { projects: { runs: Record<string, unknown>[] }[] }).projects[0]!.runs[0]!;
  const usage = shown.usage as { modelCalls: number; inputTokens: number; outputTokens: number };
  assert.equal(usage.modelCalls, 3);

  const spans = receiver.spans;
  const traceId = assertOneTrace(spans);
  assert.equal(shown.traceId, traceId);
  // The AI SDK's model-call spans: one per call, under the generateText span, under Main's attempt.
  const calls = spans.filter((s) => s.name === 'ai.generateText.doGenerate');
  assert.equal(calls.length, usage.modelCalls, spans.map((s) => s.name).join(', '));
  for (const call of calls) {
    assert.equal(call.attributes['gen_ai.request.model'], 'test-model');
    const outer = parentOf(spans, call)!;
    assert.equal(outer.name, 'ai.generateText');
    assert.equal(parentOf(spans, outer)?.name, 'scienceevolve.attempt');
  }
  const sum = (key: string) => calls.reduce((n, s) => n + Number(s.attributes[key] ?? 0), 0);
  assert.equal(sum('gen_ai.usage.input_tokens'), usage.inputTokens);
  assert.equal(sum('gen_ai.usage.output_tokens'), usage.outputTokens);
  // No prompt or answer text unless the operator turns recording on.
  assert.ok(!JSON.stringify(spans).includes('Keep the plan in notes.'), 'no prompt in the spans');
  assert.ok(!JSON.stringify(spans).includes('sk-telemetry-key'), 'no key in the spans');
  // The loop's tool calls are client spans in the same trace.
  assert.equal(spans.filter((s) => s.name === 'tools/call write' || s.name === 'tools/call read').length, 2);
  await assertNothingLeft({ dir });
});
