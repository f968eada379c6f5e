/**
 * Cancelling a run through the API leaves it `cancelled` (services collected, nothing reported done), and
 * `resumeRuns` continues it exactly once even when two resumes race, from the checkpoints: Main does not
 * delegate again a worker whose answer it recorded, and an interrupted worker continues after its last
 * recorded call. Real services: a few seconds each.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { resumeRuns, startRun } from '../../../packages/sdk/src/engine/runs.js';
import type { RunRecord } from '../../../packages/sdk/src/engine/runRecord.js';
import { runStatus } from '../../../packages/sdk/src/engine/runStatus.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

test('an aborted run is cancelled; of two racing resumes one finishes it, the other finds nothing to do', async (t) => {
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
  assert.equal(stopped.status, 'cancelled');
  assert.equal(stopped.output, null);
  assert.equal(stopped.error, null);
  const finished = ofType(stopped.events, 'invocation.finished');
  assert.deepEqual(
    finished.map((e) => e.status),
    ['interrupted'],
  );
  assert.deepEqual(
    ofType(stopped.events, 'invocation.state').map((e) => `${e.from}->${e.to}`),
    ['starting->running', 'running->interrupted'],
    'every state change is journaled',
  );
  await assertNothingLeft(box.project, stopped.events);
  const before = await runStatus({ dataDir: box.dataDir, project: box.project });
  assert.equal(before.projects[0]!.runs[0]!.status, 'cancelled');

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
    main.attempts.map((x) => [x.outcome, x.fromCheckpoint]),
    [
      ['interrupted', false],
      ['succeeded', true],
    ],
  );
  const resumed = ofType(results[0]!.events, 'run.resumed');
  assert.equal(resumed.length, 1);
  assert.equal(resumed[0]!.from, 'cancelled');
  assert.deepEqual(await resumeRuns({ dataDir: box.dataDir, project: box.project }), [], 'nothing left to resume');
  await assertNothingLeft(box.project, results[0]!.events);
});

test('a worker cancelled mid-task continues from its checkpoint when the resumed Main delegates it again', async (t) => {
  const box = await sandbox(t);
  const abort = new AbortController();
  const handle = startRun({
    ...box,
    workflow: {
      agents: {
        main: agent([['counts', 'counts']]),
        worker: agent([
          ['counts', 'counts'],
          ['slow', 'slow'],
        ]),
      },
      mcpDefinitions: { counts: fixtureDefinition('countsCalls.cjs'), slow: fixtureDefinition('sleepsOnCall.cjs') },
    },
    script: {
      agents: {
        main: [
          { call: 'counts__count', arguments: { label: 'main-before' } },
          { call: 'scienceevolve__delegate', arguments: { agent: 'worker', task: 'count and sleep' } },
          { call: 'counts__count', arguments: { label: 'main-after' } },
          { final: '{{0}} [{{1}}] {{2}}' },
        ],
        worker: [
          { call: 'counts__count', arguments: { label: 'worker' } },
          { call: 'slow__sleep', arguments: { ms: 600 } },
          { final: '{{0}} {{1}}' },
        ],
      },
    },
    requirement: 'count',
    graceMs: 500,
    signal: abort.signal,
    onEvent: (event) => {
      if (event.type === 'tool.calling' && event.tool === 'slow__sleep') abort.abort(new Error('Ctrl-C'));
    },
  });
  const stopped = await handle.result;
  assert.equal(stopped.status, 'cancelled');
  await assertNothingLeft(box.project, stopped.events);
  assert.deepEqual(readFileSync(join(box.workspace, 'calls.log'), 'utf8').split('\n'), ['main-before', 'worker', '']);

  const [result] = await resumeRuns({ dataDir: box.dataDir, project: box.project, graceMs: 500 });
  assert.equal(result!.status, 'succeeded');
  assert.equal(result!.output, 'main-before#1 [worker#1 slept 600] main-after#1');
  assert.deepEqual(
    readFileSync(join(box.workspace, 'calls.log'), 'utf8').split('\n'),
    ['main-before', 'worker', 'main-after', ''],
    'no call whose result was recorded ran again',
  );
  const record = JSON.parse(readFileSync(`${stopped.runDir}/run.json`, 'utf8')) as RunRecord;
  const workers = record.invocations.filter((i) => i.agent === 'worker');
  assert.equal(workers.length, 1, 'the interrupted worker was continued, not started anew');
  assert.equal(workers[0]!.state, 'succeeded');
  assert.deepEqual(
    workers[0]!.attempts.map((x) => [x.outcome, x.fromCheckpoint, x.toolCalls]),
    [
      ['interrupted', false, 2],
      ['succeeded', true, 1],
    ],
  );
  await assertNothingLeft(box.project, result!.events);
});
