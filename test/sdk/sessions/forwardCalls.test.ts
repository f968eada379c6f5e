/**
 * Forwarded calls: a call past its timeout is cancelled at the service and rejected `forward_timeout`; a
 * caller's abort is passed on; a service that exits mid-call rejects the pending call `service_exited`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSdkError } from '../../../packages/sdk/src/errors.js';
import { assertAllGone, fixtureSpec, startService, tempDir, waitFor } from './helpers.js';

function cancelLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

test("slowTool: past the call's timeout, forward_timeout, and the service hears notifications/cancelled", async (t) => {
  const cancelFile = join(tempDir(t), 'cancelled.txt');
  const spec = fixtureSpec(t, 'slowTool.cjs', { args: [cancelFile] });
  const { session } = await startService(t, spec);

  // A roomy timeout: on a loaded machine even a 10 ms call can take longer than 300 ms.
  const quick = await session.callTool('sleep', { ms: 10 }, { timeoutMs: 10_000 });
  assert.deepEqual(quick.content, [{ type: 'text', text: 'slept 10' }]);

  const started = Date.now();
  await assert.rejects(session.callTool('sleep', { ms: 5000 }, { timeoutMs: 300 }), (error) => {
    assert.ok(isSdkError(error));
    assert.equal(error.code, 'forward_timeout');
    assert.equal(error.data.timeoutMs, 300);
    assert.match(error.message, /did not answer tools\/call "sleep" within 300 ms/);
    return true;
  });
  assert.ok(Date.now() - started < 4000, 'answered at the timeout, not when the 5 s sleep ends');
  await waitFor(() => cancelLines(cancelFile).includes('cancelled 5000'));

  // Each call has its own timeout.
  await assert.rejects(session.callTool('sleep', { ms: 4000 }, { timeoutMs: 100 }), (error) => {
    assert.ok(isSdkError(error) && error.code === 'forward_timeout' && error.data.timeoutMs === 100);
    return true;
  });
  await waitFor(() => cancelLines(cancelFile).includes('cancelled 4000'));
  assert.equal(session.state, 'ready', 'a timed-out call does not end the service');
});

test("slowTool: a caller's abort rejects with its reason and is cancelled at the service", async (t) => {
  const cancelFile = join(tempDir(t), 'cancelled.txt');
  const spec = fixtureSpec(t, 'slowTool.cjs', { args: [cancelFile] });
  const { session } = await startService(t, spec);
  const controller = new AbortController();
  const call = session.callTool('sleep', { ms: 3000 }, { signal: controller.signal });
  setTimeout(() => controller.abort(new Error('user stopped it')), 100);
  await assert.rejects(call, /user stopped it/);
  await waitFor(() => cancelLines(cancelFile).includes('cancelled 3000'));
});

test('slowTool: a service that exits mid-call rejects the pending call with service_exited and its exit code', async (t) => {
  const spec = fixtureSpec(t, 'slowTool.cjs');
  const { session } = await startService(t, spec);
  const pending = session.callTool('sleep', { ms: 5000 });
  await assert.rejects(session.callTool('exitNow', {}), (error) => {
    assert.ok(isSdkError(error));
    assert.equal(error.code, 'service_exited');
    assert.equal(error.data.exitCode, 7);
    assert.match(error.message, /exited with code 7/);
    return true;
  });
  await assert.rejects(pending, (error) => isSdkError(error) && error.code === 'service_exited');
  await waitFor(() => session.state === 'exited');
  await assertAllGone([session.pid]);
});

test('a call after close is refused with service_exited', async (t) => {
  const spec = fixtureSpec(t, 'slowTool.cjs');
  const { session } = await startService(t, spec);
  // The pending call may be refused while close is still collecting: its handler is attached first.
  const pending = assert.rejects(
    session.callTool('sleep', { ms: 5000 }),
    (error) => isSdkError(error) && error.code === 'service_exited',
  );
  await session.close();
  await pending;
  await assert.rejects(session.readResource('fixture://readme'), (error) => {
    assert.ok(isSdkError(error) && error.code === 'service_exited');
    return true;
  });
});
