/**
 * Fair starts under load: the admission gate admits a few service starts at a time and queues the rest in
 * arrival order; a start's budget counts from its admission and its wait is reported apart (`queuedMs`);
 * a wait past the queue limit fails `start_queue_timeout`; a start cancelled while queued launches
 * nothing. The invocation tests run real services and prove every process gone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StartGate } from '../../../packages/sdk/src/processes/admission.ts';
import type { ServiceEvent } from '../../../packages/sdk/src/sessions/serviceEvents.ts';
import { startInvocationServices } from '../../../packages/sdk/src/invocation/invocation.ts';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';
import { readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { assertNoMarkedProcess, fixtureDefinition, killMarked, tempDir } from './helpers.ts';

async function setup(t: Parameters<typeof tempDir>[0], workflow: Record<string, unknown>) {
  const project = `adm${Date.now()}${Math.floor(Math.random() * 1000)}`;
  const dataDir = tempDir(t);
  const workspace = tempDir(t, 'se-ws-');
  t.after(() => killMarked(project));
  await loadWorkflow({ dataDir, project, workflow });
  const paths = await openProject(dataDir, project);
  const version = (await readAccepted(paths))!;
  return { paths, version, workspace, project };
}

test('the gate admits its capacity at once, then in arrival order; each admission says how long it queued', async () => {
  const gate = new StartGate(1);
  const first = await gate.admit();
  assert.equal(first.queuedMs, 0);
  const order: string[] = [];
  const second = gate.admit().then((a) => {
    order.push('second');
    return a;
  });
  const third = gate.admit().then((a) => {
    order.push('third');
    return a;
  });
  assert.equal(gate.waiting, 2);
  await new Promise((resolve) => setTimeout(resolve, 30));
  first.release();
  first.release(); // idempotent: frees one place only
  const admitted = await second;
  assert.ok(admitted.queuedMs >= 20, `queued ${admitted.queuedMs} ms`);
  assert.deepEqual(order, ['second'], 'one release admits one waiter');
  admitted.release();
  (await third).release();
  assert.deepEqual(order, ['second', 'third']);
  assert.equal(gate.active, 0);
  assert.equal(gate.waiting, 0);
});

test('a wait past the queue limit fails start_queue_timeout; an aborted wait leaves the queue', async () => {
  const gate = new StartGate(1);
  const held = await gate.admit();
  await assert.rejects(gate.admit({ queueLimitMs: 50, what: 'service "x"' }), (error: unknown) => {
    assert.equal((error as { code?: string }).code, 'start_queue_timeout');
    assert.match((error as Error).message, /service "x" waited 50 ms for its turn to start/);
    return true;
  });
  const abort = new AbortController();
  const waiting = gate.admit({ signal: abort.signal });
  abort.abort(new Error('cancelled while queued'));
  await assert.rejects(waiting, /cancelled while queued/);
  assert.equal(gate.waiting, 0);
  held.release();
  assert.equal(gate.active, 0, 'the place is free again');
  assert.throws(() => new StartGate(0), { code: 'usage' });
});

test('with one place, two services start one after the other; the second budget counts from its admission', {
  timeout: 30_000,
}, async (t) => {
  const { paths, version, workspace, project } = await setup(t, {
    agents: {
      main: {
        mcpServers: [
          { name: 'slow1', project: 'slow1' },
          { name: 'slow2', project: 'slow2' },
        ],
      },
    },
    mcpDefinitions: {
      slow1: fixtureDefinition('slowToStart.cjs', { args: ['5000'] }),
      slow2: fixtureDefinition('slowToStart.cjs', { args: ['5000'] }),
    },
  });
  const events: ServiceEvent[] = [];
  // Each start takes 5 s and a little; the budget (8 s) could not cover both one after the other, but
  // each counts from its own admission.
  const services = await startInvocationServices({
    paths,
    version,
    agent: 'main',
    runId: 'r-gate',
    workspace,
    graceMs: 200,
    startupBudgetMs: 8000,
    startGate: new StartGate(1),
    onEvent: (event) => events.push(event),
  });
  t.after(() => services.close());
  assert.deepEqual(
    services.failures.map((f) => f.code),
    [],
  );
  const ready = events.filter((e): e is Extract<ServiceEvent, { type: 'service.ready' }> => e.type === 'service.ready');
  assert.equal(ready.length, 2);
  const [firstReady, secondReady] = ready;
  assert.equal(firstReady!.queuedMs, 0);
  assert.ok((secondReady!.queuedMs ?? 0) >= 4000, `the second queued ${secondReady!.queuedMs} ms`);
  // The second launched only after the first was ready: its `starting` comes after the first `ready`.
  const secondStarting = events.findIndex(
    (e) => e.type === 'service.state' && e.to === 'starting' && e.service === secondReady!.service,
  );
  assert.ok(secondStarting > events.indexOf(firstReady!), 'serialized by the gate');
  await services.close();
  await assertNoMarkedProcess(project);
});

test('a start cancelled while queued launches nothing', { timeout: 30_000 }, async (t) => {
  const { paths, version, workspace, project } = await setup(t, {
    agents: {
      main: {
        mcpServers: [
          { name: 'mute', project: 'mute' },
          { name: 'plain', project: 'plain' },
        ],
      },
    },
    mcpDefinitions: { mute: fixtureDefinition('neverAnswersInitialize.cjs'), plain: fixtureDefinition('plain.cjs') },
  });
  const gate = new StartGate(1);
  const events: ServiceEvent[] = [];
  const abort = new AbortController();
  const starting = startInvocationServices({
    paths,
    version,
    agent: 'main',
    runId: 'r-cancel',
    workspace,
    graceMs: 200,
    startGate: gate,
    signal: abort.signal,
    onEvent: (event) => events.push(event),
  });
  // One start holds the place (it never answers), the other waits; cancel then.
  const deadline = Date.now() + 10_000;
  while (gate.waiting === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(gate.waiting, 1);
  abort.abort(new Error('cancelled by the test'));
  const services = await starting;
  t.after(() => services.close());
  assert.equal(services.failures.length, 2);
  const launched = new Set(
    events.filter((e) => e.type === 'service.state' && e.to === 'starting').map((e) => e.service),
  );
  assert.equal(launched.size, 1, 'only the admitted service launched');
  assert.equal(gate.active + gate.waiting, 0, 'the gate is free');
  await services.close();
  await assertNoMarkedProcess(project);
});
