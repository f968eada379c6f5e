/**
 * MCP tasks survive the host (SPEC §7, §10.3): a remote task server of each era (tasksV1 or tasksV2 behind
 * Streamable HTTP, in this test's process) runs a 6 s task; the host is SIGKILLed while the task runs; `resume` re-attaches
 * to the journaled task and the run finishes with the task's result — the tool ran once. And a run
 * cancelled by SIGINT sends `tasks/cancel` for its open task (the server records it). The built CLI in
 * child processes; every process proven gone.
 *
 * Timeouts are generous (120 s): two CLI processes, a supervisor and a 6 s task on a loaded machine.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runEventsPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { assertGone } from '../fixtures/store/children.js';
import { startRemoteTasks } from '../fixtures/tasks/remoteTasks.js';
import { assertNothingLeft, type EngineSandbox, sandbox } from '../sdk/engine/helpers.js';

function events(path: string): RunEvent[] {
  try {
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as RunEvent);
  } catch {
    return [];
  }
}

/** Polls the run's journal (15 s) until it holds a `tool.task_accepted`. */
async function acceptedTask(box: EngineSandbox, stderr: () => string): Promise<{ runId: string; taskId: string }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const runId = /run (run-\S+) started/.exec(stderr())?.[1];
    if (runId !== undefined) {
      const accepted = events(runEventsPath(new ProjectPaths(box.dataDir, box.project), runId)).find(
        (e) => e.type === 'tool.task_accepted',
      );
      if (accepted !== undefined) return { runId, taskId: (accepted as { taskId: string }).taskId };
    }
    if (Date.now() > deadline) assert.fail(`no task was accepted: ${stderr()}`);
    await sleep(50);
  }
}

async function remoteProject(t: TestContext, ms: number, era: 'legacy' | 'modern' = 'legacy') {
  const box = await sandbox(t);
  const log = join(box.base, 'remote-tasks.log');
  writeFileSync(log, '');
  const remote = await startRemoteTasks(log, (fn) => t.after(fn), era);
  const workflow = join(box.base, 'workflow.json');
  const script = join(box.base, 'script.json');
  await writeFile(
    workflow,
    JSON.stringify({
      agents: { main: { harness: { type: 'scripted' }, mcpServers: [{ name: 'lab', url: remote.url }] } },
    }),
  );
  await writeFile(
    script,
    JSON.stringify({
      agents: { main: [{ call: 'lab__work', arguments: { ms, text: 'remote' } }, { final: 'got: {{0}}' }] },
    }),
  );
  const common = [
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    '--grace-ms',
    '300',
    '--forward-timeout-ms',
    '2000',
  ];
  const runArgs = ['run', ...common, '--workspace', box.workspace, '--workflow', workflow, '--script', script, 'long'];
  const runs = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('run '));
  return { box, log, common, runArgs, runs };
}

for (const era of ['legacy', 'modern'] as const) {
  test(`host SIGKILL while a remote task runs (${era}), then resume: the task result, the tool ran once`, {
    timeout: 120_000,
  }, async (t) => {
    const { box, common, runArgs, runs } = await remoteProject(t, 6000, era);
    const host = startCli(t, runArgs);
    const { runId, taskId } = await acceptedTask(box, host.stderr);
    process.kill(host.pid, 'SIGKILL');
    assert.equal(await host.exited, null);
    await assertGone(host.pid);

    const resumed = await runCliToEnd(t, ['resume', ...common, '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    const doc = resumed.json as { runs: Array<{ run: string; status: string; output: string }> };
    assert.equal(doc.runs.length, 1);
    assert.equal(doc.runs[0]!.run, runId);
    assert.equal(doc.runs[0]!.status, 'succeeded', resumed.stderr);
    assert.equal(doc.runs[0]!.output, 'got: worked remote');
    assert.deepEqual(runs(), ['run 6000'], 'the tool ran once');
    const after = events(runEventsPath(new ProjectPaths(box.dataDir, box.project), runId));
    const called = after.filter((e) => e.type === 'tool.called');
    assert.equal(called.length, 1);
    assert.equal((called[0] as { taskId?: string }).taskId, taskId, 'the resumed call re-attached to the task');
    await assertNothingLeft(box.project, after);
  });
}

test('SIGINT on a run with an open remote task sends tasks/cancel', { timeout: 120_000 }, async (t) => {
  const { box, log, runArgs } = await remoteProject(t, 30_000);
  const host = startCli(t, runArgs);
  const { runId, taskId } = await acceptedTask(box, host.stderr);
  host.child.kill('SIGINT');
  await host.exited;
  assert.ok(readFileSync(log, 'utf8').split('\n').includes(`cancelled ${taskId}`), readFileSync(log, 'utf8'));
  await assertNothingLeft(box.project, events(runEventsPath(new ProjectPaths(box.dataDir, box.project), runId)));
});
