/**
 * The host dies (SIGKILL, so it cleans up nothing itself): its supervisor collects every service.
 * Deadlines are grace + 6 s: pid 1 on this machine kind reaps orphaned zombies only every ~2 s, and
 * `kill(pid, 0)` succeeds on a zombie. Timing goals live in bench/supervisorKill.ts, not here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isProcessAlive } from '@scienceevolve/supervisor';
import { exists, sleep, startHost, uniqueProjectId, waitGone } from './helpers.js';

test('host SIGKILLed after registering: every group, the setsid grandchild and an unmarked registered group are gone', async (t) => {
  const host = startHost(t, {
    projectId: uniqueProjectId(),
    graceMs: 300,
    services: ['loops', 'loops', 'spawnsSetsidGrandchild', 'unmarked'],
  });
  const registered = await host.waitFor((l) => l.event === 'registered');
  const pids = registered.pids as number[];
  assert.equal(pids.length, 5);
  assert.deepEqual(pids.filter(exists), pids, 'every service runs before the host is killed');

  process.kill(host.pid, 'SIGKILL');
  assert.deepEqual(await waitGone(pids, 6300), [], 'no service process survives the host');
  assert.deepEqual(await waitGone([registered.supervisorPid as number], 6000), [], 'the supervisor exits');
  assert.match(host.log(), /state collecting -> done/);
});

test('host SIGKILLed between spawn and register: the intended marker alone finds the services', async (t) => {
  const host = startHost(t, {
    projectId: uniqueProjectId(),
    graceMs: 300,
    services: ['loops', 'spawnsSetsidGrandchild'],
    pauseBeforeRegister: true,
  });
  const spawned = await host.waitFor((l) => l.event === 'spawned');
  const pids = spawned.pids as number[];
  assert.equal(pids.length, 3);
  assert.doesNotMatch(host.log(), /register group/, 'nothing was registered');

  process.kill(host.pid, 'SIGKILL');
  assert.deepEqual(await waitGone(pids, 6300), [], 'no service process survives the host');
  assert.match(host.log(), /0 group\(s\), 1 marker\(s\)/);
});

test('services that ignore SIGTERM are SIGKILLed after the grace', async (t) => {
  const host = startHost(t, {
    projectId: uniqueProjectId(),
    graceMs: 300,
    services: ['ignoresSigterm', 'ignoresSigterm', 'loops'],
  });
  const pids = (await host.waitFor((l) => l.event === 'registered')).pids as number[];

  process.kill(host.pid, 'SIGKILL');
  assert.deepEqual(await waitGone(pids, 6300), [], 'no service process survives the host');
  assert.match(host.log(), /grace of 300 ms over; SIGKILL/);
});

// Slow on purpose (~2 s of grace + up to ~2 s of zombie reaping): the default grace must hold.
test('the default grace is 2 s: a SIGTERM-ignoring service lives through it, then is SIGKILLed', {
  timeout: 20_000,
}, async (t) => {
  const host = startHost(t, { projectId: uniqueProjectId(), services: ['ignoresSigterm'] });
  const registered = await host.waitFor((l) => l.event === 'registered');
  const pids = registered.pids as number[];

  process.kill(host.pid, 'SIGKILL');
  const deadline = Date.now() + 5000;
  while (!/SIGTERM sent/.test(host.log()) && Date.now() < deadline) await sleep(10);
  await sleep(500);
  assert.ok(isProcessAlive(pids[0]!), 'the service outlives SIGTERM during the grace');
  assert.deepEqual(await waitGone(pids, 8000), [], 'no service process survives the host');
  assert.match(host.log(), /grace 2000 ms/);
  assert.match(host.log(), /grace of 2000 ms over; SIGKILL/);
});
