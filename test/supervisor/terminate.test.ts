/**
 * The one kill path (`@scienceevolve/supervisor/terminate`) with its two targets: one service's group and
 * what it spawned (a SIGTERM-ignoring process is SIGKILLed after the grace; a setsid grandchild is
 * collected; a sibling's is not), and a whole marker (every process carrying it, in any group; the
 * caller's own group is never signalled as a whole). Each test proves ESRCH for every pid it started.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { MARKER_ENV, processGroupOf, processStartTime } from '@scienceevolve/supervisor/procfs';
import {
  collectGroup,
  collectMarked,
  DEFAULT_GRACE_MS,
  groupTarget,
  terminate,
} from '@scienceevolve/supervisor/terminate';
import { type Started, startProcess, tempDir, testMarker, waitGone } from './helpers.js';

const fixtures = new URL('../fixtures/supervisor/', import.meta.url).pathname;

interface Fixture extends Started {
  /** The grandchild it reported, if any. */
  grandchild?: number;
}

/** Starts a supervisor fixture (detached unless told otherwise) carrying `marker`, and adopts its grandchild. */
async function startFixture(
  t: TestContext,
  name: string,
  options: { marker?: string; detached?: boolean } = {},
): Promise<Fixture> {
  const started = await startProcess(t, process.execPath, [join(fixtures, name)], {
    detached: options.detached ?? true,
    env:
      options.marker === undefined
        ? { PATH: process.env.PATH }
        : { PATH: process.env.PATH, [MARKER_ENV]: options.marker },
  });
  const grandchild = (JSON.parse(started.line) as { grandchild?: number }).grandchild;
  if (grandchild !== undefined) started.adopt(grandchild);
  return { ...started, ...(grandchild === undefined ? {} : { grandchild }) };
}

test('the one grace default is SPEC §5’s 2 s', () => {
  assert.equal(DEFAULT_GRACE_MS, 2000);
});

test('group target: a process that ignores SIGTERM is SIGKILLed after the grace', async (t) => {
  const marker = testMarker('terminate-test');
  const service = await startFixture(t, 'ignoresSigterm.cjs', { marker });
  const lines: string[] = [];
  const report = await collectGroup({ pgid: service.pid, marker, graceMs: 200, log: (l) => lines.push(l) });
  assert.equal(report.forced, true);
  assert.deepEqual(report.survivors, []);
  assert.deepEqual(report.groups, [service.pid]);
  assert.deepEqual(await service.exit, { code: null, signal: 'SIGKILL' }, 'SIGTERM was ignored; SIGKILL ended it');
  assert.ok(
    lines.some((l) => l.includes('grace of 200 ms over; SIGKILL')),
    lines.join('\n'),
  );
  assert.deepEqual(await waitGone([service.pid], 6000), []);
});

test('group target: a setsid grandchild of the service is collected with it', async (t) => {
  const marker = testMarker('terminate-test');
  const service = await startFixture(t, 'spawnsSetsidGrandchild.cjs', { marker });
  const grandchild = service.grandchild!;
  assert.equal(processGroupOf(grandchild), grandchild, 'the grandchild left the service’s group');
  const report = await collectGroup({ pgid: service.pid, marker, graceMs: 2000 });
  assert.equal(report.forced, false, 'both honour SIGTERM');
  assert.deepEqual(report.pids, [grandchild]);
  assert.deepEqual(report.survivors, []);
  assert.deepEqual(await service.exit, { code: null, signal: 'SIGTERM' });
  assert.deepEqual(await waitGone([service.pid, grandchild], 6000), []);
});

test('group target: a sibling service of the same marker and its setsid grandchild are left alone', async (t) => {
  const marker = testMarker('terminate-test');
  const stopped = await startFixture(t, 'spawnsSetsidGrandchild.cjs', { marker });
  const sibling = await startFixture(t, 'spawnsSetsidGrandchild.cjs', { marker });
  const report = await collectGroup({
    pgid: stopped.pid,
    marker,
    siblings: () => [stopped.pid, sibling.pid],
    graceMs: 2000,
  });
  assert.deepEqual(report.pids, [stopped.grandchild]);
  assert.deepEqual(await waitGone([stopped.pid, stopped.grandchild!], 6000), []);
  for (const pid of [sibling.pid, sibling.grandchild!]) {
    assert.doesNotThrow(() => process.kill(pid, 0), `sibling process ${pid} still runs`);
  }
});

test('group target refuses groups that are never meant (a table of bad pgids)', () => {
  for (const pgid of [0, 1, -1, -42, 1.5, Number.NaN]) {
    assert.throws(() => groupTarget({ pgid }), /refusing to signal process group/, String(pgid));
  }
});

test('marker target: every process carrying the marker, in any group, and a registered unmarked group', async (t) => {
  const marker = testMarker('terminate-test');
  const first = await startFixture(t, 'spawnsSetsidGrandchild.cjs', { marker });
  const second = await startFixture(t, 'ignoresSigterm.cjs', { marker });
  // Registered by a host, but carrying no marker (it cleared its environment): found by its leader's start time.
  const unmarked = await startFixture(t, 'loops.cjs');
  const other = await startFixture(t, 'loops.cjs', { marker: testMarker('terminate-test') });
  const report = await collectMarked({
    matches: (m) => m === marker,
    groups: [{ pgid: unmarked.pid, marker, leaderStart: processStartTime(unmarked.pid) }],
    graceMs: 200,
  });
  assert.equal(report.forced, true, 'ignoresSigterm needed SIGKILL');
  assert.deepEqual(report.survivors, []);
  assert.deepEqual(
    [...report.groups].sort((a, b) => a - b),
    [first.pid, first.grandchild!, second.pid, unmarked.pid].sort((a, b) => a - b),
  );
  assert.deepEqual(
    report.found.map((p) => p.pid).sort((a, b) => a - b),
    [first.pid, first.grandchild!, second.pid].sort((a, b) => a - b),
  );
  assert.deepEqual(await waitGone([first.pid, first.grandchild!, second.pid, unmarked.pid], 6000), []);
  assert.doesNotThrow(() => process.kill(other.pid, 0), 'another marker’s process still runs');
});

test('marker target: a marked process in the caller’s own group is signalled alone, never the group', async (t) => {
  const marker = testMarker('terminate-test');
  const inOwnGroup = await startFixture(t, 'loops.cjs', { marker, detached: false });
  assert.equal(processGroupOf(inOwnGroup.pid), processGroupOf(process.pid));
  const report = await collectMarked({ matches: (m) => m === marker, graceMs: 2000 });
  assert.deepEqual(report.groups, []);
  assert.deepEqual(report.pids, [inOwnGroup.pid]);
  assert.deepEqual(await inOwnGroup.exit, { code: null, signal: 'SIGTERM' });
  assert.deepEqual(await waitGone([inOwnGroup.pid], 6000), []);
});

test('marker target: a process that appears during the stop (forked on SIGTERM, setsid) is taken too', async (t) => {
  const marker = testMarker('terminate-test');
  const pidFile = join(tempDir(t), 'late.pid');
  const parent = await startProcess(t, process.execPath, [join(fixtures, 'forksOnSigterm.cjs'), pidFile], {
    detached: true,
    env: { PATH: process.env.PATH, [MARKER_ENV]: marker },
  });
  t.after(() => {
    // The safety net for the late process, whatever the assertions below did.
    if (!existsSync(pidFile)) return;
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    } catch {
      // gone
    }
  });
  const report = await collectMarked({ matches: (m) => m === marker, graceMs: 2000 });
  const late = Number(readFileSync(pidFile, 'utf8'));
  parent.adopt(late);
  assert.ok(
    report.found.some((p) => p.pid === late),
    `the late process ${late} was found: ${JSON.stringify(report.found)}`,
  );
  assert.ok(report.groups.includes(late), 'its own group (it called setsid) was signalled');
  assert.deepEqual(report.survivors, []);
  assert.deepEqual(await waitGone([parent.pid, late], 6000), []);
});

test('a target that selects nothing: an empty report, nothing signalled', async () => {
  const report = await terminate({ select: () => ({}) }, { graceMs: 50 });
  assert.deepEqual(
    { ...report, durationMs: 0 },
    {
      found: [],
      groups: [],
      pids: [],
      forced: false,
      survivors: [],
      durationMs: 0,
      cgroups: [],
      cgroupMembers: [],
      cgroupsLeft: [],
    },
  );
});
