/**
 * A host SIGKILLed while a prestarted set waits for its invocation: the set is registered with the
 * supervisor like any service, so the supervisor collects it and nothing of the project survives. And the
 * CLI: `run` says which services were prestarted; `run --no-prestart` prestarts nothing.
 * Real services and CLI processes: a few seconds each on 2 cores.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runEventsPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';
import { runEvents as events } from './helpers.js';

test('SIGKILL the host while a prestarted set waits: the supervisor collects it', async (t) => {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  const scriptPath = join(box.base, 'script.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      agents: { main: agent([['slow', 'slow']]), analyst: agent([['adds', 'adds']]) },
      mcpDefinitions: { slow: fixtureDefinition('sleepsOnCall.cjs'), adds: fixtureDefinition('addsNumbers.cjs') },
    }),
  );
  await writeFile(
    scriptPath,
    JSON.stringify({
      agents: {
        main: [
          { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'add 1 and 2' } },
          { call: 'slow__sleep', arguments: { ms: 30_000 } },
          { final: 'never' },
        ],
        analyst: [{ call: 'adds__add', arguments: { a: 1, b: 2 } }, { final: '{{0}}' }],
      },
    }),
  );
  const host = startCli(t, [
    'run',
    ...['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '500'],
    ...['--workspace', box.workspace, '--workflow', workflowPath, '--script', scriptPath],
    'warm',
  ]);
  await host.waitForStderr(/run (run-\S+) started/);
  const runId = /run (run-\S+) started/.exec(host.stderr())![1]!;
  const path = runEventsPath(new ProjectPaths(box.dataDir, box.project), runId);
  const deadline = Date.now() + 30_000;
  let ready = ofType(events(path), 'prestart.ready');
  while (ready.length === 0) {
    assert.ok(Date.now() < deadline, `no prestart.ready within 30 s:\n${host.stderr()}`);
    await sleep(50);
    ready = ofType(events(path), 'prestart.ready');
  }
  const pids = ready[0]!.pids;
  assert.equal(pids.length, 1);
  process.kill(host.pid, 'SIGKILL');
  assert.equal(await host.exited, null);
  await assertGone(host.pid);
  // The dead host's supervisor collects the prestarted set with every other service (500 ms grace).
  for (const pid of pids) await assertGone(pid, 10_000);
  for (const e of ofType(events(path), 'service.ready')) await assertGone(e.pid!, 10_000);
  const end = Date.now() + 10_000;
  while (markedProcesses(box.project).length > 0) {
    assert.ok(Date.now() < end, `still alive: ${markedProcesses(box.project)}`);
    await sleep(50);
  }
});

test('run prints the prestarted services; run --no-prestart prestarts nothing', async (t) => {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  const scriptPath = join(box.base, 'script.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      agents: { main: agent([['slow', 'slow']]), analyst: agent([['adds', 'adds']]) },
      mcpDefinitions: { slow: fixtureDefinition('sleepsOnCall.cjs'), adds: fixtureDefinition('addsNumbers.cjs') },
    }),
  );
  const twice = { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'add 1 and 2' } };
  await writeFile(
    scriptPath,
    JSON.stringify({
      agents: {
        main: [twice, { call: 'slow__sleep', arguments: { ms: 1000 } }, twice, { final: '{{0}} {{2}}' }],
        analyst: [
          { call: 'adds__add', arguments: { a: 1, b: 2 } },
          { final: '{{0}}' },
          { call: 'adds__add', arguments: { a: 1, b: 2 } },
          { final: '{{0}}' },
        ],
      },
    }),
  );
  const args = (...more: string[]) => [
    'run',
    ...['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '300', '--json'],
    ...['--workspace', box.workspace, '--workflow', workflowPath, '--script', scriptPath],
    ...more,
    'twice',
  ];
  const warm = await runCliToEnd(t, args());
  assert.equal(warm.code, 0, warm.stderr);
  const warmEvents = (warm.json as { events: RunEvent[] }).events;
  assert.equal(warm.stderr.match(/\[analyst\] service adds ready \(1 tools, \d+ ms, prestarted\)/g)?.length, 1);
  assert.equal(ofType(warmEvents, 'prestart.collected').length, 1, 'the last set, unused at the run end');
  await assertNothingLeft(box.project, warmEvents);

  const cold = await runCliToEnd(t, args('--no-prestart'));
  assert.equal(cold.code, 0, cold.stderr);
  const coldEvents = (cold.json as { events: RunEvent[] }).events;
  assert.doesNotMatch(cold.stderr, /prestarted/);
  assert.deepEqual(
    coldEvents.filter((e) => e.type.startsWith('prestart.')),
    [],
  );
  assert.equal(ofType(coldEvents, 'service.ready').length, 3);
  await assertNothingLeft(box.project, coldEvents);
});
