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
