/**
 * MCP tasks on a service session, both eras (SPEC §7): a task-capable tool that runs longer than the
 * forwarding timeout completes through the surface (the task is polled, not cut), progress keeps flowing,
 * a failed task is `task_failed`, the task deadline is `task_deadline` with `tasks/cancel` sent, a caller's
 * abort sends `tasks/cancel`, an unknown task on re-attach is `task_unknown`. Real fixture services:
 * test/fixtures/tasks/tasksV1.cjs (v1 SDK experimental tasks) and tasksV2.mjs (2026-07-28, ext-tasks).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import type { StdioServiceSpec } from '../../../packages/sdk/src/sessions/stdioLaunch.js';
import { tasksV2Entry } from '../../fixtures/tasks/tasksV2.mjs';
import { assertAllGone, fixtureSpec, startService, tempDir, waitFor } from './helpers.js';

const TASKS_V1 = new URL('../../fixtures/tasks/tasksV1.cjs', import.meta.url).pathname;

/** A spec of the task fixture of `era`, logging to a fresh file. */
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

function lines(log: string): string[] {
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

function textOf(result: { content?: unknown }): string {
  const block = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return block?.type === 'text' ? (block.text ?? '') : '';
}

for (const era of ['legacy', 'modern'] as const) {
  test(`${era}: a 1.5 s task completes through a surface whose forwarding timeout is 500 ms`, async (t) => {
    const { spec, log } = taskSpec(t, era);
    const { session } = await startService(t, spec);
    const surface = createSurface([session], { timeoutMs: 500 });
    const accepted: unknown[] = [];
    const progress: number[] = [];
    const result = await surface.callTool(
      'lab__work',
      { ms: 1500, text: 'done' },
      {
        onProgress: (p) => progress.push(p.progress),
        task: { onAccepted: (task) => void accepted.push(task) },
      },
    );
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal(textOf(result), 'worked done');
    assert.equal(accepted.length, 1, readFileSync(log, 'utf8'));
    assert.equal((accepted[0] as { era: string }).era, era);
    assert.equal((accepted[0] as { service: string }).service, 'lab');
    assert.deepEqual(
      lines(log).filter((l) => l.startsWith('run')),
      ['run 1500'],
    );
    if (era === 'legacy') assert.ok(progress.length >= 2, `progress kept flowing: ${progress}`);

    const failed = await surface.callTool('lab__fail_work', { ms: 300 });
    assert.equal(failed.isError, true);
    assert.match(textOf(failed), /failed as task/);
    assert.equal((failed._meta?.['scienceevolve/error'] as { code?: string } | undefined)?.code, 'task_failed');

    const deadline = await surface.callTool('lab__work', { ms: 5000 }, { task: { deadlineMs: 400 } });
    assert.equal((deadline._meta?.['scienceevolve/error'] as { code?: string } | undefined)?.code, 'task_deadline');
    assert.ok(
      lines(log).some((l) => l.startsWith('cancelled ')),
      'the task past its deadline was cancelled',
    );

    const controller = new AbortController();
    const before = lines(log).filter((l) => l.startsWith('cancelled ')).length;
    const aborted = surface.callTool(
      'lab__work',
      { ms: 5000 },
      {
        signal: controller.signal,
        task: { onAccepted: () => void setTimeout(() => controller.abort(new Error('stop')), 300) },
      },
    );
    await assert.rejects(aborted, /stop/);
    await waitFor(() =>
      lines(log).filter((l) => l.startsWith('cancelled ')).length === before + 1 ? true : undefined,
    );

    await assert.rejects(
      session.resumeTask!('work', { taskId: 'no-such-task', era }, { timeoutMs: 2000 }),
      (error: { code?: string; message: string }) =>
        error.code === 'task_unknown' && /no-such-task/.test(error.message),
    );
    surface.close();
    await session.close();
    await assertAllGone([session.pid]);
  });
}
