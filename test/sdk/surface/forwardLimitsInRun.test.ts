/**
 * The run's `forwardTimeoutMs` reaches every forwarded call of a run (the surface owns the limit), and the
 * surface's rest and recovery of a service go into the run's journal. A real run: scripted Main, one real
 * service whose tool sleeps (about 2 s on 2 cores).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runWorkflow } from '../../../packages/sdk/src/engine/engine.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, ofType, sandbox } from '../engine/helpers.js';

test("a short forwardTimeoutMs fails a slow call in a run, and the service's rest is journaled", async (t) => {
  const box = await sandbox(t);
  const slow = { call: 'slow__sleep', arguments: { ms: 5_000 } };
  const result = await runWorkflow({
    ...box,
    workflow: {
      agents: { main: agent([['slow', 'slow']]) },
      mcpDefinitions: { slow: fixtureDefinition('sleepsOnCall.cjs') },
    },
    script: {
      agents: {
        main: [
          { call: 'slow__sleep', arguments: { ms: 1 } },
          slow,
          slow,
          slow,
          { call: 'slow__sleep', arguments: { ms: 1 } },
          { final: '{{0}}|{{1}}|{{3}}|{{4}}' },
        ],
      },
    },
    requirement: 'sleep too long',
    graceMs: 500,
    forwardTimeoutMs: 300,
  });
  await assertNothingLeft(box.project, result.events);
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  const [quick, first, third, resting] = (result.output ?? '').split('|');
  assert.equal(quick, 'slept 1', 'a call within the timeout is answered');
  assert.match(first!, /service "slow" did not answer tool "sleep" within 0\.3 s; the request was cancelled/);
  assert.match(third!, /did not answer tool "sleep" within 0\.3 s/);
  assert.match(resting!, /service "slow" failed 3 requests in a row and is resting/);

  const calls = ofType(result.events, 'tool.called');
  assert.deepEqual(
    calls.map((e) => e.ok),
    [true, false, false, false, false],
  );
  const rested = ofType(result.events, 'service.rested');
  assert.equal(rested.length, 1, JSON.stringify(rested));
  assert.equal(rested[0]!.service, 'slow');
  assert.equal(rested[0]!.failures, 3);
  assert.equal(rested[0]!.agent, 'main');
  assert.equal(typeof rested[0]!.invocation, 'string');
  assert.match(String(rested[0]!.until), /^\d{4}-\d\d-\d\dT/);
  // The rest is journaled between the third timed-out call and the refused one.
  const order = result.events.map((e) => e.type).filter((type) => type === 'tool.called' || type === 'service.rested');
  assert.deepEqual(order, [
    'tool.called',
    'tool.called',
    'tool.called',
    'service.rested',
    'tool.called',
    'tool.called',
  ]);
});
