/**
 * Cancelling a run through the API leaves it `interrupted` (services collected, nothing reported done), and
 * `resumeRuns` continues it exactly once even when two resumes race. Real services: a few seconds.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { resumeRuns, startRun } from '../../../packages/sdk/src/engine/engine.js';
import type { RunRecord } from '../../../packages/sdk/src/engine/runRecord.js';
import { runStatus } from '../../../packages/sdk/src/engine/runStatus.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

test('an aborted run is interrupted; of two racing resumes one finishes it, the other finds nothing to do', async (t) => {
  const box = await sandbox(t);
  const abort = new AbortController();
  const handle = startRun({
    ...box,
    workflow: {
      agents: { main: agent([['slow', 'slow']]) },
      mcpDefinitions: { slow: fixtureDefinition('sleepsOnCall.cjs') },
    },
    script: { agents: { main: [{ call: 'slow__sleep', arguments: { ms: 800 } }, { final: 'done: {{0}}' }] } },
    requirement: 'sleep',
    graceMs: 500,
    signal: abort.signal,
    onEvent: (event) => {
      if (event.type === 'tool.calling') abort.abort(new Error('the operator pressed Ctrl-C'));
    },
  });
  const stopped = await handle.result;
  assert.equal(stopped.status, 'interrupted');
  assert.equal(stopped.output, null);
  assert.equal(stopped.error, null);
  const finished = ofType(stopped.events, 'invocation.finished');
  assert.deepEqual(
    finished.map((e) => e.status),
    ['interrupted'],
  );
  await assertNothingLeft(box.project, stopped.events);
  const before = await runStatus({ dataDir: box.dataDir, project: box.project });
  assert.equal(before.projects[0]!.runs[0]!.status, 'interrupted');

  const [a, b] = await Promise.all([
    resumeRuns({ dataDir: box.dataDir, project: box.project, graceMs: 500 }),
    resumeRuns({ dataDir: box.dataDir, project: box.project, graceMs: 500 }),
  ]);
  const results = [...a, ...b];
  assert.equal(results.length, 1, 'the run was continued once');
  assert.equal(results[0]!.status, 'succeeded');
  assert.equal(results[0]!.output, 'done: slept 800');

  const record = JSON.parse(readFileSync(`${stopped.runDir}/run.json`, 'utf8')) as RunRecord;
  assert.equal(record.resumes, 1);
  const main = record.invocations[0]!;
  assert.equal(main.restarted, true);
  assert.deepEqual(
    main.attempts.map((x) => x.outcome),
    ['interrupted', 'succeeded'],
  );
  assert.deepEqual(await resumeRuns({ dataDir: box.dataDir, project: box.project }), [], 'nothing left to resume');
  await assertNothingLeft(box.project, results[0]!.events);
});
