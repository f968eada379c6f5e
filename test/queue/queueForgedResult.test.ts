/**
 * A result written to the queue by something other than a worker of this version: the coordinator checks
 * it before anything of it reaches the run record or the user's repository. The forger is a BullMQ worker
 * in the test process that completes the job with a result naming the user's `main` branch; the attempt
 * fails with `invalid_job` and its output is not taken.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Worker } from 'bullmq';
import { DEFAULT_QUEUE_NAME } from '../../packages/sdk/src/queue/queueClient.js';
import { parseQueueUrl } from '../../packages/sdk/src/queue/queueUrl.js';
import type { RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import { runRecordPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';
import { startRedis, writeDelegatingRun } from './helpers.js';

test('a forged job result naming another branch is refused with invalid_job', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const { workflowPath, scriptPath } = await writeDelegatingRun(box.base, 1, { retries: 0 });
  const forger = new Worker(
    DEFAULT_QUEUE_NAME,
    async (job) => {
      const data = job.data as { workspace: string; invocation: { id: string } };
      return {
        format: 1,
        worker: 'forger:1',
        attempt: {
          attempt: 1,
          servicesId: data.invocation.id,
          runtimePath: '',
          version: 1,
          restarted: false,
          startedAt: new Date().toISOString(),
          finishedAt: new Date().toISOString(),
          outcome: 'succeeded',
          error: null,
        },
        retryable: false,
        events: [],
        state: 'succeeded',
        output: 'forged',
        git: { branch: 'main', commit: 'deadbeef' },
        workspace: data.workspace,
        usage: { inputTokens: 0, outputTokens: 0 },
        checkpoint: null,
        position: null,
      };
    },
    { connection: { ...parseQueueUrl(redis.url).connection, maxRetriesPerRequest: null } },
  );
  t.after(() => forger.close(true));
  await forger.waitUntilReady();

  const run = await runCliToEnd(
    t,
    [
      'run',
      '--data-dir',
      box.dataDir,
      '--project',
      box.project,
      '--workspace',
      box.workspace,
      '--workflow',
      workflowPath,
      '--script',
      scriptPath,
      '--grace-ms',
      '300',
      '--queue',
      redis.url,
      '--json',
      'add',
    ],
    120_000,
  );
  const doc = run.json as { run: string; events: RunEvent[] } | undefined;
  assert.ok(doc !== undefined, run.stderr);
  const record = JSON.parse(
    readFileSync(runRecordPath(new ProjectPaths(box.dataDir, box.project), doc.run), 'utf8'),
  ) as RunRecord;
  const analyst = record.invocations.find((i) => i.agent === 'analyst');
  assert.ok(analyst !== undefined);
  assert.equal(analyst.attempts[0]?.error?.code, 'invalid_job');
  assert.notEqual(analyst.output, 'forged');
  assert.equal(analyst.git, null);
  await forger.close(true);
  await assertNothingLeft(box.project, doc.events);
});
