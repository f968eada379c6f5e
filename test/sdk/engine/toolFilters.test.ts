/**
 * Tool filters in a run: one definition assigned to Main twice (one process), each alias with its own
 * filter; the scripted model calls what each alias offers and what it withholds. Real service process
 * (richContent.cjs); about 2 s on 2 cores.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { startRun } from '../../../packages/sdk/src/engine/runs.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

const SERVICE = readFileSync(new URL('../../fixtures/services/richContent.cjs', import.meta.url), 'utf8');

test('a run offers each alias only the tools that pass its filter; a withheld tool cannot be called', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const workflow = {
    agents: {
      main: {
        harness: { type: 'scripted' },
        mcpServers: [
          { name: 'books', project: 'rich', tools: { include: ['report'] } },
          { name: 'studio', project: 'rich', tools: { exclude: ['report', 'b*'] } },
        ],
      },
    },
    mcpDefinitions: { rich: { entrypoint: 'server.cjs', files: { 'server.cjs': SERVICE } } },
  };
  const script = {
    agents: {
      main: [
        { call: 'books__report', arguments: { quarter: 2 } },
        { call: 'studio__media' },
        { final: 'report={{0}}|media={{1}}' },
      ],
    },
  };
  const handle = startRun({ ...box, workflow, script, requirement: 'use the tools', graceMs: 300 });
  const result = await handle.result;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'report=Q2: 12.5|media=all kinds');

  // The scripted model calling a withheld tool: not on the surface, which lists exactly what passes.
  const withheld = startRun({
    ...box,
    workflow,
    script: { agents: { main: [{ call: 'studio__report', arguments: { quarter: 1 } }, { final: 'unreachable' }] } },
    requirement: 'use a withheld tool',
    graceMs: 300,
  });
  const refused = await withheld.result;
  assert.equal(refused.status, 'failed');
  assert.equal(refused.error?.code, 'unknown_tool');
  assert.deepEqual(refused.error?.data?.tools, [
    'books__report',
    'scienceevolve__delegate',
    'scienceevolve__get_workflow',
    'studio__media',
    'studio__picture',
    'studio__refuse',
  ]);
  await assertNothingLeft(box.project, refused.events);

  // Two aliases, one process.
  assert.equal(ofType(result.events, 'service.ready').length, 1);
  await assertNothingLeft(box.project, result.events);
});

test("Main's apply_workflow dropping a worker's exclude is refused, and the worker never offers the excluded tool", {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const workflow = (analystTools?: { exclude: string[] }) => ({
    orchestration: { allowMainReconfiguration: true, invocationRetries: 0 },
    agents: {
      main: { harness: { type: 'scripted' }, mcpServers: [] },
      analyst: {
        harness: { type: 'scripted' },
        mcpServers: [{ name: 'rich', project: 'rich', ...(analystTools === undefined ? {} : { tools: analystTools }) }],
      },
    },
    mcpDefinitions: { rich: { entrypoint: 'server.cjs', files: { 'server.cjs': SERVICE } } },
  });
  const script = {
    agents: {
      main: [
        { call: 'scienceevolve__apply_workflow', arguments: { workflow: workflow() } },
        { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'report' } },
        { final: 'apply={{0}}|worker={{1}}' },
      ],
      analyst: [{ call: 'rich__report', arguments: { quarter: 2 } }, { final: '{{0}}' }],
    },
  };
  const handle = startRun({
    ...box,
    workflow: workflow({ exclude: ['report'] }),
    script,
    requirement: 'widen the analyst',
    graceMs: 300,
  });
  const result = await handle.result;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  const [apply, worker] = (result.output ?? '').split('|worker=');
  assert.match(apply!, /filter_not_allowed at \$\.agents\.analyst\.mcpServers\[0\]\.tools/);
  assert.match(worker!, /unknown_tool/);
  assert.equal(ofType(result.events, 'workflow.reconfigured').length, 0);
  const failed = ofType(result.events, 'invocation.attempt_failed').filter((e) => e.agent === 'analyst');
  assert.equal(failed.length, 1);
  const offered = (failed[0]!.error as { data?: { tools?: string[] } }).data?.tools;
  assert.ok(Array.isArray(offered) && offered.includes('rich__media'), JSON.stringify(failed[0]!.error));
  assert.ok(!offered.includes('rich__report'), 'the excluded tool is not on the worker surface');
  assert.equal(
    ofType(result.events, 'tool.called').filter((e) => e.tool === 'rich__report' && e.ok === true).length,
    0,
  );
  await assertNothingLeft(box.project, result.events);
});
