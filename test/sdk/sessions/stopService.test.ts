/**
 * Stopping a service leaves nothing behind: the group (SIGTERM, SIGKILL after the grace), grandchildren in
 * the group and those that left it with setsid (found by the marker), without touching a sibling service
 * of the same invocation. A ready service that dies is reported and collected on its own.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSdkError } from '../../../packages/sdk/src/errors.js';
import {
  assertAllGone,
  eventTypes,
  fixtureSpec,
  isGone,
  startService,
  states,
  tempDir,
  testMarker,
  waitFor,
} from './helpers.js';

interface Pids {
  leader: number;
  inGroup: number;
  setsid: number;
}

function readPids(file: string): Pids {
  return JSON.parse(readFileSync(file, 'utf8')) as Pids;
}

test('ignoresSigterm: SIGKILL after the grace; the leader is gone', async (t) => {
  const spec = fixtureSpec(t, 'ignoresSigterm.cjs', { graceMs: 250 });
  const { session, events } = await startService(t, spec);
  const started = Date.now();
  await session.close();
  assert.ok(Date.now() - started >= 240, 'the grace was given');
  await assertAllGone([session.pid], 0);
  const exited = events.find((e) => e.type === 'service.exited');
  assert.ok(exited?.type === 'service.exited');
  assert.equal(exited.forced, true);
  assert.equal(exited.signal, 'SIGKILL');
});

test('spawnsGrandchildren: the leader, the grandchild in its group and the setsid one are all gone after close', async (t) => {
  const dir = tempDir(t);
  const pidsFile = join(dir, 'pids.json');
  const spec = fixtureSpec(t, 'spawnsGrandchildren.cjs', { args: [pidsFile], graceMs: 250 });
  const { session, events } = await startService(t, spec);
  const pids = readPids(pidsFile);
  assert.equal(pids.leader, session.pid);
  assert.ok(!isGone(pids.inGroup) && !isGone(pids.setsid), 'both grandchildren run while the service does');

  await session.close();
  // close() resolved only after every process was gone: no polling needed, but the check polls anyway.
  await assertAllGone([pids.leader, pids.inGroup, pids.setsid], 0);
  const exited = events.find((e) => e.type === 'service.exited');
  assert.ok(exited?.type === 'service.exited');
  assert.deepEqual(exited.swept, [pids.setsid]);
  assert.equal(exited.forced, true, 'the setsid grandchild ignores SIGTERM');
  assert.deepEqual(exited.survivors, []);
});

test('a sweep never takes a sibling service of the same invocation (same marker)', async (t) => {
  const marker = testMarker(t);
  const dir = tempDir(t);
  const pidsA = join(dir, 'a.json');
  const pidsB = join(dir, 'b.json');
  const a = await startService(
    t,
    fixtureSpec(t, 'spawnsGrandchildren.cjs', { args: [pidsA], marker, serviceName: 'a' }),
  );
  const b = await startService(
    t,
    fixtureSpec(t, 'spawnsGrandchildren.cjs', { args: [pidsB], marker, serviceName: 'b' }),
  );
  const pa = readPids(pidsA);
  const pb = readPids(pidsB);

  await a.session.close();
  await assertAllGone([pa.leader, pa.inGroup, pa.setsid], 0);
  assert.ok(!isGone(pb.leader) && !isGone(pb.inGroup) && !isGone(pb.setsid), "b's processes are untouched");
  const echo = await b.session.callTool('echo', { text: 'b lives' });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'b lives' }]);

  await b.session.close();
  await assertAllGone([pb.leader, pb.inGroup, pb.setsid], 0);
});

test('a ready service that exits on its own: failed with service_exited, then collected with its grandchildren', async (t) => {
  const dir = tempDir(t);
  const pidsFile = join(dir, 'pids.json');
  const spec = fixtureSpec(t, 'spawnsGrandchildren.cjs', { args: [pidsFile], graceMs: 250 });
  const { session, events } = await startService(t, spec);
  const pids = readPids(pidsFile);

  process.kill(session.pid, 'SIGKILL');
  await waitFor(() => session.state === 'exited');
  await assertAllGone([pids.leader, pids.inGroup, pids.setsid], 0);
  assert.deepEqual(states(events).slice(3), ['ready', 'failed', 'stopping', 'exited']);
  assert.deepEqual(eventTypes(events), ['service.ready', 'service.failed', 'service.exited']);
  const exited = events.find((e) => e.type === 'service.exited');
  assert.ok(exited?.type === 'service.exited' && exited.expected === false && exited.signal === 'SIGKILL');
  assert.equal(session.failure?.code, 'service_exited');

  await assert.rejects(session.callTool('echo', { text: 'x' }), (error) => {
    assert.ok(isSdkError(error));
    assert.equal(error.code, 'service_exited');
    assert.match(error.message, /exited by SIGKILL/);
    return true;
  });
  await session.close(); // still fine after the service collected itself
});
