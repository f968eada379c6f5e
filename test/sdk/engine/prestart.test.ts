/**
 * Warm starts through the engine's API with real services: a second delegate to an agent takes the set
 * prestarted for it (same pids, same invocation id, `prestarted: true`); an apply_workflow that changes the
 * agent's service digest collects the waiting set and the next delegate starts cold; a set nobody takes is
 * collected at the run's end or when its idle bound passes; with `prestart: false` nothing is prestarted.
 * Every pid of every set is proved gone. Real Node services: a few seconds a run on 2 cores.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startRun } from '../../../packages/sdk/src/engine/runs.js';
import type { RunEvent } from '../../../packages/sdk/src/events/runEvents.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertGone } from '../../fixtures/store/children.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

/** The workflow; `moved` adds a second version of the adds service and points the analyst's `adds` at it. */
function workflow(moved = false) {
  const adds2 = fixtureDefinition('addsNumbers.cjs');
  adds2.files['server.cjs'] += '\n// the second version\n';
  return {
    orchestration: { allowMainReconfiguration: true, invocationRetries: 0 },
    agents: {
      main: agent([['slow', 'slow']]),
      analyst: {
        ...agent([]),
        mcpServers: [{ name: 'adds', project: moved ? 'adds2' : 'adds' }],
      },
    },
    mcpDefinitions: {
      adds: fixtureDefinition('addsNumbers.cjs'),
      slow: fixtureDefinition('sleepsOnCall.cjs'),
      ...(moved ? { adds2 } : {}),
    },
  };
}

const delegate = (task: string) => ({ call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task } });
const analystStep = [{ call: 'adds__add', arguments: { a: 2, b: 3 } }, { final: '{{0}}' }];

/** Every pid a prestart event names, proved gone. */
async function assertPrestartsGone(events: readonly RunEvent[]): Promise<void> {
  const pids = [...ofType(events, 'prestart.ready'), ...ofType(events, 'prestart.collected')].flatMap((e) => e.pids);
  for (const pid of pids) await assertGone(pid);
}

test('a second delegate takes the prestarted set; a digest change discards it; run end collects the last', async (t) => {
  const box = await sandbox(t);
  const script = {
    agents: {
      main: [
        delegate('first'),
        // Time for the prestart to be ready, so the second delegate finds it waiting (not still starting).
        { call: 'slow__sleep', arguments: { ms: 1500 } },
        delegate('second'),
        { call: 'slow__sleep', arguments: { ms: 1500 } },
        { call: 'scienceevolve__apply_workflow', arguments: { workflow: workflow(true) } },
        delegate('third'),
        { call: 'slow__sleep', arguments: { ms: 1500 } },
        { final: '{{0}}|{{2}}|{{5}}' },
      ],
      analyst: [...analystStep, ...analystStep, ...analystStep],
    },
  };
  const handle = startRun({ ...box, workflow: workflow(), script, requirement: 'warm', graceMs: 500 });
  const result = await handle.result;
  t.after(() => assertNothingLeft(box.project, result.events));
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, '5|5|5');

  const workers = ofType(result.events, 'invocation.started').filter((e) => e.agent === 'analyst');
  assert.equal(workers.length, 3);
  const readyOf = (invocation: string) =>
    ofType(result.events, 'service.ready').filter((e) => e.invocation === invocation);
  const prestarted = ofType(result.events, 'prestart.ready');
  const collected = ofType(result.events, 'prestart.collected');

  // The first delegate starts cold and prestarts the second's set, under the second's id.
  assert.equal(readyOf(workers[0]!.invocation)[0]!.prestarted, undefined);
  const warm = prestarted.find((e) => e.invocation === workers[1]!.invocation);
  assert.ok(warm, 'the second invocation carries the id its set was prestarted under');
  assert.equal(warm.agent, 'analyst');
  assert.equal(warm.runtimePath, workers[1]!.runtimePath, 'the runtime path names the invocation that uses it');
  const second = readyOf(workers[1]!.invocation);
  assert.equal(second.length, 1);
  assert.equal(second[0]!.prestarted, true);
  assert.deepEqual([second[0]!.pid], warm.pids, 'the second delegate uses the prestarted processes');
  assert.equal(second[0]!.servicesId, workers[1]!.invocation);

  // The second delegate prestarted a set for a third; apply_workflow changed the digest: collected.
  const stale = collected.find((e) => e.reason === 'workflow_changed');
  assert.ok(stale, JSON.stringify(collected));
  assert.equal(stale.pids.length, 1);
  for (const pid of stale.pids) await assertGone(pid);
  const third = readyOf(workers[2]!.invocation);
  assert.equal(third[0]!.prestarted, undefined, 'the third delegate starts fresh');
  assert.notDeepEqual([third[0]!.pid], stale.pids);
  assert.equal(ofType(result.events, 'workflow.reconfigured')[0]?.version, 2);
  assert.notEqual(third[0]!.digest, readyOf(workers[0]!.invocation)[0]!.digest, 'the third runs the new digest');

  // The third prestarted one more for a fourth delegate that never came: collected at the run's end,
  // before run.finished.
  const unused = collected.filter((e) => e.reason === 'run_end');
  assert.equal(unused.length, 1);
  assert.equal(unused[0]!.pids.length, 1, 'the last set was ready (Main slept) and is collected with its process');
  const types = result.events.map((e) => e.type);
  assert.ok(types.lastIndexOf('prestart.collected') < types.indexOf('run.finished'));
  const sets = new Set([...prestarted, ...collected].map((e) => e.invocation));
  const taken = new Set(
    ofType(result.events, 'service.ready')
      .filter((e) => e.prestarted)
      .map((e) => e.invocation),
  );
  assert.equal(sets.size, taken.size + collected.length, 'every prestarted set was used once or collected');
  await assertPrestartsGone(result.events);
});

test('an unused set is collected after prestartIdleMs; with prestart off nothing is prestarted', async (t) => {
  const box = await sandbox(t);
  const script = {
    agents: {
      main: [delegate('first'), { call: 'slow__sleep', arguments: { ms: 2500 } }, delegate('second'), { final: 'ok' }],
      analyst: [...analystStep, ...analystStep],
    },
  };
  const idle = await startRun({
    ...box,
    workflow: workflow(),
    script,
    requirement: 'idle',
    graceMs: 500,
    prestartIdleMs: 1,
  }).result;
  t.after(() => assertNothingLeft(box.project, idle.events));
  assert.equal(idle.status, 'succeeded', JSON.stringify(idle.error));
  // The set prestarted by the first delegate idles out while Main sleeps; the one prestarted by the second
  // may idle out too before the run ends (1 ms), or be collected at the run's end.
  const idled = ofType(idle.events, 'prestart.collected').filter((e) => e.reason === 'idle');
  assert.ok(idled.length >= 1, JSON.stringify(ofType(idle.events, 'prestart.collected')));
  for (const set of idled) for (const pid of set.pids) await assertGone(pid);
  const workers = ofType(idle.events, 'invocation.started').filter((e) => e.agent === 'analyst');
  for (const set of idled) {
    assert.ok(!workers.some((w) => w.invocation === set.invocation), 'a collected set is never claimed');
  }
  assert.ok(ofType(idle.events, 'service.ready').every((e) => e.prestarted === undefined));
  await assertPrestartsGone(idle.events);

  const off = await startRun({
    ...box,
    workflow: workflow(),
    script,
    requirement: 'off',
    graceMs: 500,
    prestart: false,
  }).result;
  t.after(() => assertNothingLeft(box.project, off.events));
  assert.equal(off.status, 'succeeded', JSON.stringify(off.error));
  assert.deepEqual(
    off.events.filter((e) => e.type.startsWith('prestart.')),
    [],
  );
  assert.ok(ofType(off.events, 'service.ready').every((e) => e.prestarted === undefined));
  assert.equal(ofType(off.events, 'service.ready').length, 3, 'main once, the analyst twice, all cold');
});
