/**
 * Projects and hosts kept apart: a killed host's supervisor never touches another project's services,
 * the start-up sweep collects what a host and its supervisor (both killed) left, and never touches a
 * live host's processes. Deadlines leave ~2 s for pid 1 to reap zombies.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { isProcessAlive } from '@scienceevolve/supervisor';
import { sweepStrays } from '../../packages/sdk/src/processes/strayProcesses.js';
import { sleep, startHost, uniqueProjectId, waitGone } from './helpers.js';

test('two hosts of different projects, one killed: the other’s services are untouched', async (t) => {
  const killed = startHost(t, {
    projectId: uniqueProjectId(),
    graceMs: 300,
    services: ['loops', 'spawnsSetsidGrandchild'],
  });
  const living = startHost(t, {
    projectId: uniqueProjectId(),
    graceMs: 300,
    services: ['loops', 'spawnsSetsidGrandchild'],
  });
  const killedPids = (await killed.waitFor((l) => l.event === 'registered')).pids as number[];
  const livingPids = (await living.waitFor((l) => l.event === 'registered')).pids as number[];

  process.kill(killed.pid, 'SIGKILL');
  assert.deepEqual(await waitGone(killedPids, 6300), [], 'the killed host’s services are gone');
  await sleep(300);
  assert.deepEqual(livingPids.filter(isProcessAlive), livingPids, 'the living host’s services still run');
});

test('start-up sweep after a host and its supervisor were both SIGKILLed collects every stray', async (t) => {
  const projectId = uniqueProjectId();
  const host = startHost(t, {
    projectId,
    graceMs: 300,
    services: ['loops', 'ignoresSigterm', 'spawnsSetsidGrandchild'],
  });
  const registered = await host.waitFor((l) => l.event === 'registered');
  const pids = registered.pids as number[];

  // Stopped first, so the host cannot replace its supervisor in the instant between the two kills.
  process.kill(host.pid, 'SIGSTOP');
  process.kill(registered.supervisorPid as number, 'SIGKILL');
  // Its parent (the stopped host) cannot reap it: dead means a zombie here.
  const supervisorDead = Date.now() + 5000;
  while (isProcessAlive(registered.supervisorPid as number) && Date.now() < supervisorDead) await sleep(10);
  assert.ok(!isProcessAlive(registered.supervisorPid as number), 'the supervisor is dead');
  const exited = once(host.child, 'exit');
  process.kill(host.pid, 'SIGKILL');
  await exited;
  assert.deepEqual(pids.filter(isProcessAlive), pids, 'nobody collected the services');

  const report = await sweepStrays({ projectId, graceMs: 300 });
  assert.deepEqual(
    report.collected.map((p) => p.pid).sort(),
    [...pids].sort(),
    'every marked service process was found, the setsid grandchild included',
  );
  assert.ok(report.collected.every((p) => p.hostPid === host.pid));
  assert.equal(report.forced, true, 'the SIGTERM-ignoring service needed SIGKILL');
  assert.deepEqual(report.survivors, []);
  assert.deepEqual(await waitGone(pids, 6000), [], 'no stray survives the sweep');
  assert.deepEqual((await sweepStrays({ projectId, graceMs: 300 })).collected, [], 'a second sweep finds nothing');
});

test('the start-up sweep never touches a live host’s processes', async (t) => {
  const projectId = uniqueProjectId();
  const host = startHost(t, { projectId, graceMs: 300, services: ['loops', 'spawnsSetsidGrandchild'] });
  const pids = (await host.waitFor((l) => l.event === 'registered')).pids as number[];

  const report = await sweepStrays({ projectId, graceMs: 300 });
  assert.deepEqual(report.collected, []);
  await sleep(100);
  assert.deepEqual(pids.filter(isProcessAlive), pids);
});
