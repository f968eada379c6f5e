/**
 * MCP tasks through the faces (SPEC §7): a face client that does not declare tasks gets the result of a
 * 5 s task tool when it is ready, though the forwarding timeout is 2 s — over stdio and HTTP, on both
 * eras of the service (tasksV1.cjs, tasksV2.mjs) — and the face sends progress keep-alives while the
 * task is polled, so a client that resets its timeout on progress (here: 3 s) keeps waiting.
 *
 * Timeout 120 s: four 5 s calls and two service starts on a loaded machine.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { StdioServiceSpec } from '../../packages/sdk/src/sessions/stdioLaunch.js';
import { createSurface } from '../../packages/sdk/src/surface/surface.js';
import { tasksV2Entry } from '../fixtures/tasks/tasksV2.mjs';
import { faceClient } from '../sdk/faces/faceClients.js';
import { assertAllGone, fixtureSpec, startService, tempDir } from '../sdk/sessions/helpers.js';

const TASKS_V1 = new URL('../fixtures/tasks/tasksV1.cjs', import.meta.url).pathname;

function taskSpec(t: TestContext, era: 'legacy' | 'modern'): { spec: StdioServiceSpec; log: string } {
  const dir = tempDir(t);
  const log = join(dir, 'tasks.log');
  writeFileSync(log, '');
  const base = fixtureSpec(t, 'plain.cjs', { serviceName: 'lab', args: [log] });
  if (era === 'legacy') return { spec: { ...base, entrypointPath: TASKS_V1 }, log };
  const entry = join(dir, 'entry.mjs');
  writeFileSync(
    entry,
    tasksV2Entry((name: string) => import.meta.resolve(name)),
  );
  return { spec: { ...base, entrypointPath: entry }, log };
}

for (const era of ['legacy', 'modern'] as const) {
  test(`faces (${era} service): a 5 s task answers a client without tasks, with keep-alives`, {
    timeout: 120_000,
  }, async (t) => {
    const { spec, log } = taskSpec(t, era);
    const { session } = await startService(t, spec);
    const surface = createSurface([session], { timeoutMs: 2000 });
    for (const kind of ['stdio 2025-11-25', 'http 2026-07-28'] as const) {
      const client = await faceClient(t, surface, kind);
      const progress: number[] = [];
      const result = (await client.callTool(
        { name: 'lab__work', arguments: { ms: 5000, text: kind } },
        { timeout: 3000, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p.progress) },
      )) as { content: { type: string; text?: string }[]; isError?: boolean };
      assert.notEqual(result.isError, true, JSON.stringify(result));
      assert.equal(result.content[0]?.text, `worked ${kind}`);
      assert.ok(progress.length >= 3, `keep-alives reached the client: ${progress}`);
      for (let i = 1; i < progress.length; i++)
        assert.ok(progress[i]! > progress[i - 1]!, `progress rises: ${progress}`);
    }
    const runs = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('run '));
    assert.deepEqual(runs, ['run 5000', 'run 5000'], 'each call ran the tool once');
    surface.close();
    await session.close();
    await assertAllGone([session.pid]);
  });
}
