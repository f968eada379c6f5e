/**
 * The supervised-spawn path that services and the gateway share (`SupervisedGroup`): the marker is
 * announced before the spawn, the group registered right after it, collected by the one kill path (the
 * group and its setsid grandchild), and released only then. Each pid is proven gone (ESRCH).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { MARKER_ENV } from '@scienceevolve/supervisor/procfs';
import { SupervisedGroup } from '../../../packages/sdk/src/processes/processGroup.js';
import type { ProcessRegistry } from '../../../packages/sdk/src/processes/processRegistry.js';
import { testMarker, waitGone } from '../../supervisor/helpers.js';

const fixtures = new URL('../../fixtures/supervisor/', import.meta.url).pathname;

function recordingRegistry(calls: string[]): ProcessRegistry {
  return {
    intent: async () => {
      calls.push('intent');
    },
    register: (pgid) => calls.push(`register ${pgid}`),
    release: (pgid) => calls.push(`release ${pgid}`),
  };
}

test('announce, spawn, collect: registered in order, the group and its setsid grandchild gone, then released', async (t) => {
  const marker = testMarker('supervised-group-test');
  const calls: string[] = [];
  const group = new SupervisedGroup({ marker, registry: recordingRegistry(calls), graceMs: 2000 });
  await group.announce();
  const child = group.spawn(process.execPath, [join(fixtures, 'spawnsSetsidGrandchild.cjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { PATH: process.env.PATH, [MARKER_ENV]: marker },
  });
  const pid = child.pid!;
  const pids = [pid];
  t.after(async () => {
    for (const target of [-pid, ...pids]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone
      }
    }
    assert.deepEqual(await waitGone(pids, 6000), []);
  });
  assert.equal(group.pgid, pid, 'it leads its own group');
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  const grandchild = (JSON.parse(line) as { grandchild: number }).grandchild;
  pids.push(grandchild);
  assert.deepEqual(calls, ['intent', `register ${pid}`]);

  const result = await group.collect();
  assert.deepEqual(result, { forced: false, swept: [grandchild], survivors: [] });
  assert.deepEqual(calls, ['intent', `register ${pid}`, `release ${pid}`]);
  assert.deepEqual(await waitGone([pid, grandchild], 6000), []);
  assert.equal(await group.collect(), result, 'collect is idempotent');
  assert.equal(calls.length, 3, 'released once');
});

test('spawn refuses an environment without the marker, and a second spawn', async (t) => {
  const marker = testMarker('supervised-group-test');
  const group = new SupervisedGroup({ marker });
  for (const env of [{ PATH: process.env.PATH }, { PATH: process.env.PATH, [MARKER_ENV]: `${marker}x` }]) {
    assert.throws(
      () => group.spawn(process.execPath, [join(fixtures, 'loops.cjs')], { stdio: 'ignore', env }),
      /the environment must carry SCIENCEEVOLVE_MARKER=/,
    );
  }
  const child = group.spawn(process.execPath, [join(fixtures, 'loops.cjs')], {
    stdio: 'ignore',
    env: { PATH: process.env.PATH, [MARKER_ENV]: marker },
  });
  const pid = child.pid!;
  t.after(async () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
    assert.deepEqual(await waitGone([pid], 6000), []);
  });
  assert.throws(
    () =>
      group.spawn(process.execPath, [join(fixtures, 'loops.cjs')], {
        stdio: 'ignore',
        env: { PATH: process.env.PATH, [MARKER_ENV]: marker },
      }),
    /a supervised group spawns once/,
  );
  await group.collect();
  assert.deepEqual(await waitGone([pid], 6000), []);
});

test('collect before any spawn: nothing signalled, nothing released', async () => {
  const calls: string[] = [];
  const group = new SupervisedGroup({
    marker: testMarker('supervised-group-test'),
    registry: recordingRegistry(calls),
  });
  assert.deepEqual(await group.collect(), { forced: false, swept: [], survivors: [] });
  assert.deepEqual(calls, []);
});
