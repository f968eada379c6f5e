/**
 * MCP tasks through a run (SPEC §7): a task tool that works 5 s completes with a 2 s forwarding timeout,
 * on both eras — a 2025-11-25 project service on the v1 SDK's experimental tasks and a 2026-07-28 one on
 * the tasks extension — and its tool ran once. The built CLI in a child process; every process proven gone.
 *
 * Timeouts are generous (90 s a run): a supervisor, a Node service and a 5 s task on a loaded machine.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { agent } from '../fixtures/engine/workflows.js';
import { tasksV2Entry } from '../fixtures/tasks/tasksV2.mjs';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';

/** The task fixture of `era` as a workflow definition (its log is tasks.log in the workspace). */
function taskDefinition(era: 'legacy' | 'modern'): { entrypoint: string; files: Record<string, string> } {
  if (era === 'legacy') {
    return {
      entrypoint: 'server.cjs',
      files: { 'server.cjs': readFileSync(new URL('../fixtures/tasks/tasksV1.cjs', import.meta.url), 'utf8') },
    };
  }
  return {
    entrypoint: 'server.mjs',
    // The fixture travels with the definition: a sandboxed service cannot import from a checkout under /tmp.
    files: {
      'server.mjs': tasksV2Entry((name: string) => import.meta.resolve(name), './tasksV2.mjs'),
      'tasksV2.mjs': readFileSync(new URL('../fixtures/tasks/tasksV2.mjs', import.meta.url), 'utf8'),
    },
  };
}

for (const era of ['legacy', 'modern'] as const) {
  test(`run (${era}): a 5 s task tool completes with --forward-timeout-ms 2000`, { timeout: 90_000 }, async (t) => {
    const box = await sandbox(t);
    const workflow = join(box.base, 'workflow.json');
    const script = join(box.base, 'script.json');
    await writeFile(
      workflow,
      JSON.stringify({ agents: { main: agent([['lab', 'lab']]) }, mcpDefinitions: { lab: taskDefinition(era) } }),
    );
    await writeFile(
      script,
      JSON.stringify({
        agents: {
          main: [{ call: 'lab__work', arguments: { ms: 5000, text: 'five seconds' } }, { final: 'got: {{0}}' }],
        },
      }),
    );
    const run = await runCliToEnd(t, [
      'run',
      '--data-dir',
      box.dataDir,
      '--project',
      box.project,
      '--workspace',
      box.workspace,
      '--workflow',
      workflow,
      '--script',
      script,
      '--grace-ms',
      '300',
      '--forward-timeout-ms',
      '2000',
      '--json',
      'run the long tool',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const doc = run.json as { status: string; output: string; events: RunEvent[] };
    assert.equal(doc.status, 'succeeded');
    assert.equal(doc.output, 'got: worked five seconds');
    const [called] = ofType(doc.events, 'tool.called');
    assert.ok(called?.ok, JSON.stringify(called));
    assert.ok(called.durationMs >= 5000, `the call waited for the task (${called.durationMs} ms)`);
    const accepted = doc.events.filter((e) => e.type === 'tool.task_accepted');
    assert.equal(accepted.length, 1, 'the task was journaled when accepted');
    const runs = readFileSync(join(box.workspace, 'tasks.log'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('run '));
    assert.deepEqual(runs, ['run 5000'], 'the tool ran once');
    await assertNothingLeft(box.project, doc.events);
  });
}
