/**
 * Collection by control group (`@scienceevolve/supervisor/cgroup`, the SDK's `SupervisedGroup` with a
 * `cgroup`): a grandchild that left the service's group AND cleared its environment (`setsid env -i sleep`)
 * is collected by a service's stop and by the supervisor when the host is SIGKILLed; a bounded fork bomb
 * stops at `pids.max` and leaves nothing; the start-up sweep empties and removes a dead host's cgroups and
 * never touches a live host's; the cgroup directories are removed each time. The control: with
 * `collection: 'process-group'` the hidden grandchild survives (the test kills it itself).
 *
 * Needs a host where the SDK may manage control groups (root with cgroup v1 freezer+pids, or a delegated
 * cgroup v2 subtree); elsewhere each test is skipped with the reason. CI runs as root, so they run there.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import {
  type CgroupRef,
  cgroupMembers,
  cgroupSegment,
  cgroupSupport,
  createServiceCgroup,
  detectCgroupSupport,
  isCgroupRef,
  joinCgroupCommand,
  killCgroup,
  removeCgroup,
} from '@scienceevolve/supervisor/cgroup';
import { MARKER_ENV, processGroupOf, processStartTime } from '@scienceevolve/supervisor/procfs';
import { isHostMessage } from '@scienceevolve/supervisor/protocol';
import { collectGroup } from '@scienceevolve/supervisor/terminate';
import { SupervisedGroup } from '../../packages/sdk/src/processes/processGroup.js';
import { sweepStrays } from '../../packages/sdk/src/processes/strayProcesses.js';
import { cleanup, firstLine, exists, sleep, tempDir, testMarker, uniqueProjectId, waitGone } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const fixtures = join(root, 'test/fixtures/supervisor');
const support = cgroupSupport();
const skip =
  support.mechanism === 'process-group' ? `no control groups here (${support.detail}); the process group holds` : false;

/** Removes a cgroup the test made, if a failing test left it. */
function removeAfter(t: TestContext, group: { cgroup: ReturnType<typeof createServiceCgroup> }): void {
  t.after(() => {
    if (group.cgroup !== undefined) removeCgroup(group.cgroup);
  });
}

/** Starts the hiding service through a SupervisedGroup; resolves with the group, its leader and the hidden grandchild. */
async function startHider(t: TestContext, collection: 'auto' | 'process-group') {
  const marker = testMarker('cgroup-test');
  const group = new SupervisedGroup({ marker, graceMs: 300, cgroup: { name: 'hider', collection } });
  const pids: number[] = [];
  cleanup(t, () => pids);
  removeAfter(t, group);
  await group.announce();
  const child = group.spawn(process.execPath, [join(fixtures, 'clearsEnvDoubleFork.cjs')], {
    env: { PATH: process.env.PATH, [MARKER_ENV]: marker },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  assert.ok(child.pid !== undefined);
  pids.push(child.pid);
  const { grandchild } = JSON.parse(await firstLine(child)) as { grandchild: number };
  pids.push(grandchild);
  // It truly hides: another process group and session, and no marker (no variable at all).
  assert.notEqual(processGroupOf(grandchild), child.pid);
  assert.equal(readFileSync(`/proc/${grandchild}/environ`, 'latin1'), '', 'env -i left no variable');
  return { group, leader: child.pid, grandchild };
}

test('a setsid env -i grandchild is collected with its service cgroup, which is then removed', { skip }, async (t) => {
  const { group, leader, grandchild } = await startHider(t, 'auto');
  const dirs = group.cgroup?.dirs ?? [];
  assert.equal(dirs.length, support.mechanism === 'cgroup-v1' ? 2 : 1);
  for (const dir of dirs) assert.match(dir, /\/scienceevolve\/\d+-\d+\/[^/]+\/hider-\d+$/);
  assert.ok(group.cgroup && cgroupMembers(group.cgroup).includes(grandchild), 'the grandchild is in the cgroup');
  const result = await group.collect();
  assert.deepEqual(result.survivors, []);
  assert.equal(result.forced, true, 'the grandchild ignores SIGTERM: the freeze/SIGKILL step ended it');
  assert.deepEqual(await waitGone([leader, grandchild], 6000), [], 'leader and hidden grandchild are gone');
  for (const dir of dirs) assert.equal(existsSync(dir), false, `${dir} removed`);
});

test('control: with collection "process-group" the setsid env -i grandchild survives', { skip }, async (t) => {
  const { group, leader, grandchild } = await startHider(t, 'process-group');
  assert.equal(group.cgroup, undefined, 'no cgroup when forced to the process group');
  await group.collect();
  assert.deepEqual(await waitGone([leader], 6000), []);
  await sleep(300);
  assert.equal(exists(grandchild), true, 'nothing names the hidden grandchild: it escaped (the cleanup kills it)');
});

test('a bounded fork bomb stops at pids.max and its cgroup leaves nothing', { skip }, async (t) => {
  assert.ok(support.pidsLimit, 'this host sets pids.max');
  const marker = testMarker('cgroup-test');
  const group = new SupervisedGroup({ marker, graceMs: 300, cgroup: { name: 'bomb', pidsMax: 64 } });
  const seen = new Set<number>();
  cleanup(t, () => [...seen]);
  removeAfter(t, group);
  await group.announce();
  const child = group.spawn('/bin/sh', [join(fixtures, 'forkBomb.sh')], {
    env: { PATH: process.env.PATH, [MARKER_ENV]: marker },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  assert.ok(child.pid !== undefined && group.cgroup !== undefined);
  seen.add(child.pid);
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.notEqual(code, 0, 'the shell stopped: a fork failed');
  assert.equal(group.pidsLimitReached(), true, 'pids.events counts the refused fork');
  const members = cgroupMembers(group.cgroup);
  for (const pid of members) seen.add(pid);
  assert.ok(members.length > 0 && members.length < 64, `${members.length} sleepers, fewer than pids.max`);
  const dirs = group.cgroup.dirs;
  const result = await group.collect();
  assert.deepEqual(result.survivors, []);
  assert.deepEqual(await waitGone([...seen], 6000), [], 'every sleeper is gone');
  for (const dir of dirs) assert.equal(existsSync(dir), false, `${dir} removed`);
});

test('host SIGKILLed: its supervisor collects the hidden grandchild and removes the cgroups', { skip }, async (t) => {
  const logPath = join(tempDir(t), 'supervisor.log');
  const config = { projectId: uniqueProjectId(), logPath, graceMs: 300 };
  const host = spawn(process.execPath, ['--import', 'tsx', join(fixtures, 'cgroupHost.ts'), JSON.stringify(config)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let ready: { supervisorPid: number; pids: number[]; dirs: string[] } | undefined;
  cleanup(t, () =>
    [host.pid ?? 0, ...(ready === undefined ? [] : [ready.supervisorPid, ...ready.pids])].filter((p) => p > 1),
  );
  t.after(() => {
    if (ready !== undefined && ready.dirs.length > 0) {
      removeCgroup({ mechanism: support.mechanism as CgroupRef['mechanism'], dirs: ready.dirs });
    }
  });
  ready = JSON.parse(await firstLine(host)) as { supervisorPid: number; pids: number[]; dirs: string[] };
  assert.equal(ready.dirs.length > 0, true, 'the service runs in a cgroup');
  const grandchild = ready.pids[1] as number;
  assert.equal(readFileSync(`/proc/${grandchild}/environ`, 'latin1'), '', 'the grandchild carries no marker');
  host.kill('SIGKILL');
  assert.deepEqual(await waitGone(ready.pids, 10_000), [], 'leader and hidden grandchild are gone');
  assert.deepEqual(await waitGone([ready.supervisorPid], 10_000), [], 'the supervisor exited');
  for (const dir of ready.dirs) assert.equal(existsSync(dir), false, `${dir} removed`);
  // The host's own directory went with its last service.
  const hostDir = ready.dirs[0]?.split('/').slice(0, -2).join('/') ?? '';
  assert.equal(existsSync(hostDir), false, `${hostDir} removed`);
});

test('start-up sweep: a dead host’s cgroup is emptied and removed; a live host’s is not touched', {
  skip,
}, async (t) => {
  // A dead host: a process that has just exited (its pid with its start time names no live process).
  const gone = spawn('/bin/sh', ['-c', 'exit 0'], { stdio: 'ignore' });
  const goneStart = processStartTime(gone.pid as number) ?? '1';
  await once(gone, 'exit');
  const dead = createServiceCgroup({
    hostPid: gone.pid as number,
    hostStart: goneStart,
    invocation: 'inv-dead',
    service: 'left-1',
  });
  const live = createServiceCgroup({
    hostPid: process.pid,
    hostStart: processStartTime(process.pid) ?? '0',
    invocation: 'inv-live',
    service: 'kept-1',
  });
  assert.ok(dead !== undefined && live !== undefined);
  const pids: number[] = [];
  // Hooks run in order: the processes are killed and proven gone first, then the cgroups can be removed.
  cleanup(t, () => pids);
  t.after(() => {
    removeCgroup(dead);
    assert.equal(removeCgroup(live), true, 'the live host’s cgroup is removed once empty');
  });
  const start = (ref: typeof dead) => {
    const launch = joinCgroupCommand(ref, '/bin/sh', ['-c', 'echo ready; exec sleep 1000']);
    const child = spawn(launch.file, launch.args, { env: {}, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    assert.ok(child.pid !== undefined);
    pids.push(child.pid);
    return child;
  };
  const left = start(dead);
  const kept = start(live);
  await Promise.all([firstLine(left), firstLine(kept)]);
  assert.deepEqual(cgroupMembers(dead), [left.pid]);
  const report = await sweepStrays({ projectId: uniqueProjectId(), graceMs: 300 });
  // Other dead hosts' leftovers may be swept too; never a live host's.
  assert.ok(report.cgroups.includes(dead.dirs[0] as string), JSON.stringify(report.cgroups));
  assert.equal(report.cgroups.includes(live.dirs[0] as string), false);
  assert.deepEqual(await waitGone([left.pid as number], 6000), [], 'the dead host’s process is gone');
  for (const dir of dead.dirs) assert.equal(existsSync(dir), false, `${dir} removed`);
  assert.equal(exists(kept.pid as number), true, 'the live host’s process is untouched');
  assert.deepEqual(cgroupMembers(live), [kept.pid]);
});

test('only our own cgroup paths are accepted from the channel; anything else is refused', {
  skip: existsSync('/sys/fs/cgroup/freezer/cgroup.procs')
    ? false
    : 'no cgroup v1 freezer mount at /sys/fs/cgroup/freezer',
}, () => {
  const ours = '/sys/fs/cgroup/freezer/scienceevolve/123-456/inv-1/svc-1';
  const cases: Array<[unknown, boolean]> = [
    [{ mechanism: 'cgroup-v2', dirs: [ours] }, true],
    [{ mechanism: 'cgroup-v1', dirs: [ours, ours.replace('freezer', 'pids')] }, true],
    [{ mechanism: 'cgroup-v1', dirs: [ours] }, false], // v1 needs both hierarchies
    [{ mechanism: 'cgroup-v2', dirs: ['/sys/fs/cgroup/unified/user.slice'] }, false],
    [{ mechanism: 'cgroup-v2', dirs: ['/sys/fs/cgroup/unified/scienceevolve/123-456'] }, false], // a host dir, not a service's
    [{ mechanism: 'cgroup-v2', dirs: ['/sys/fs/cgroup/unified/scienceevolve/me/inv/svc'] }, false],
    [{ mechanism: 'cgroup-v2', dirs: ['/sys/fs/cgroup/unified/scienceevolve/1-2/../../../system.slice'] }, false],
    [{ mechanism: 'cgroup-v2', dirs: ['relative/scienceevolve/1-2/inv/svc'] }, false],
    // The right shape outside every cgroup mount: a look-alike the supervisor must never write into.
    [{ mechanism: 'cgroup-v2', dirs: ['/tmp/scienceevolve/123-456/inv-1/svc-1'] }, false],
    [{ mechanism: 'cgroup-v2', dirs: ['/sys/fs/cgroupx/scienceevolve/123-456/inv-1/svc-1'] }, false],
    [{ mechanism: 'cgroup-v3', dirs: [ours] }, false],
    [{ mechanism: 'cgroup-v2', dirs: [42] }, false],
    [null, false],
  ];
  for (const [value, accepted] of cases) assert.equal(isCgroupRef(value), accepted, JSON.stringify(value));
  const intent = {
    type: 'intent',
    id: 1,
    marker: 'se1:p:1:2:i',
    cgroup: { mechanism: 'cgroup-v2', dirs: ['/sys/fs/cgroup/x'] },
  };
  assert.equal(isHostMessage(intent), false, 'an intent naming a foreign cgroup is ignored as malformed');
  assert.equal(isHostMessage({ ...intent, cgroup: { mechanism: 'cgroup-v2', dirs: [ours] } }), true);
});

test('collecting a cgroup that is gone (or a directory that is no cgroup) creates no control file', (t) => {
  const dir = tempDir(t);
  const v1: CgroupRef = { mechanism: 'cgroup-v1', dirs: [join(dir, 'freezer'), join(dir, 'pids')] };
  const v2: CgroupRef = { mechanism: 'cgroup-v2', dirs: [join(dir, 'unified')] };
  for (const sub of ['freezer', 'pids', 'unified']) mkdirSync(join(dir, sub));
  const signalled: number[] = [];
  assert.deepEqual(
    killCgroup(v1, (pid) => signalled.push(pid)),
    [],
  );
  assert.deepEqual(
    killCgroup(v2, (pid) => signalled.push(pid)),
    [],
  );
  assert.deepEqual(signalled, []);
  for (const sub of ['freezer', 'pids', 'unified'])
    assert.deepEqual(readdirSync(join(dir, sub)), [], `${sub} stays empty`);
});

test('segments from ids are plain: no separator, no dot-dot, bounded', () => {
  for (const id of ['..', '.', 'a/b', 'x'.repeat(300), 'ü', 'inv-1']) {
    const segment = cgroupSegment(id);
    assert.match(segment, /^[A-Za-z0-9._-]{1,64}$/, id);
    assert.ok(segment !== '.' && segment !== '..', id);
  }
  assert.equal(cgroupSegment('inv-1'), 'inv-1');
  assert.notEqual(cgroupSegment('a/b'), cgroupSegment('a_b'), 'a changed id keeps a distinct name');
});

const v2 = detectCgroupSupport('cgroup-v2');

test('cgroup v2 (cgroup.kill): a setsid env -i grandchild is collected and the cgroup removed', {
  skip: v2.mechanism === 'cgroup-v2' ? false : `no writable cgroup v2 tree here (${v2.detail})`,
}, async (t) => {
  const marker = testMarker('cgroup-test');
  const ref = createServiceCgroup(
    { hostPid: process.pid, hostStart: processStartTime(process.pid) ?? '0', invocation: 'inv-v2', service: 'hider-1' },
    v2,
  );
  assert.ok(ref !== undefined && ref.mechanism === 'cgroup-v2');
  const pids: number[] = [];
  cleanup(t, () => pids);
  t.after(() => {
    removeCgroup(ref);
  });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', [MARKER_ENV]: marker };
  const launch = joinCgroupCommand(ref, process.execPath, [join(fixtures, 'clearsEnvDoubleFork.cjs')], env);
  const child = spawn(launch.file, launch.args, { env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  assert.ok(child.pid !== undefined);
  pids.push(child.pid);
  const { grandchild } = JSON.parse(await firstLine(child)) as { grandchild: number };
  pids.push(grandchild);
  assert.deepEqual(cgroupMembers(ref).sort(), [child.pid, grandchild].sort());
  const report = await collectGroup({ pgid: child.pid, marker, cgroup: ref, graceMs: 300 });
  assert.deepEqual(report.survivors, []);
  assert.equal(report.forced, true, 'the grandchild ignores SIGTERM: cgroup.kill ended it');
  assert.deepEqual(report.cgroups, [ref.dirs[0]]);
  assert.deepEqual(await waitGone([child.pid, grandchild], 6000), [], 'leader and hidden grandchild are gone');
  assert.equal(existsSync(ref.dirs[0] as string), false, 'the cgroup is removed');
});

test('a member whose process group was signalled as a whole gets no second SIGTERM of its own', { skip }, async (t) => {
  const marker = testMarker('cgroup-test');
  const ref = createServiceCgroup({
    hostPid: process.pid,
    hostStart: processStartTime(process.pid) ?? '0',
    invocation: 'inv-once',
    service: 'once-1',
  });
  assert.ok(ref !== undefined);
  const pids: number[] = [];
  cleanup(t, () => pids);
  t.after(() => {
    removeCgroup(ref);
  });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', [MARKER_ENV]: marker };
  // A leader and its child in one group, both ignoring SIGTERM: the group's SIGTERM reaches both.
  const launch = joinCgroupCommand(ref, '/bin/sh', ['-c', 'trap "" TERM; sleep 30 & echo ready; wait'], env);
  const child = spawn(launch.file, launch.args, { env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  assert.ok(child.pid !== undefined);
  pids.push(child.pid);
  assert.equal(await firstLine(child), 'ready');
  const members = cgroupMembers(ref);
  assert.equal(members.length, 2, 'the leader and its sleep are in the cgroup');
  pids.push(...members);
  const lines: string[] = [];
  const report = await collectGroup({ pgid: child.pid, marker, cgroup: ref, graceMs: 200, log: (l) => lines.push(l) });
  assert.deepEqual(report.survivors, []);
  const sigterms = lines.filter((l) => l.includes('SIGTERM sent'));
  assert.ok(sigterms.length > 0, lines.join('\n'));
  for (const line of sigterms)
    assert.match(line, /and process\(es\) \[\]$/, `signalled again alone:\n${lines.join('\n')}`);
  assert.deepEqual(await waitGone(members, 6000), []);
});
