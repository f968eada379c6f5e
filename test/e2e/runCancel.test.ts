/**
 * SIGINT on `scienceevolve run` and SIGTERM on `scienceevolve resume`, as an operator sends them: the call
 * in flight is cancelled, every process is collected before the CLI exits (exit 1), the run is marked
 * `cancelled`, and `resume` continues it from Main's checkpoint without repeating a recorded call. Real
 * services and four CLI processes: about 15–25 s on 2 cores; each step has its own timeout.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import { runEventsPath, runRecordPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { StatusReport } from '../../packages/sdk/src/engine/runStatus.js';
import { readEvents } from '../../packages/sdk/src/events/journal.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';

test('SIGINT on run and SIGTERM on resume cancel the run; the next resume finishes it without repeating calls', async (t) => {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  const scriptPath = join(box.base, 'script.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      agents: {
        main: agent([
          ['counts', 'counts'],
          ['slow', 'slow'],
        ]),
      },
      mcpDefinitions: { counts: fixtureDefinition('countsCalls.cjs'), slow: fixtureDefinition('sleepsOnCall.cjs') },
    }),
  );
  await writeFile(
    scriptPath,
    JSON.stringify({
      agents: {
        main: [
          { call: 'counts__count', arguments: { label: 'before' } },
          { call: 'slow__sleep', arguments: { ms: 4000 } },
          { call: 'counts__count', arguments: { label: 'after' } },
          { final: '{{0}} {{1}} {{2}}' },
        ],
      },
    }),
  );
  const common = ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '500'];
  const paths = new ProjectPaths(box.dataDir, box.project);

  // 1. SIGINT while Main's sleep is in flight.
  const host = startCli(t, [
    'run',
    ...common,
    '--workspace',
    box.workspace,
    '--workflow',
    workflowPath,
    '--script',
    scriptPath,
    '--json',
    'count around a sleep',
  ]);
  await host.waitForStderr(/\[main\] calling slow__sleep/);
  host.child.kill('SIGINT');
  assert.equal(await host.exited, 1, host.stderr());
  await assertGone(host.pid);
  assert.match(host.stderr(), /received SIGINT: cancelling the run/);
  assert.match(host.stderr(), /the run was cancelled; continue it with: scienceevolve resume/);
  const doc = JSON.parse(host.stdout()) as { run: string; status: string; output: string | null };
  assert.equal(doc.status, 'cancelled');
  assert.equal(doc.output, null);
  const first = await readEvents(runEventsPath(paths, doc.run));
  assert.equal(ofType(first, 'run.finished')[0]!.status, 'cancelled');
  await assertNothingLeft(box.project, first);
  assert.equal(readFileSync(join(box.workspace, 'calls.log'), 'utf8'), 'before\n');

  const status = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--project', box.project, '--json']);
  assert.equal((status.json as StatusReport).projects[0]!.runs[0]!.status, 'cancelled');

  // 2. SIGTERM on the resume while the (unrecorded, so repeated) sleep is in flight.
  const resuming = startCli(t, ['resume', ...common]);
  await resuming.waitForStderr(/\[main\] calling slow__sleep/);
  resuming.child.kill('SIGTERM');
  assert.equal(await resuming.exited, 1, resuming.stderr());
  await assertGone(resuming.pid);
  assert.match(resuming.stderr(), /received SIGTERM: cancelling the run/);
  assert.match(resuming.stdout(), new RegExp(`${doc.run}: cancelled`));
  const second = await readEvents(runEventsPath(paths, doc.run));
  await assertNothingLeft(box.project, second);
  assert.equal(readFileSync(join(box.workspace, 'calls.log'), 'utf8'), 'before\n', "'before' was recorded");

  // 3. The last resume finishes it.
  const resumed = await runCliToEnd(t, ['resume', ...common, '--json']);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual((resumed.json as { runs: unknown[] }).runs, [
    { run: doc.run, status: 'succeeded', output: 'before#1 slept 4000 after#1', error: null },
  ]);
  assert.equal(readFileSync(join(box.workspace, 'calls.log'), 'utf8'), 'before\nafter\n');
  const record = JSON.parse(readFileSync(runRecordPath(paths, doc.run), 'utf8')) as RunRecord;
  assert.equal(record.status, 'succeeded');
  assert.equal(record.resumes, 2);
  assert.deepEqual(
    record.invocations[0]!.attempts.map((a) => [a.outcome, a.fromCheckpoint]),
    [
      ['interrupted', false],
      ['interrupted', true],
      ['succeeded', true],
    ],
  );
  const all = await readEvents(runEventsPath(paths, doc.run));
  assert.deepEqual(
    ofType(all, 'run.resumed').map((e) => e.from),
    ['cancelled', 'cancelled'],
  );
  await assertNothingLeft(box.project, all);
  assert.deepEqual(markedProcesses(box.project), []);
});
