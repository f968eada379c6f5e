/**
 * A service that hides a grandchild in a child cgroup of its own (security finding 8): as root on cgroup
 * v1 a service may write the cgroup tree, so it makes `nest/deeper` inside its cgroup and moves a
 * `setsid env -i` grandchild (no group, no marker, SIGTERM ignored) there. A service's stop and the
 * supervisor after a host SIGKILL both kill the members of child cgroups and remove the directories
 * deepest first. cgroup v2: the same through `cgroup.kill` (skipped where no cgroup v2 tree is writable),
 * and the service's cgroup carries `cgroup.max.depth`, so it cannot nest deeper than the walk. The walk's
 * bounds are tested on a plain directory tree.
 *
 * Needs a host where the SDK may manage control groups; elsewhere each test is skipped with the reason.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import {
  type CgroupRef,
  MAX_CGROUP_DEPTH,
  MAX_CGROUP_DESCENDANTS,
  cgroupDescendants,
  cgroupMembers,
  cgroupSupport,
  createServiceCgroup,
  detectCgroupSupport,
  joinCgroupCommand,
  removeCgroup,
} from '@scienceevolve/supervisor/cgroup';
import { MARKER_ENV, processStartTime } from '@scienceevolve/supervisor/procfs';
import { collectGroup } from '@scienceevolve/supervisor/terminate';
import { SupervisedGroup } from '../../packages/sdk/src/processes/processGroup.js';
import { cleanup, firstLine, tempDir, testMarker, uniqueProjectId, waitGone } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const fixtures = join(root, 'test/fixtures/supervisor');
const NESTS = join(fixtures, 'nestsGrandchildCgroup.cjs');
const support = cgroupSupport();
const skip =
  support.mechanism === 'process-group' ? `no control groups here (${support.detail}); the process group holds` : false;
const v2 = detectCgroupSupport('cgroup-v2');

/** Removes what a failing test left: the nested directories first, then the service's. */
function removeAfter(t: TestContext, ref: () => CgroupRef | undefined): void {
  t.after(() => {
    const r = ref();
    if (r !== undefined) removeCgroup(r);
  });
}

type Ready = { grandchild: number; nested: string[] };

test('stop: a grandchild moved into a child cgroup is killed and every directory removed', { skip }, async (t) => {
  const marker = testMarker('cgroup-nested');
  const group = new SupervisedGroup({ marker, graceMs: 300, cgroup: { name: 'nester' } });
  const pids: number[] = [];
  cleanup(t, () => pids);
  removeAfter(t, () => group.cgroup);
  await group.announce();
  const dirs = group.cgroup?.dirs ?? [];
  assert.ok(dirs.length > 0, 'the service runs in a cgroup');
  const child = group.spawn(process.execPath, [NESTS, ...dirs], {
    env: { PATH: process.env.PATH, [MARKER_ENV]: marker },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  assert.ok(child.pid !== undefined);
  pids.push(child.pid);
  const { grandchild, nested } = JSON.parse(await firstLine(child)) as Ready;
  pids.push(grandchild);
  assert.equal(readFileSync(`/proc/${grandchild}/environ`, 'latin1'), '', 'env -i left no variable');
  assert.equal(nested.length, dirs.length);
  for (const dir of nested) assert.ok(readFileSync(join(dir, 'cgroup.procs'), 'utf8').includes(String(grandchild)));
  assert.ok(cgroupMembers(group.cgroup!).includes(grandchild), 'members include the child cgroup');

  const result = await group.collect();
  assert.deepEqual(result.survivors, []);
  assert.deepEqual(await waitGone([child.pid, grandchild], 6000), [], 'leader and nested grandchild are gone');
  for (const dir of [...nested, ...dirs]) assert.equal(existsSync(dir), false, `${dir} removed`);
});

test('host SIGKILLed: the supervisor kills the nested grandchild and removes the child cgroups', {
  skip,
}, async (t) => {
  const logPath = join(tempDir(t), 'supervisor.log');
  const config = { projectId: uniqueProjectId(), logPath, graceMs: 300, service: 'nests' };
  const host = spawn(process.execPath, ['--import', 'tsx', join(fixtures, 'cgroupHost.ts'), JSON.stringify(config)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let ready: { supervisorPid: number; pids: number[]; dirs: string[] } | undefined;
  cleanup(t, () =>
    [host.pid ?? 0, ...(ready === undefined ? [] : [ready.supervisorPid, ...ready.pids])].filter((p) => p > 1),
  );
  removeAfter(t, () =>
    ready === undefined || ready.dirs.length === 0
      ? undefined
      : { mechanism: support.mechanism as CgroupRef['mechanism'], dirs: ready.dirs },
  );
  ready = JSON.parse(await firstLine(host)) as { supervisorPid: number; pids: number[]; dirs: string[] };
  assert.ok(ready.dirs.length > 0, 'the service runs in a cgroup');
  const grandchild = ready.pids[1] as number;
  const nested = ready.dirs.map((d) => join(d, 'nest', 'deeper'));
  for (const dir of nested) assert.ok(readFileSync(join(dir, 'cgroup.procs'), 'utf8').includes(String(grandchild)));
  host.kill('SIGKILL');
  assert.deepEqual(await waitGone(ready.pids, 10_000), [], 'leader and nested grandchild are gone');
  assert.deepEqual(await waitGone([ready.supervisorPid], 10_000), [], 'the supervisor exited');
  for (const dir of [...nested, ...ready.dirs]) assert.equal(existsSync(dir), false, `${dir} removed`);
});

test('cgroup v2: a nested grandchild is killed (cgroup.kill) and the tree removed; nesting is capped', {
  skip: v2.mechanism === 'cgroup-v2' ? false : `no writable cgroup v2 tree here (${v2.detail})`,
}, async (t) => {
  const marker = testMarker('cgroup-nested');
  const ref = createServiceCgroup(
    { hostPid: process.pid, hostStart: processStartTime(process.pid) ?? '0', invocation: 'inv-v2n', service: 'nester' },
    v2,
  );
  assert.ok(ref !== undefined && ref.mechanism === 'cgroup-v2');
  const pids: number[] = [];
  cleanup(t, () => pids);
  removeAfter(t, () => ref);
  assert.equal(readFileSync(join(ref.dirs[0]!, 'cgroup.max.depth'), 'utf8').trim(), String(MAX_CGROUP_DEPTH));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', [MARKER_ENV]: marker };
  const launch = joinCgroupCommand(ref, process.execPath, [NESTS, ...ref.dirs], env);
  const child = spawn(launch.file, launch.args, { env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  assert.ok(child.pid !== undefined);
  pids.push(child.pid);
  const { grandchild, nested } = JSON.parse(await firstLine(child)) as Ready;
  pids.push(grandchild);
  assert.ok(cgroupMembers(ref).includes(grandchild));
  const report = await collectGroup({ pgid: child.pid, marker, cgroup: ref, graceMs: 300 });
  assert.deepEqual(report.survivors, []);
  assert.deepEqual(report.cgroups, [ref.dirs[0]]);
  assert.deepEqual(await waitGone([child.pid, grandchild], 6000), []);
  for (const dir of [...nested, ...ref.dirs]) assert.equal(existsSync(dir), false, `${dir} removed`);
});

test('the walk is bounded: at most MAX_CGROUP_DEPTH levels and MAX_CGROUP_DESCENDANTS directories, deepest first', (t) => {
  const base = tempDir(t);
  let deep = base;
  for (let i = 0; i < MAX_CGROUP_DEPTH + 4; i++) deep = join(deep, `d${i}`);
  mkdirSync(deep, { recursive: true });
  const walked = cgroupDescendants(base);
  assert.equal(walked.truncated, true);
  assert.equal(walked.dirs.length, MAX_CGROUP_DEPTH);
  assert.equal(walked.dirs[0]?.split('/').length, base.split('/').length + MAX_CGROUP_DEPTH, 'deepest first');

  const wide = join(base, 'wide');
  for (let i = 0; i < MAX_CGROUP_DESCENDANTS + 10; i++) mkdirSync(join(wide, `w${i}`), { recursive: true });
  const broad = cgroupDescendants(wide);
  assert.equal(broad.truncated, true);
  assert.equal(broad.dirs.length, MAX_CGROUP_DESCENDANTS);
  assert.deepEqual(cgroupDescendants(join(wide, 'w0')), { dirs: [], truncated: false });
});

test('a member deeper than the walk is still found (through /proc/<pid>/cgroup), and its directories reported left', {
  skip,
}, async (t) => {
  const ref = createServiceCgroup({
    hostPid: process.pid,
    hostStart: processStartTime(process.pid) ?? '0',
    invocation: 'inv-deep',
    service: 'deep',
  });
  assert.ok(ref !== undefined);
  const chains = ref.dirs.map((dir) => {
    const chain: string[] = [];
    let at = dir;
    for (let i = 0; i < MAX_CGROUP_DEPTH + 3; i++) {
      at = join(at, `n${i}`);
      chain.push(at);
    }
    return chain;
  });
  t.after(() => {
    for (const chain of chains) for (const dir of [...chain].reverse()) removeCgroupDir(dir);
    removeCgroup(ref);
  });
  for (const chain of chains) for (const dir of chain) mkdirSync(dir);
  const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore', detached: true });
  assert.ok(sleeper.pid !== undefined);
  const pid = sleeper.pid;
  cleanup(t, () => [pid]);
  for (const chain of chains) writeFileSync(join(chain.at(-1)!, 'cgroup.procs'), String(pid));
  assert.equal(cgroupDescendants(ref.dirs[0]!).truncated, true, 'deeper than the walk');
  assert.ok(cgroupMembers(ref).includes(pid), 'found through /proc');
  const report = await collectGroup({ pgid: pid, marker: testMarker('cgroup-nested'), cgroup: ref, graceMs: 300 });
  assert.deepEqual(report.survivors, []);
  assert.deepEqual(await waitGone([pid], 6000), []);
  assert.deepEqual(report.cgroupsLeft, [ref.dirs[0]], 'the directories past the walk stay, and say so');
});

function removeCgroupDir(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // already gone
  }
}
