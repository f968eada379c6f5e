/**
 * Recovery inside a run (SPEC §10.3): a service that fails to start is retried with fresh services, then the
 * invocation fails with diagnostics (which service, its log) — for a worker, Main sees the failure as a tool
 * error and goes on; for Main, the run fails. Services start real Node processes (under 1 s each here).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runWorkflow } from '../../../packages/sdk/src/engine/runs.js';
import type { RunRecord } from '../../../packages/sdk/src/engine/runRecord.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

test('a worker whose service fails to start: one retry with fresh services, then failed with diagnostics', async (t) => {
  const box = await sandbox(t);
  const result = await runWorkflow({
    ...box,
    workflow: {
      orchestration: { invocationRetries: 1 },
      agents: { main: agent([]), worker: agent([['db', 'db']]) },
      mcpDefinitions: { db: fixtureDefinition('exitsAtStart.cjs') },
    },
    script: {
      agents: {
        main: [{ call: 'scienceevolve__delegate', arguments: { agent: 'worker', task: 'query' } }, { final: '{{0}}' }],
        worker: [{ final: 'never reached' }],
      },
    },
    requirement: 'query the database',
    graceMs: 500,
  });
  assert.equal(result.status, 'succeeded', 'Main finished: the worker failure was a tool error to it');
  assert.match(result.output!, /worker "worker" \(invocation inv-[^)]+\) failed after 2 attempt\(s\)/);
  assert.match(result.output!, /"db"/);

  const record = JSON.parse(readFileSync(`${result.runDir}/run.json`, 'utf8')) as RunRecord;
  const worker = record.invocations.find((i) => i.agent === 'worker')!;
  assert.equal(worker.state, 'failed');
  assert.equal(worker.attempts.length, 2);
  assert.notEqual(worker.attempts[0]!.runtimePath, worker.attempts[1]!.runtimePath, 'each attempt has fresh services');
  for (const attempt of worker.attempts) {
    assert.equal(attempt.outcome, 'failed');
    const log = attempt.error!.data?.log as string;
    assert.ok(log.startsWith(attempt.runtimePath), `the error names the attempt's log: ${log}`);
    assert.match(readFileSync(log, 'utf8'), /the database is unreachable/);
    assert.match(attempt.error!.message, /db/);
  }
  assert.equal(worker.error?.code, worker.attempts[1]!.error!.code);
  // Events: each attempt, each failed service, never the log's content.
  assert.equal(ofType(result.events, 'invocation.started').filter((e) => e.agent === 'worker').length, 2);
  assert.deepEqual(
    ofType(result.events, 'invocation.attempt_failed').map((e) => e.willRetry),
    [true, false],
  );
  // One failure event per failed start (one line per failure): the first attempt's process exited at the era
  // probe, so the start launched it again in the 2025-11-25 era at once (a crash cannot be told from an exit
  // at the probe) and only that second process's failure is the start's; the second attempt starts in the
  // remembered era, one process. Three processes ran (three service.exited).
  const failed = ofType(result.events, 'service.failed');
  assert.equal(failed.length, 2);
  assert.equal(ofType(result.events, 'service.exited').length, 3);
  assert.doesNotMatch(JSON.stringify(result.events), /database is unreachable/);
  await assertNothingLeft(box.project, result.events);
});

test("Main's service fails to start: retried, then the run fails with the service's diagnostics", async (t) => {
  const box = await sandbox(t);
  const result = await runWorkflow({
    ...box,
    workflow: {
      orchestration: { invocationRetries: 0 },
      agents: { main: agent([['db', 'db']]) },
      mcpDefinitions: { db: fixtureDefinition('exitsAtStart.cjs') },
    },
    script: { agents: { main: [{ final: 'never' }] } },
    requirement: 'anything',
    graceMs: 500,
  });
  assert.equal(result.status, 'failed');
  assert.equal(result.output, null);
  assert.ok(result.error !== null);
  assert.ok(existsSync(result.error.data?.log as string));
  const finished = ofType(result.events, 'run.finished')[0]!;
  assert.equal(finished.status, 'failed');
  assert.equal(ofType(result.events, 'invocation.started').length, 1, 'invocationRetries 0: one attempt');
  await assertNothingLeft(box.project, result.events);
});
