// A real service (reportsProgress.cjs) works in steps and reports progress for the request's token: the
// surface forwards it to whoever asked (in process, the stdio face in both eras, the HTTP face), and each
// progress starts the forwarding timeout again, within the hard maximum. The call takes 8 steps of 100 ms
// against a 400 ms timeout: it finishes only because its progress keeps it alive (without asking for
// progress the same call times out). Each test proves the service process gone afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ERROR_META_KEY, createSurface, type SurfaceProgress } from '../../../packages/sdk/src/surface/surface.js';
import { assertAllGone, fixtureSpec, startService } from '../sessions/helpers.js';
import { faceClient } from '../faces/faceClients.js';

const STEPS = 8;
const WORK = { steps: STEPS, stepMs: 100 };

/** The progress values seen are 1, 2, … STEPS in order: the last one, sent just before the result, too. */
function assertSteps(values: number[]): void {
  assert.deepEqual(
    values,
    Array.from({ length: STEPS }, (_, i) => i + 1),
  );
}

function codeOf(result: CallToolResult): string | undefined {
  return (result._meta?.[ERROR_META_KEY] as { code?: string } | undefined)?.code;
}

test('progress is forwarded and keeps a long call alive; without it the call times out', {
  timeout: 20_000,
}, async (t) => {
  const { session } = await startService(t, fixtureSpec(t, 'reportsProgress.cjs'));
  const pid = session.pid;
  const surface = createSurface([session], { timeoutMs: 400 });

  const progress: SurfaceProgress[] = [];
  const result = await surface.callTool('reportsProgress__work', WORK, { onProgress: (p) => progress.push(p) });
  assert.deepEqual(result.content, [{ type: 'text', text: `done after ${STEPS} steps` }]);
  assertSteps(progress.map((p) => p.progress));
  assert.deepEqual(progress[0], { progress: 1, total: STEPS, message: `step 1 of ${STEPS}` });

  const silent = await surface.callTool('reportsProgress__work', WORK);
  assert.equal(silent.isError, true);
  assert.equal(codeOf(silent), 'forward_timeout');

  await session.close();
  await assertAllGone([pid]);
});

test('progress never keeps a call past the hard maximum', { timeout: 20_000 }, async (t) => {
  const { session } = await startService(t, fixtureSpec(t, 'reportsProgress.cjs'));
  const pid = session.pid;
  const surface = createSurface([session], { timeoutMs: 400, maxTotalTimeoutMs: 600 });
  const progress: SurfaceProgress[] = [];
  const result = await surface.callTool(
    'reportsProgress__work',
    { steps: 40, stepMs: 100 },
    { onProgress: (p) => progress.push(p) },
  );
  assert.equal(result.isError, true);
  assert.equal(codeOf(result), 'forward_timeout');
  // The surface's gate and the session both hold the maximum; whichever fires first says so.
  assert.match((result.content[0] as { text: string }).text, /did not answer .*"work".* maximum/);
  assert.ok(progress.length > 0 && progress.length < 40, 'progress came, the call was cut at the maximum');

  await session.close();
  await assertAllGone([pid]);
});

test('the hard maximum defaults to 10 × the timeout and may not be shorter than it', () => {
  assert.throws(() => createSurface([], { timeoutMs: 400, maxTotalTimeoutMs: 300 }), {
    code: 'usage',
    message: /maxTotalTimeoutMs \(300\) is shorter than timeoutMs \(400\)/,
  });
  assert.throws(() => createSurface([], { maxTotalTimeoutMs: 2 ** 31 }), { code: 'usage' });
});

for (const kind of ['stdio 2025-11-25', 'stdio 2026-07-28', 'http 2025-11-25', 'http 2026-07-28'] as const) {
  test(`the ${kind} face forwards progress to a client that asked for it`, { timeout: 20_000 }, async (t) => {
    const { session } = await startService(t, fixtureSpec(t, 'reportsProgress.cjs'));
    const pid = session.pid;
    const surface = createSurface([session], { timeoutMs: 400 });
    const client = await faceClient(t, surface, kind);
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const result = await client.callTool(
      { name: 'reportsProgress__work', arguments: WORK },
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true, timeout: 5_000 },
    );
    assert.deepEqual(result.content, [{ type: 'text', text: `done after ${STEPS} steps` }]);
    assertSteps(progress.map((p) => p.progress));
    assert.equal(progress[0]?.message, `step 1 of ${STEPS}`);

    // A client that did not ask gets no progress, and the bridge's timeout holds for it.
    const silent = await client.callTool({ name: 'reportsProgress__work', arguments: WORK });
    assert.equal(silent.isError, true);

    await session.close();
    await assertAllGone([pid]);
  });
}
