import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startInvocation, startInvocationServices } from '../../../packages/sdk/src/invocation/invocation.ts';
import { planServices } from '../../../packages/sdk/src/invocation/plan.ts';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';
import { readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { assertAllGone, assertNoMarkedProcess, fixtureDefinition, killMarked, tempDir } from './helpers.ts';

async function setup(t: Parameters<typeof tempDir>[0], workflow: Record<string, unknown>, project = `p${Date.now()}`) {
  const dataDir = tempDir(t);
  const workspace = tempDir(t, 'se-ws-');
  t.after(() => killMarked(project));
  await loadWorkflow({ dataDir, project, workflow });
  const paths = await openProject(dataDir, project);
  const version = (await readAccepted(paths))!;
  return { paths, version, workspace, project };
}

test('aliases of one definition share one process; another agent (another invocation) gets its own', async (t) => {
  const { paths, version, workspace, project } = await setup(t, {
    agents: {
      main: {
        mcpServers: [
          { name: 'a', project: 'plain' },
          { name: 'b', project: 'plain' },
        ],
      },
      worker: { mcpServers: [{ name: 'c', project: 'plain' }] },
    },
    mcpDefinitions: { plain: fixtureDefinition('plain.cjs') },
  });
  const plan = planServices(version, 'main');
  assert.equal(plan.length, 1);
  assert.deepEqual(plan[0]?.aliases, ['a', 'b']);

  const main = await startInvocation({ paths, version, agent: 'main', runId: 'r1', workspace, graceMs: 300 });
  t.after(() => main.close());
  const worker = await startInvocation({ paths, version, agent: 'worker', runId: 'r1', workspace, graceMs: 300 });
  t.after(() => worker.close());
  assert.equal(main.sessions.length, 1);
  const mainPid = (main.sessions[0] as unknown as { pid: number }).pid;
  const workerPid = (worker.sessions[0] as unknown as { pid: number }).pid;
  assert.deepEqual(main.sessions[0]?.aliases, ['a', 'b']);
  assert.notEqual(mainPid, workerPid);

  // The copy is byte-identical to the persistent source, and the service runs from the copy.
  const source = paths.sourceDir(version.digests.plain!, 'plain');
  const copy = join(main.runtimePath, 'mcp', 'a');
  for (const file of ['server.cjs', 'lib/makeServer.cjs']) {
    assert.deepEqual(readFileSync(join(copy, file)), readFileSync(join(source, file)), file);
  }
  assert.ok(statSync(join(main.runtimePath, 'mcp', 'a.stderr.log')).isFile());

  await main.close();
  await worker.close();
  await assertAllGone([mainPid, workerPid]);
  await assertNoMarkedProcess(project);
});

test('one service failing to start collects the others and lists every failure with its log', async (t) => {
  const { paths, version, workspace, project } = await setup(t, {
    agents: {
      main: {
        mcpServers: [
          { name: 'good', project: 'good' },
          { name: 'dies', project: 'dies' },
          { name: 'keyless', project: 'keyless' },
        ],
      },
    },
    mcpDefinitions: {
      good: fixtureDefinition('plain.cjs'),
      dies: fixtureDefinition('exitsAtStart.cjs'),
      keyless: fixtureDefinition('needsEnv.cjs', { envFrom: { API_KEY: 'SE_TEST_UNSET_VARIABLE' } }),
    },
  });
  const services = await startInvocationServices({
    paths,
    version,
    agent: 'main',
    runId: 'r2',
    workspace,
    graceMs: 300,
    hostEnv: {},
  });
  t.after(() => services.close());
  assert.deepEqual(
    services.outcomes.map((o) => [o.planned.name, o.error?.code ?? 'ready']),
    [
      ['good', 'ready'],
      ['dies', 'service_exited'],
      ['keyless', 'missing_env'],
    ],
  );
  const dies = services.outcomes[1]!.error!;
  assert.equal(dies.data.log, join(services.runtimePath, 'mcp', 'dies.stderr.log'));
  assert.match(dies.message, /dies\.stderr\.log/);
  assert.match(services.outcomes[2]!.error!.message, /SE_TEST_UNSET_VARIABLE/);
  // The good one was collected because the invocation could not start.
  const goodPid = (services.outcomes[0]!.session as unknown as { pid: number }).pid;
  await assertAllGone([goodPid]);
  await assertNoMarkedProcess(project);

  await assert.rejects(
    startInvocation({ paths, version, agent: 'main', runId: 'r3', workspace, graceMs: 300, hostEnv: {} }),
    (error: { code: string; data: { failures: Array<{ code: string; data?: { cancelled?: boolean } }> } }) => {
      // missing_env fails before any spawn, so it is the cause, listed first; every other start either
      // failed on its own (dies: service_exited) or was cancelled because of it.
      assert.equal(error.code, 'missing_env');
      assert.equal(error.data.failures[0]?.code, 'missing_env');
      for (const f of error.data.failures.slice(1)) {
        assert.ok(
          f.code === 'service_exited' || (f.code === 'startup_timeout' && f.data?.cancelled),
          JSON.stringify(f),
        );
      }
      assert.ok(error.data.failures.length >= 2, 'dies is listed too: exited or cancelled');
      return true;
    },
  );
  await assertNoMarkedProcess(project);
});

test('the startup budget covers every service together', async (t) => {
  const { paths, version, workspace, project } = await setup(t, {
    agents: {
      main: {
        mcpServers: [
          { name: 'mute', project: 'mute' },
          { name: 'ok', project: 'ok' },
        ],
      },
    },
    mcpDefinitions: { mute: fixtureDefinition('neverAnswersInitialize.cjs'), ok: fixtureDefinition('plain.cjs') },
  });
  const started = Date.now();
  const services = await startInvocationServices({
    paths,
    version,
    agent: 'main',
    runId: 'r4',
    workspace,
    graceMs: 200,
    startupBudgetMs: 5000,
  });
  t.after(() => services.close());
  assert.equal(services.outcomes[0]?.error?.code, 'startup_timeout');
  assert.equal(services.outcomes[1]?.error, undefined);
  assert.ok(Date.now() - started < 12_000, 'the failure is reported within the budget plus collection');
  await assertNoMarkedProcess(project);
});

test('startInvocation: the first failure cancels the starts still running instead of waiting out the budget', async (t) => {
  const { paths, version, workspace, project } = await setup(t, {
    agents: {
      main: {
        mcpServers: [
          { name: 'mute', project: 'mute' },
          { name: 'nocommand', project: 'nocommand' },
        ],
      },
    },
    mcpDefinitions: {
      mute: fixtureDefinition('neverAnswersInitialize.cjs'),
      nocommand: fixtureDefinition('plain.cjs', { command: 'se-no-such-command' }),
    },
  });
  const started = Date.now();
  await assert.rejects(
    startInvocation({ paths, version, agent: 'main', runId: 'r5', workspace, graceMs: 200, startupBudgetMs: 30_000 }),
    (error: { code: string; data: { failures: Array<{ code: string; data?: { cancelled?: boolean } }> } }) => {
      assert.equal(error.code, 'command_not_found', 'the cause is named first');
      assert.deepEqual(
        error.data.failures.map((f) => [f.code, f.data?.cancelled ?? false]),
        [
          ['command_not_found', false],
          ['startup_timeout', true],
        ],
      );
      return true;
    },
  );
  assert.ok(Date.now() - started < 15_000, 'not the 30 s budget');
  await assertNoMarkedProcess(project);
});

test('the era of a definition is remembered in cache/eras/<digest>.json and the next invocation uses it', async (t) => {
  const { paths, version, workspace, project } = await setup(t, {
    agents: { main: { mcpServers: [{ name: 'a', project: 'plain' }] } },
    mcpDefinitions: { plain: fixtureDefinition('plain.cjs') },
  });
  const digest = version.digests.plain!;
  const eraFile = join(paths.root, 'cache', 'eras', `${digest}.json`);
  const sources: unknown[] = [];
  const pids: number[] = [];
  for (const runId of ['r1', 'r2']) {
    const invocation = await startInvocation({
      paths,
      version,
      agent: 'main',
      runId,
      workspace,
      graceMs: 300,
      onEvent: (event) => {
        if (event.type === 'service.ready') sources.push([event.era, event.eraSource]);
      },
    });
    t.after(() => invocation.close());
    pids.push((invocation.sessions[0] as unknown as { pid: number }).pid);
    assert.deepEqual(JSON.parse(readFileSync(eraFile, 'utf8')), {
      format: 2,
      digest,
      era: 'legacy',
      listed: { tools: 2, resources: 1, resourceTemplates: 1, prompts: 1 },
    });
    await invocation.close();
  }
  assert.deepEqual(sources, [
    ['legacy', 'negotiated'],
    ['legacy', 'remembered'],
  ]);
  await assertAllGone(pids);
  await assertNoMarkedProcess(project);
});
