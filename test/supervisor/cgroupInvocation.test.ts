/**
 * Control groups through an invocation (the SDK's `probeServices`, as `services probe` runs it): the probe
 * says which mechanism holds (`collection`); a service whose grandchild hides (`setsid env -i sleep`) leaves
 * nothing once the invocation ends, and its cgroup directories are gone; a service that forks without
 * bound fails with the coded `pids_limit` instead of exhausting the machine, and leaves nothing either.
 *
 * Needs a host where the SDK may manage control groups (root here and in CI); elsewhere skipped with the
 * reason, except the probe's `collection` field, which is checked everywhere.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cgroupSupport } from '@scienceevolve/supervisor/cgroup';
import { probeServices } from '../../packages/sdk/src/engine/agentServices.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';
import { exists, waitGone } from './helpers.js';

const support = cgroupSupport();
const skip =
  support.mechanism === 'process-group' ? `no control groups here (${support.detail}); the process group holds` : false;

const workflow = {
  agents: { main: agent([['hider', 'hider']]), bomb: agent([['bomb', 'bomb']]) },
  // Opted out of the sandbox: the tests read the grandchildren's host pids (and their /proc) from a file the
  // hider writes, which a sandboxed service could only report as pids of its own pid namespace.
  mcpDefinitions: {
    hider: { ...fixtureDefinition('clearsEnvDoubleFork.cjs'), args: ['hider-pids.json'], sandbox: false },
    bomb: { ...fixtureDefinition('forkBomb.cjs'), sandbox: false },
  },
};

/** Every service cgroup directory of this process's host directory, in every hierarchy. */
function hostCgroupDirs(): string[] {
  const dirs: string[] = [];
  for (const base of support.bases) {
    const scienceevolve = join(base, 'scienceevolve');
    if (!existsSync(scienceevolve)) continue;
    for (const host of readdirSync(scienceevolve)) {
      if (host.startsWith(`${process.pid}-`)) dirs.push(join(scienceevolve, host));
    }
  }
  return dirs;
}

test('the probe names the mechanism that holds here', async (t) => {
  const box = await sandbox(t);
  const probed = await probeServices({
    dataDir: box.dataDir,
    project: box.project,
    workspace: box.workspace,
    workflow,
    agent: 'main',
    graceMs: 300,
    collection: 'process-group',
  });
  let closed = false;
  t.after(async () => {
    if (!closed) await probed.close();
  });
  assert.equal(probed.report.collection, 'process-group', 'forced');
  const { grandchild } = JSON.parse(readFileSync(join(box.workspace, 'hider-pids.json'), 'utf8')) as {
    grandchild: number;
  };
  t.after(async () => {
    try {
      process.kill(grandchild, 'SIGKILL');
    } catch {
      // gone
    }
    assert.deepEqual(await waitGone([grandchild], 6000), [], 'the escaped grandchild is killed by the test');
  });
  await probed.close();
  closed = true;
  // The control, through an invocation: nothing names it without a cgroup.
  assert.equal(exists(grandchild), true, 'with process-group collection the hidden grandchild escapes');
});

test('an invocation’s end collects a setsid env -i grandchild and removes the cgroups', { skip }, async (t) => {
  const box = await sandbox(t);
  const probed = await probeServices({
    dataDir: box.dataDir,
    project: box.project,
    workspace: box.workspace,
    workflow,
    agent: 'main',
    graceMs: 300,
  });
  let closed = false;
  t.after(async () => {
    if (!closed) await probed.close();
  });
  assert.equal(probed.report.collection, support.mechanism);
  assert.equal(probed.ok, true, JSON.stringify(probed.report.services));
  const pids = JSON.parse(readFileSync(join(box.workspace, 'hider-pids.json'), 'utf8')) as {
    leader: number;
    grandchild: number;
  };
  t.after(async () => {
    for (const pid of [pids.leader, pids.grandchild]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  assert.equal(readFileSync(`/proc/${pids.grandchild}/environ`, 'latin1'), '', 'the grandchild carries no marker');
  await probed.close();
  closed = true;
  assert.deepEqual(await waitGone([pids.leader, pids.grandchild], 6000), [], '0 processes left');
  await assertNothingLeft(box.project, []);
  assert.deepEqual(hostCgroupDirs(), [], 'the host’s cgroup directories are removed');
});

test('a fork bomb becomes the coded failure pids_limit of its service, with 0 processes left', { skip }, async (t) => {
  const box = await sandbox(t);
  const probed = await probeServices({
    dataDir: box.dataDir,
    project: box.project,
    workspace: box.workspace,
    workflow,
    agent: 'bomb',
    graceMs: 300,
    pidsMax: 64,
  });
  t.after(() => probed.close());
  assert.equal(probed.ok, false);
  const [bomb] = probed.report.services;
  assert.equal(bomb?.state, 'failed');
  assert.equal(bomb?.error?.code, 'pids_limit', bomb?.error?.message);
  assert.match(bomb?.error?.message ?? '', /pids\.max 64/);
  await probed.close();
  await assertNothingLeft(box.project, []);
  assert.deepEqual(hostCgroupDirs(), [], 'the host’s cgroup directories are removed');
});

test('pidsMax and collection are checked before anything starts', async (t) => {
  const box = await sandbox(t);
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ pidsMax: 0 }, /pidsMax must be a whole number from 8/],
    [{ pidsMax: 1.5 }, /pidsMax must be a whole number/],
    [{ pidsMax: 5_000_000 }, /pidsMax must be a whole number/],
    [{ collection: 'cgroup' }, /collection must be "auto" or "process-group"/],
  ];
  for (const [options, message] of cases) {
    await assert.rejects(
      probeServices({
        dataDir: box.dataDir,
        project: box.project,
        workspace: box.workspace,
        workflow,
        agent: 'main',
        ...options,
      }),
      (error: { code?: string; message?: string }) => error.code === 'usage' && message.test(error.message ?? ''),
    );
  }
  assert.equal(existsSync(join(box.workspace, 'hider-pids.json')), false, 'no service was started');
});
