/**
 * The process table (`@scienceevolve/supervisor/procfs`): liveness of a live process, a zombie and a dead
 * pid, agreeing with `kill(pid, 0)` where they should and not where a zombie makes them differ; the stat
 * reader; and the scan that finds a setsid grandchild by its marker.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  hasProcfs,
  isProcessAlive,
  MARKER_ENV,
  markerOf,
  ProcessTable,
  processGroupOf,
  processStartTime,
  readStat,
  scanMarkedProcesses,
} from '@scienceevolve/supervisor/procfs';
import { exists, startProcess as start, testMarker, waitGone } from './helpers.js';

const fixtures = new URL('../fixtures/supervisor/', import.meta.url).pathname;

test('this machine has /proc (the suite runs on Linux)', () => {
  assert.equal(hasProcfs(), true);
});

test('a live process: alive, its stat read, kill(pid, 0) agrees', async (t) => {
  const { pid } = await start(t, process.execPath, [join(fixtures, 'loops.cjs')], { detached: true });
  assert.equal(isProcessAlive(pid), true);
  const entry = readStat(pid);
  assert.ok(entry !== undefined);
  assert.equal(entry.pid, pid);
  assert.equal(entry.ppid, process.pid);
  assert.equal(entry.pgid, pid, 'detached: it leads its own group');
  assert.equal(entry.exited, false);
  assert.equal(processGroupOf(pid), pid);
  assert.match(processStartTime(pid) ?? '', /^\d+$/);
  assert.doesNotThrow(() => process.kill(pid, 0));
});

test('a zombie has exited: not alive, although kill(pid, 0) still succeeds on it', async (t) => {
  const { pid: parent, line } = await start(t, '/bin/sh', [join(fixtures, 'leavesZombie.sh')]);
  const zombie = Number(line);
  assert.ok(Number.isInteger(zombie) && zombie > 1, line);
  // The child exits after a second; its parent (by then `sleep 60`) never reaps it.
  const deadline = Date.now() + 10_000;
  while (readStat(zombie)?.state !== 'Z' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const entry = readStat(zombie);
  assert.equal(entry?.state, 'Z');
  assert.equal(entry?.exited, true);
  assert.equal(entry?.ppid, parent);
  assert.equal(isProcessAlive(zombie), false, 'a zombie counts as gone');
  assert.equal(exists(zombie), true, 'kill(pid, 0) alone would call it alive');
  assert.equal(
    new ProcessTable().marked(() => true).some((p) => p.pid === zombie),
    false,
    'scans skip zombies',
  );
  // Once its parent dies, init reaps it: then kill(pid, 0) says ESRCH too.
  process.kill(parent, 'SIGKILL');
  assert.deepEqual(await waitGone([parent, zombie], 6000), []);
  assert.equal(isProcessAlive(zombie), false);
});

test('a dead, reaped pid: no /proc entry, not alive, and kill(pid, 0) says ESRCH', async (t) => {
  const { child, pid } = await start(t, process.execPath, [join(fixtures, 'loops.cjs')]);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited; // Node has reaped it
  assert.equal(readStat(pid), undefined);
  assert.equal(isProcessAlive(pid), false);
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
});

test('pids that are not processes are not alive (a table of bad pids)', () => {
  for (const pid of [0, -1, -process.pid, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER]) {
    assert.equal(isProcessAlive(pid), false, String(pid));
    assert.equal(readStat(pid), undefined, String(pid));
  }
});

test('the scan finds a setsid grandchild by its marker, outside its parent’s group', async (t) => {
  const marker = testMarker('procfs-test');
  const service = await start(t, process.execPath, [join(fixtures, 'spawnsSetsidGrandchild.cjs')], {
    detached: true,
    env: { ...process.env, [MARKER_ENV]: marker },
  });
  const { pid, line } = service;
  const grandchild = (JSON.parse(line) as { grandchild: number }).grandchild;
  service.adopt(grandchild);
  assert.equal(markerOf(grandchild), marker);
  const found = scanMarkedProcesses((m) => m === marker).sort((a, b) => a.pid - b.pid);
  assert.deepEqual(
    found,
    [
      { pid, pgid: pid, marker },
      { pid: grandchild, pgid: grandchild, marker },
    ].sort((a, b) => a.pid - b.pid),
  );
  assert.notEqual(processGroupOf(grandchild), pid, 'kill(-pgid) would not reach it');
});

test('a marker is read only at the start of an environment entry', async (t) => {
  const marker = testMarker('procfs-test');
  const { pid } = await start(t, process.execPath, [join(fixtures, 'loops.cjs')], {
    env: { PATH: process.env.PATH, OTHER: `${MARKER_ENV}=${marker}` },
  });
  assert.equal(markerOf(pid), undefined);
  assert.deepEqual(
    scanMarkedProcesses((m) => m === marker),
    [],
  );
});
