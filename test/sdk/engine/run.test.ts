/**
 * Scripted runs through the engine's API with real services: tool calls reach the services, Main delegates,
 * refusals come back as tool errors, a worker has no fixed catalog, apply_workflow's new service reaches the
 * next delegate, a crashing harness is retried then failed, and nothing is left running.
 * Each run starts real Node services (about 1–2 s each on 2 cores): budgets below are generous for that.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { startRun } from '../../../packages/sdk/src/engine/runs.js';
import type { RunRecord } from '../../../packages/sdk/src/engine/runRecord.js';
import type { RunEvent } from '../../../packages/sdk/src/events/runEvents.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

function workflow() {
  return {
    orchestration: { allowMainReconfiguration: true, invocationRetries: 1 },
    agents: {
      main: agent([['notes', 'notes']]),
      analyst: agent([['adds', 'adds']]),
      reporter: agent([]),
      sneaky: agent([]),
    },
    mcpDefinitions: {
      notes: fixtureDefinition('notesService.cjs'),
      adds: fixtureDefinition('addsNumbers.cjs'),
    },
  };
}

test('a scripted run: services, delegation, refusals, apply_workflow then delegate, a crashing worker', async (t) => {
  const box = await sandbox(t);
  const proposed = workflow();
  (proposed.mcpDefinitions as Record<string, unknown>).adds2 = fixtureDefinition('addsNumbers.cjs');
  proposed.agents.reporter = agent([['adds2', 'adds2']]);
  const script = {
    agents: {
      main: [
        { call: 'notes__write', arguments: { name: 'plan.txt', text: 'the plan' } },
        { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'add 2 and 3' } },
        { call: 'scienceevolve__delegate', arguments: { agent: 'main', task: 'recurse' } },
        { call: 'scienceevolve__delegate', arguments: { agent: 'nobody', task: 'anything' } },
        { call: 'scienceevolve__delegate', arguments: { agent: 'sneaky', task: 'reconfigure' } },
        { call: 'scienceevolve__apply_workflow', arguments: { workflow: proposed } },
        { call: 'scienceevolve__delegate', arguments: { agent: 'reporter', task: 'add 40 and 2' } },
        { call: 'notes__read', arguments: { name: 'plan.txt' } },
        { final: 'analyst={{1}}|self={{2}}|nobody={{3}}|sneaky={{4}}|reporter={{6}}|note={{7}}|missing={{9}}' },
      ],
      analyst: [{ call: 'adds__add', arguments: { a: 2, b: 3 } }, { final: '{{0}}' }],
      sneaky: [{ call: 'scienceevolve__apply_workflow', arguments: { workflow: {} } }, { final: 'unreachable' }],
      reporter: [{ call: 'adds2__add', arguments: { a: 40, b: 2 } }, { final: '{{0}}' }],
    },
  };
  const handle = startRun({ ...box, workflow: workflow(), script, requirement: 'do it all', graceMs: 500 });
  const streamed: RunEvent[] = [];
  for await (const event of handle.events()) streamed.push(event);
  const result = await handle.result;

  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  const parts = Object.fromEntries((result.output ?? '').split('|').map((p) => p.split(/=(.*)/s).slice(0, 2)));
  assert.equal(parts.analyst, '5');
  assert.match(parts.self!, /unknown_agent: Main cannot delegate to itself/);
  assert.match(parts.nobody!, /there is no worker "nobody".*analyst, reporter, sneaky/);
  assert.match(
    parts.sneaky!,
    /worker "sneaky" .* failed after 2 attempt\(s\): unknown_tool: .*scienceevolve__apply_workflow/,
  );
  assert.equal(parts.reporter, '42');
  assert.equal(parts.note, 'the plan');
  assert.equal(parts.missing, '{{9}}', 'a reference past the results stays as written');

  // The API's iterator and the journal hold the same events as the result, in order.
  assert.deepEqual(streamed, result.events);
  const lines = readFileSync(result.eventsPath, 'utf8').trim().split('\n');
  assert.deepEqual(
    lines.map((l) => JSON.parse(l)),
    result.events,
  );
  const types = new Set<string>(result.events.map((e) => e.type));
  for (const type of [
    'run.started',
    'invocation.started',
    'service.ready',
    'service.exited',
    'tool.called',
    'invocation.finished',
    'workflow.reconfigured',
    'run.finished',
  ]) {
    assert.ok(types.has(type), `an event ${type}`);
  }
  for (const e of result.events) assert.equal(e.run, result.run);

  // The call ledger.
  const calls = ofType(result.events, 'tool.called');
  const write = calls.find((e) => e.tool === 'notes__write')!;
  assert.deepEqual(write.arguments, { name: 'plan.txt', text: 'the plan' });
  assert.equal(write.ok, true);
  assert.equal(write.summary, 'wrote plan.txt');
  assert.equal(write.agent, 'main');
  assert.equal(typeof write.durationMs, 'number');
  assert.equal(calls.filter((e) => e.tool === 'scienceevolve__delegate' && e.ok === false).length, 3);
  for (const call of calls) assert.ok(Buffer.byteLength(String(call.summary)) <= 1024);
  // A worker sees its own services only; the fixed catalog is not on its surface.
  assert.deepEqual(
    calls.filter((e) => e.agent === 'analyst').map((e) => e.tool),
    ['adds__add'],
  );
  const reconfigured = ofType(result.events, 'workflow.reconfigured')[0]!;
  assert.equal(reconfigured.version, 2);
  assert.deepEqual(reconfigured.changedMcps, ['adds2']);
  assert.deepEqual(reconfigured.changedAgents, ['reporter']);

  // The crashing worker: two attempts, each an event, then failed.
  const sneakyFailures = ofType(result.events, 'invocation.attempt_failed').filter((e) => e.agent === 'sneaky');
  assert.deepEqual(
    sneakyFailures.map((e) => e.willRetry),
    [true, false],
  );
  assert.equal((sneakyFailures[0]!.error as { code: string }).code, 'unknown_tool');

  // run.json: the durable record.
  const record = JSON.parse(readFileSync(`${result.runDir}/run.json`, 'utf8')) as RunRecord;
  assert.equal(record.status, 'succeeded');
  assert.equal(record.output, result.output);
  const byAgent = Object.fromEntries(record.invocations.map((i) => [i.agent, i]));
  assert.deepEqual(
    record.invocations.map((i) => [i.agent, i.state, i.attempts.length]),
    [
      ['main', 'succeeded', 1],
      ['analyst', 'succeeded', 1],
      ['sneaky', 'failed', 2],
      ['reporter', 'succeeded', 1],
    ],
  );
  assert.equal(byAgent.analyst!.parent, byAgent.main!.id);
  assert.equal(byAgent.main!.attempts[0]!.version, 1);
  assert.equal(byAgent.reporter!.attempts[0]!.version, 2, 'the worker delegated after the apply runs version 2');
  assert.notEqual(byAgent.sneaky!.attempts[0]!.servicesId, byAgent.sneaky!.attempts[1]!.servicesId);

  await assertNothingLeft(box.project, result.events);
});
