/**
 * What a harness gets from the engine besides its surface, through the harness interface alone: reports
 * (model calls with usage, retries, checkpoints) become journal events and usage totals per invocation and
 * per run in run.json, `status` and the CLI; `toolCallsReached` is recorded on the attempt; and a harness
 * that crashed after a checkpoint is retried from it without calling its recorded tool again. The harness
 * here is a test's own factory behind the `openai` type (no model is called); its service is real.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { progressLine } from '../../../packages/cli/src/commands/run.js';
import type { RunRecord } from '../../../packages/sdk/src/engine/runRecord.js';
import { runStatus } from '../../../packages/sdk/src/engine/runStatus.js';
import { runWorkflow } from '../../../packages/sdk/src/engine/runs.js';
import { SdkError } from '../../../packages/sdk/src/errors.js';
import type { AgentHarness, HarnessInput } from '../../../packages/sdk/src/harness/harness.js';
import { resultText } from '../../../packages/sdk/src/harness/harness.js';
import { runCli } from '../../cli/runCli.js';
import { fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

const WORKFLOW = {
  agents: {
    main: {
      harness: { type: 'openai', model: 'fake-model' },
      mcpServers: [{ name: 'counts', project: 'counts' }],
    },
  },
  mcpDefinitions: { counts: fixtureDefinition('countsCalls.cjs') },
};

/** Two "turns": the first calls a tool and checkpoints its result; the second answers. */
function twoTurns(options: { crashOnFirstAttempt: boolean; seen: unknown[] }): AgentHarness {
  let attempts = 0;
  return {
    async run(input: HarnessInput) {
      attempts += 1;
      options.seen.push(input.checkpoint);
      let recorded = (input.checkpoint as { result?: string } | undefined)?.result;
      if (recorded === undefined) {
        input.report({
          kind: 'model.called',
          turn: 1,
          model: 'fake-model',
          usage: { inputTokens: 100, outputTokens: 10 },
          durationMs: 5,
        });
        recorded = resultText(await input.surface.callTool('counts__count', { label: 'model-call' }));
        await input.saveCheckpoint({ result: recorded });
        input.report({ kind: 'checkpoint', step: 1 });
      }
      if (options.crashOnFirstAttempt && attempts === 1) {
        throw new SdkError('harness_failed', 'the fake model loop crashed after its checkpoint');
      }
      input.report({ kind: 'model.retry', turn: 2, attempt: 1, delayMs: 1, status: 429, message: 'slow down' });
      input.report({
        kind: 'model.called',
        turn: 2,
        model: 'fake-model',
        usage: { inputTokens: 150, outputTokens: 20, totalTokens: 170, cachedInputTokens: 50 },
        durationMs: 7,
      });
      return { output: `answer from ${recorded}`, toolCallsReached: 1 };
    },
  };
}

test('reports become events and usage totals in run.json, status and the CLI; toolCallsReached is recorded', async (t) => {
  const box = await sandbox(t);
  const seen: unknown[] = [];
  const result = await runWorkflow({
    ...box,
    workflow: WORKFLOW,
    requirement: 'count once',
    graceMs: 500,
    harnessFactories: { openai: () => twoTurns({ crashOnFirstAttempt: false, seen }) },
  });
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'answer from model-call#1');
  assert.deepEqual(seen, [undefined], 'a fresh invocation has no checkpoint');

  const called = ofType(result.events, 'model.called');
  assert.deepEqual(
    called.map((e) => [e.agent, e.turn, e.model, e.usage.inputTokens]),
    [
      ['main', 1, 'fake-model', 100],
      ['main', 2, 'fake-model', 150],
    ],
  );
  assert.equal(ofType(result.events, 'model.retry')[0]!.status, 429);
  const checkpoint = ofType(result.events, 'invocation.checkpoint')[0]!;
  assert.equal(checkpoint.step, 1);
  assert.ok(existsSync(checkpoint.path));
  assert.deepEqual(JSON.parse(readFileSync(checkpoint.path, 'utf8')).state, { result: 'model-call#1' });

  const expected = {
    modelCalls: 2,
    inputTokens: 250,
    outputTokens: 30,
    cachedInputTokens: 50,
    reasoningTokens: 0,
    totalTokens: 280,
  };
  const record = JSON.parse(readFileSync(join(result.runDir, 'run.json'), 'utf8')) as RunRecord;
  assert.deepEqual(record.usage, expected);
  assert.deepEqual(record.invocations[0]!.usage, expected);
  assert.equal(record.invocations[0]!.checkpoint, checkpoint.path);
  assert.deepEqual(
    record.invocations[0]!.attempts.map((a) => [a.toolCalls, a.toolCallsReached]),
    [[1, 1]],
  );
  assert.deepEqual(ofType(result.events, 'run.finished')[0]!.usage, expected);
  assert.deepEqual(ofType(result.events, 'invocation.finished')[0]!.usage, expected);

  const status = await runStatus({ dataDir: box.dataDir, project: box.project });
  const run = status.projects[0]!.runs[0]!;
  assert.deepEqual(run.usage, expected);
  assert.deepEqual(run.invocations[0]!.usage, expected);
  assert.equal(run.invocations[0]!.toolCalls, 1);

  const human = await runCli(['status', '--data-dir', box.dataDir, '--project', box.project]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /run run-\S+: succeeded .*; 2 model calls, 250 in \/ 30 out tokens/);
  assert.match(human.stdout, /main inv-\S+: succeeded, 1 attempt, 1 tool call; 2 model calls, 250 in \/ 30 out tokens/);
  const json = await runCli(['status', '--data-dir', box.dataDir, '--project', box.project, '--json']);
  assert.deepEqual((json.json as typeof status).projects[0]!.runs[0]!.usage, expected);

  assert.match(progressLine(called[0]!)!, /^\[main\] turn 1 \(fake-model\): 100 in \/ 10 out tokens, 5 ms$/);
  assert.match(progressLine(ofType(result.events, 'model.retry')[0]!)!, /turn 2: model call failed \(429: slow down\)/);
  await assertNothingLeft(box.project, result.events);
});

test('a harness that crashed after a checkpoint is retried from it: its recorded tool call does not run again', async (t) => {
  const box = await sandbox(t);
  const seen: unknown[] = [];
  const harness = twoTurns({ crashOnFirstAttempt: true, seen });
  const result = await runWorkflow({
    ...box,
    workflow: { ...WORKFLOW, orchestration: { invocationRetries: 1 } },
    requirement: 'count once',
    graceMs: 500,
    harnessFactories: { openai: () => harness },
  });
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'answer from model-call#1');
  assert.deepEqual(seen, [undefined, { result: 'model-call#1' }], 'the retry got the checkpoint');
  assert.equal(readFileSync(join(box.workspace, 'calls.log'), 'utf8'), 'model-call\n', 'the tool ran once');
  const record = JSON.parse(readFileSync(join(result.runDir, 'run.json'), 'utf8')) as RunRecord;
  assert.deepEqual(
    record.invocations[0]!.attempts.map((a) => [a.outcome, a.fromCheckpoint, a.toolCalls]),
    [
      ['failed', false, 1],
      ['succeeded', true, 0],
    ],
  );
  assert.deepEqual(
    ofType(result.events, 'invocation.state').map((e) => `${e.from}->${e.to}@${e.attempt}`),
    ['starting->running@1', 'running->starting@2', 'starting->running@2', 'running->succeeded@2'],
  );
  await assertNothingLeft(box.project, result.events);
});
