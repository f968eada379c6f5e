/**
 * Warm starts through the engine's API with real services: a second delegate to an agent takes the set
 * prestarted for it (same pids, same invocation id, `prestarted: true`); an apply_workflow that changes the
 * agent's service digest collects the waiting set and the next delegate starts cold; a set nobody takes is
 * collected at the run's end or when its idle bound passes; with `prestart: false` nothing is prestarted;
 * `status` lists a set while it waits; a prestart that fails to start is journaled and the next delegate
 * starts cold; of two concurrent delegates one takes the set; Git-on prestarts in the role's worktree.
 * Every pid of every set is proved gone. Real Node services: a few seconds a run on 2 cores.
 */
import assert from 'node:assert/strict';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runStatus } from '../../../packages/sdk/src/engine/runStatus.js';
import { startRun } from '../../../packages/sdk/src/engine/runs.js';
import { resultText } from '../../../packages/sdk/src/harness/harness.js';
import type { HarnessFactories } from '../../../packages/sdk/src/harness/harnessFor.js';
import type { RunEvent } from '../../../packages/sdk/src/events/runEvents.js';
import { initRepo } from '../../fixtures/engine/git.js';
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

test('status lists a set that waits (agent, since, services, pids, idle deadline), and none once the run ended', async (t) => {
  const box = await sandbox(t);
  const script = {
    agents: {
      // Main sleeps long enough for the prestart to be ready and for status to see it waiting.
      main: [delegate('first'), { call: 'slow__sleep', arguments: { ms: 4000 } }, { final: 'ok' }],
      analyst: analystStep,
    },
  };
  const handle = startRun({ ...box, workflow: workflow(), script, requirement: 'status', graceMs: 500 });
  let waiting: Awaited<ReturnType<typeof runStatus>>['projects'][number]['runs'][number]['prestarted'] = [];
  const deadline = Date.now() + 30_000;
  while (waiting.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const report = await runStatus({ dataDir: box.dataDir, project: box.project }).catch(() => undefined);
    waiting = report?.projects[0]?.runs[0]?.prestarted ?? [];
  }
  const result = await handle.result;
  t.after(() => assertNothingLeft(box.project, result.events));
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  const ready = ofType(result.events, 'prestart.ready');
  assert.equal(ready.length, 1, JSON.stringify(ready));
  assert.equal(waiting.length, 1, 'status showed the set while it waited');
  const set = waiting[0]!;
  assert.equal(set.invocation, ready[0]!.invocation);
  assert.equal(set.agent, 'analyst');
  assert.deepEqual(set.services, ['adds']);
  assert.deepEqual(set.pids, ready[0]!.pids);
  assert.equal(set.since, ready[0]!.time);
  assert.ok(set.idleDeadline !== null);
  assert.equal(Date.parse(set.idleDeadline) - Date.parse(set.since) >= 59_000, true, 'the default idle bound, 60 s');
  const after = await runStatus({ dataDir: box.dataDir, project: box.project });
  assert.deepEqual(after.projects[0]?.runs[0]?.prestarted, [], 'a finished run has no set waiting');
  await assertPrestartsGone(result.events);
});

/** The analyst's adds service, whose second start in the project fails (the prestart's). */
function failingPrestartWorkflow() {
  const w = workflow();
  w.mcpDefinitions.adds = {
    entrypoint: 'server.cjs',
    files: {
      'server.cjs': fixtureDefinition('failsSecondStart.cjs').files['server.cjs']!,
      'adds.cjs': fixtureDefinition('addsNumbers.cjs').files['server.cjs']!,
    },
  };
  return w;
}

test('a prestart that fails to start is journaled; the run goes on and the next delegate starts cold', async (t) => {
  const box = await sandbox(t);
  const script = {
    agents: {
      main: [
        delegate('first'),
        { call: 'slow__sleep', arguments: { ms: 1500 } },
        delegate('second'),
        { final: '{{0}}|{{2}}' },
      ],
      analyst: [...analystStep, ...analystStep],
    },
  };
  const result = await startRun({
    ...box,
    workflow: failingPrestartWorkflow(),
    script,
    requirement: 'prestart fails',
    graceMs: 500,
  }).result;
  t.after(() => assertNothingLeft(box.project, result.events));
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, '5|5');
  const failed = ofType(result.events, 'prestart.collected').filter((e) => e.reason === 'start_failed');
  assert.equal(failed.length, 1, JSON.stringify(ofType(result.events, 'prestart.collected')));
  assert.ok(failed[0]!.error, 'the failure is journaled with its code and message');
  assert.match(failed[0]!.error.message, /adds/);
  assert.deepEqual(failed[0]!.pids, []);
  const workers = ofType(result.events, 'invocation.started').filter((e) => e.agent === 'analyst');
  assert.equal(workers.length, 2);
  assert.ok(!workers.some((w) => w.invocation === failed[0]!.invocation), 'the failed set is never claimed');
  const second = ofType(result.events, 'service.ready').filter((e) => e.invocation === workers[1]!.invocation);
  assert.equal(second.length, 1);
  assert.equal(second[0]!.prestarted, undefined, 'the second delegate started cold');
  assert.ok(
    !ofType(result.events, 'prestart.ready').some((e) => e.invocation === failed[0]!.invocation),
    'a failed set is never announced ready',
  );
  await assertPrestartsGone(result.events);
});

test('two concurrent delegates to one agent: one takes the warm set, the other starts cold, nothing leaks', async (t) => {
  const box = await sandbox(t);
  const answers: string[] = [];
  const harnessFactories: HarnessFactories = {
    scripted: (name) => ({
      run: async (input) => {
        if (name !== 'main') {
          return { output: resultText(await input.surface.callTool('adds__add', { a: 2, b: 3 })) };
        }
        const call = async (task: string) =>
          resultText(await input.surface.callTool('scienceevolve__delegate', { agent: 'analyst', task }));
        answers.push(await call('first'));
        // The set prestarted for the next invocation is ready well within this (a Node service starts in < 1 s).
        await input.surface.callTool('slow__sleep', { ms: 1500 });
        answers.push(...(await Promise.all([call('second'), call('third')])));
        return { output: 'done' };
      },
    }),
  };
  const result = await startRun({
    ...box,
    workflow: workflow(),
    script: { agents: {} },
    requirement: 'concurrent',
    graceMs: 500,
    harnessFactories,
  }).result;
  t.after(() => assertNothingLeft(box.project, result.events));
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(answers.length, 3);
  for (const answer of answers) assert.match(answer, /5/);
  const workers = ofType(result.events, 'invocation.started').filter((e) => e.agent === 'analyst');
  assert.equal(workers.length, 3);
  const readyOf = (invocation: string) =>
    ofType(result.events, 'service.ready').filter((e) => e.invocation === invocation);
  const concurrent = workers.slice(1).map((w) => readyOf(w.invocation));
  for (const ready of concurrent) assert.equal(ready.length, 1);
  const warm = concurrent.filter((ready) => ready[0]!.prestarted === true);
  assert.equal(warm.length, 1, 'exactly one of the two concurrent delegates took the warm set');
  const cold = concurrent.find((ready) => ready[0]!.prestarted === undefined)!;
  assert.notDeepEqual([cold[0]!.pid], [warm[0]![0]!.pid], 'the other started its own processes');
  // Every set was either taken once or collected; none is left.
  const sets = new Set(
    [...ofType(result.events, 'prestart.ready'), ...ofType(result.events, 'prestart.collected')].map(
      (e) => e.invocation,
    ),
  );
  const taken = ofType(result.events, 'service.ready').filter((e) => e.prestarted);
  assert.equal(sets.size, taken.length + ofType(result.events, 'prestart.collected').length);
  await assertPrestartsGone(result.events);
});

test('Git-on: the prestarted set runs in the role’s worktree and the next delegate takes it', async (t) => {
  const box = await sandbox(t);
  process.env.HOME = box.base;
  process.env.XDG_CONFIG_HOME = join(box.base, 'xdg');
  initRepo(box.workspace, 'start\n');
  const where = [{ call: 'notes__where' }, { final: '{{0}}' }];
  const result = await startRun({
    ...box,
    workflow: {
      orchestration: { git: true, invocationRetries: 0 },
      agents: { main: agent([['slow', 'slow']]), analyst: agent([['notes', 'notes']]) },
      mcpDefinitions: {
        notes: fixtureDefinition('notesService.cjs'),
        slow: fixtureDefinition('sleepsOnCall.cjs'),
      },
    },
    script: {
      agents: {
        main: [
          delegate('first'),
          { call: 'slow__sleep', arguments: { ms: 1500 } },
          delegate('second'),
          { final: '{{0}}|{{2}}' },
        ],
        analyst: [...where, ...where],
      },
    },
    requirement: 'git prestart',
    graceMs: 500,
  }).result;
  t.after(() => assertNothingLeft(box.project, result.events));
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  const tree = realpathSync(join(box.dataDir, 'projects', box.project, 'worktrees', 'analyst'));
  const [first, second] = (result.output ?? '').split('|').map((answer) => answer.replace(/ pid=\d+$/, ''));
  assert.equal(realpathSync(first!), tree, 'the cold set ran in the analyst worktree');
  assert.equal(realpathSync(second!), tree, 'the prestarted set ran in the analyst worktree too');
  const workers = ofType(result.events, 'invocation.started').filter((e) => e.agent === 'analyst');
  const warm = ofType(result.events, 'service.ready').filter((e) => e.invocation === workers[1]!.invocation);
  assert.equal(warm[0]?.prestarted, true, 'the second delegate took the set prestarted in the worktree');
  await assertPrestartsGone(result.events);
});
