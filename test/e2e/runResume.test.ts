/**
 * The host SIGKILLed mid-run, then `scienceevolve resume`: the supervisor collects the dead host's services,
 * `status` shows the run interrupted, and resume restarts Main's invocation from its start with new
 * processes, finishes the run, and leaves no process of the project behind. Real services and two CLI
 * processes: about 10–20 s on 2 cores; each step has its own timeout.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runEventsPath, runRecordPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import type { StatusReport } from '../../packages/sdk/src/engine/runStatus.js';
import type { PublicEvent } from '../../packages/sdk/src/events/journal.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, markedProcesses, sandbox } from '../sdk/engine/helpers.js';

function events(path: string): PublicEvent[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as PublicEvent];
      } catch {
        return [];
      }
    });
}

test('SIGKILL the host mid-run, then resume finishes the run and nothing survives', async (t) => {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  const scriptPath = join(box.base, 'script.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      agents: { main: agent([['slow', 'slow']]), analyst: agent([['adds', 'adds']]) },
      mcpDefinitions: { slow: fixtureDefinition('sleepsOnCall.cjs'), adds: fixtureDefinition('addsNumbers.cjs') },
    }),
  );
  await writeFile(
    scriptPath,
    JSON.stringify({
      agents: {
        main: [
          { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'add 1 and 2' } },
          { call: 'slow__sleep', arguments: { ms: 1500 } },
          { final: 'sum={{0}} {{1}}' },
        ],
        analyst: [{ call: 'adds__add', arguments: { a: 1, b: 2 } }, { final: '{{0}}' }],
      },
    }),
  );
  const common = ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '500'];
  const host = startCli(t, [
    'run',
    ...common,
    '--workspace',
    box.workspace,
    '--workflow',
    workflowPath,
    '--script',
    scriptPath,
    'sleep',
  ]);
  await host.waitForStderr(/\[main\] calling slow__sleep/);
  process.kill(host.pid, 'SIGKILL');
  assert.equal(await host.exited, null);
  await assertGone(host.pid);

  const paths = new ProjectPaths(box.dataDir, box.project);
  const runId = /run (run-\S+) started/.exec(host.stderr())![1]!;
  const before = events(runEventsPath(paths, runId));
  const oldPids = before.filter((e) => e.type === 'service.ready').map((e) => e.pid as number);
  assert.equal(oldPids.length, 2, 'main and the analyst had started their services');
  // The dead host's supervisor collects its services (SIGTERM, 500 ms grace, SIGKILL).
  for (const pid of oldPids) await assertGone(pid, 10_000);

  const status = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--project', box.project, '--json']);
  assert.equal((status.json as StatusReport).projects[0]!.runs[0]!.status, 'interrupted');

  const resumed = await runCliToEnd(t, ['resume', ...common, '--json']);
  assert.equal(resumed.code, 0, resumed.stderr);
  const doc = resumed.json as { runs: Array<{ run: string; status: string; output: string }> };
  assert.deepEqual(doc.runs, [{ run: runId, status: 'succeeded', output: 'sum=3 slept 1500', error: null }]);
  assert.match(resumed.stderr, /\[main\] invocation inv-\S+ attempt 2 \(restarted\)/);

  const record = JSON.parse(readFileSync(runRecordPath(paths, runId), 'utf8')) as RunRecord;
  assert.equal(record.status, 'succeeded');
  assert.equal(record.resumes, 1);
  const main = record.invocations.find((i) => i.agent === 'main')!;
  assert.equal(main.restarted, true);
  assert.deepEqual(
    main.attempts.map((a) => [a.outcome, a.restarted]),
    [
      ['interrupted', false],
      ['succeeded', true],
    ],
  );
  // Main's restart delegated again: a second analyst invocation (its tool call ran twice).
  assert.deepEqual(
    record.invocations.filter((i) => i.agent === 'analyst').map((i) => i.state),
    ['succeeded', 'succeeded'],
  );
  const after = events(runEventsPath(paths, runId));
  assert.ok(after.some((e) => e.type === 'run.resumed'));
  assert.equal(after.at(-1)!.type, 'run.finished');
  const newPids = after
    .slice(before.length)
    .filter((e) => e.type === 'service.ready')
    .map((e) => e.pid as number);
  assert.equal(newPids.length, 2);
  for (const pid of newPids) assert.ok(!oldPids.includes(pid), 'new processes');
  await assertNothingLeft(box.project, after);
  assert.deepEqual(markedProcesses(box.project), []);
});
