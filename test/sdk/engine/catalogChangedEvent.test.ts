/**
 * A run journals a service's list change: the scripted Main calls a tool of addsToolsLater.cjs that takes
 * itself away while it runs; the session lists the service again, and the journal holds
 * `service.catalog_changed` under Main's invocation, with what was removed. A real service (about 1–2 s
 * on 2 cores); nothing is left running afterwards.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { startRun } from '../../../packages/sdk/src/engine/runs.js';
import { agent } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

const services = new URL('../../fixtures/services/', import.meta.url);

test('a run journals service.catalog_changed when a service takes a tool away', { timeout: 60_000 }, async (t) => {
  const box = await sandbox(t);
  const workflow = {
    orchestration: {},
    agents: { main: agent([['grows', 'grows']]) },
    mcpDefinitions: {
      grows: {
        entrypoint: 'server.cjs',
        files: {
          'server.cjs': readFileSync(new URL('addsToolsLater.cjs', services), 'utf8'),
          'lib/makeServer.cjs': readFileSync(new URL('lib/makeServer.cjs', services), 'utf8'),
        },
      },
    },
  };
  const script = {
    agents: {
      main: [{ call: 'grows__vanish', arguments: { ms: 1000 } }, { final: '{{0}}' }],
    },
  };
  const result = await startRun({ ...box, workflow, script, requirement: 'vanish', graceMs: 500 }).result;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'vanished', 'the call in flight finished');

  const [main] = ofType(result.events, 'invocation.started');
  const changes = ofType(result.events, 'service.catalog_changed');
  assert.equal(changes.length, 1);
  const change = changes[0]!;
  assert.equal(change.invocation, main!.invocation);
  assert.equal(change.agent, 'main');
  assert.equal(change.service, 'grows');
  assert.deepEqual(change.lists, ['tools']);
  assert.deepEqual(change.removed, { tools: ['vanish'], resources: [], resourceTemplates: [], prompts: [] });
  assert.deepEqual(change.added, { tools: [], resources: [], resourceTemplates: [], prompts: [] });
  const journal = readFileSync(result.eventsPath, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.ok(journal.some((event) => event.type === 'service.catalog_changed'));

  await assertNothingLeft(box.project, result.events);
});
