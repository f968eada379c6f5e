/**
 * The supervisor's own life: replaced with the host's whole state when it dies under a live host, an
 * orderly close, and a supervisor that cannot start. Deadlines leave ~2 s for pid 1 to reap zombies.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatMarker, isProcessAlive, MARKER_ENV, processStartTime } from '@scienceevolve/supervisor';
import { isSdkError } from '../../packages/sdk/src/errors.js';
import { type SupervisorEvent, SupervisorClient } from '../../packages/sdk/src/processes/supervisorClient.js';
import { sleep, startHost, tempDir, uniqueProjectId, waitGone } from './helpers.js';

const fixtures = new URL('../fixtures/supervisor/', import.meta.url).pathname;

test('supervisor SIGKILLed under a live host: a new one gets every group and marker, then the host dies too', async (t) => {
  const host = startHost(t, { projectId: uniqueProjectId(), graceMs: 300, services: ['loops', 'unmarked'] });
  const first = await host.waitFor((l) => l.event === 'registered');
  const oldSupervisor = first.supervisorPid as number;
  const firstPids = first.pids as number[];

  process.kill(oldSupervisor, 'SIGKILL');
  const ready = await host.waitFor((l) => l.supervisorEvent === 'ready' && l.generation === 2);
  assert.equal(ready.groups, 2, 'both live groups were re-registered');
  assert.equal(ready.markers, 1);
  assert.ok(firstPids.every(isProcessAlive), 'a dying supervisor leaves the live host’s services alone');
  assert.match(host.log(), new RegExp(`supervisor\\[${ready.pid}\\] register group ${firstPids[1]} `));

  // A further service: its intent resolves only on the new supervisor.
  host.command({ spawn: ['loops'] });
  const second = await host.waitFor((l) => l.event === 'registered' && l.supervisorPid === ready.pid);
  const pids = second.pids as number[];
  assert.equal(pids.length, 3);

  process.kill(host.pid, 'SIGKILL');
  assert.deepEqual(await waitGone(pids, 6300), [], 'no service process survives, the unmarked registered one included');
  assert.deepEqual(await waitGone([ready.pid as number], 6000), [], 'the new supervisor exits');
});

function startLoop(t: import('node:test').TestContext, marker: string): number {
  const child = spawn(process.execPath, [join(fixtures, 'loops.cjs')], {
    detached: true,
    stdio: 'ignore',
    env: { PATH: process.env.PATH, [MARKER_ENV]: marker },
  });
  const pid = child.pid!;
  t.after(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  child.unref();
  return pid;
}

test('close(): what the host released stays alone; what is still registered is collected; intent then fails', async (t) => {
  const events: SupervisorEvent[] = [];
  const client = await SupervisorClient.start({
    logPath: join(tempDir(t), 'supervisor.log'),
    graceMs: 300,
    onEvent: (event) => events.push(event),
  });
  const supervisorPid = client.pid!;
  t.after(() => client.close());
  const marker = (invocationId: string) =>
    formatMarker({
      projectId: uniqueProjectId(),
      hostPid: process.pid,
      hostStart: processStartTime(process.pid)!,
      invocationId,
    });

  const released = marker('released');
  await client.intent(released);
  const releasedPid = startLoop(t, released);
  client.register(releasedPid, released);
  const kept = marker('kept');
  await client.intent(kept);
  const keptPid = startLoop(t, kept);
  client.register(keptPid, kept);
  await sleep(100);

  client.release(releasedPid);
  client.releaseMarker(released);
  await client.close();
  assert.equal(client.state, 'closed');
  assert.deepEqual(await waitGone([supervisorPid], 6000), [], 'the supervisor exits after close');
  assert.ok(isProcessAlive(releasedPid), 'a released group is not the supervisor’s any more');
  assert.deepEqual(await waitGone([keptPid], 6000), [], 'a group still registered at close is collected');
  assert.deepEqual(
    events.map((e) => e.type),
    ['started', 'ready', 'closed'],
  );
  await assert.rejects(client.intent(kept), (error) => isSdkError(error) && error.code === 'supervisor_failed');
});

test('a supervisor that dies at once: start rejects with supervisor_failed naming the log', async (t) => {
  const logPath = join(tempDir(t), 'supervisor.log');
  const events: SupervisorEvent[] = [];
  await assert.rejects(
    SupervisorClient.start({
      logPath,
      entry: join(fixtures, 'exitsAtOnce.cjs'),
      maxRestarts: 2,
      onEvent: (event) => events.push(event),
    }),
    (error) => isSdkError(error) && error.code === 'supervisor_failed' && error.message.includes(logPath),
  );
  assert.equal(events.filter((e) => e.type === 'started').length, 3, 'the first start and two restarts');
  assert.equal(events.at(-1)?.type, 'failed');
});
