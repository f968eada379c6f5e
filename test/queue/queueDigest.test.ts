/**
 * A job whose definition does not give the digest it names: the worker refuses it with `digest_mismatch`
 * before storing or starting anything. A real redis-server and a real worker process; the job is put on the
 * queue by the coordinator's own client, as the engine would, with one file altered after digesting.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ATTEMPT_FORMAT, type AttemptSpec } from '../../packages/sdk/src/schemas/attempt.js';
import { QueueClient } from '../../packages/sdk/src/queue/queueClient.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { definitionDigest } from '../../packages/sdk/src/workflow/digest.js';
import { parseWorkflow } from '../../packages/sdk/src/workflow/validate.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { markedProcesses, sandbox } from '../sdk/engine/helpers.js';
import { startRedis, startWorker, stopWorker } from './helpers.js';

/** A job for the analyst's invocation `inv-<name>-test` of run `run-<name>-test`, as a coordinator would send it. */
function jobFor(
  box: { project: string; workspace: string },
  name: string,
  workflow: AttemptSpec['version']['workflow'],
  digest: string,
  options: AttemptSpec['options'],
): AttemptSpec {
  return {
    format: ATTEMPT_FORMAT,
    run: `run-${name}-test`,
    project: box.project,
    workspace: box.workspace,
    invocation: {
      id: `inv-${name}-test`,
      agent: 'analyst',
      parent: 'inv-main',
      task: 'add',
      state: 'starting',
      restarted: false,
      workspace: box.workspace,
      git: null,
      attempts: [],
      startedAt: new Date().toISOString(),
      finishedAt: null,
      output: null,
      error: null,
    },
    restarted: false,
    version: { version: 1, digests: { adds: digest }, workflow },
    mainProposed: [],
    checkpoint: null,
    script: { agents: { analyst: [{ final: 'never' }] } },
    positions: {},
    options,
    git: null,
  };
}

test('a job whose definition does not match its digest fails with digest_mismatch, nothing stored or started', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const workerDir = join(box.base, 'worker-1');
  const worker = await startWorker(t, redis.url, workerDir);
  const workflow = parseWorkflow({
    agents: { main: agent([]), analyst: agent([['adds', 'adds']]) },
    mcpDefinitions: { adds: fixtureDefinition('addsNumbers.cjs') },
  });
  const digest = definitionDigest(workflow.mcpDefinitions.adds!);
  // Altered on the way: the content no longer gives the digest the job names.
  workflow.mcpDefinitions.adds!.files['server.cjs'] += '\nprocess.exit(3);\n';
  const job = jobFor(box, 'digest', workflow, digest, { graceMs: 300 });
  const client = await QueueClient.open({ url: redis.url });
  t.after(() => client.close());
  await client.submit('digest-test', job);
  const outcome = await client.wait('digest-test', new AbortController().signal);
  // Refused for good (BullMQ's UnrecoverableError), the coded error carried back in the failed reason.
  assert.equal(outcome.status, 'failed');
  const refused = (outcome as { refused?: { code: string; message: string; remedy?: string } }).refused;
  assert.equal(refused?.code, 'digest_mismatch');
  assert.match(refused?.message ?? '', /definition "adds" of run run-digest-test does not match its digest/);
  assert.match(refused?.remedy ?? '', /the job was altered on its way/);
  await worker.waitForStderr(/job digest-test failed: refused \[digest_mismatch\]/);
  const altered = definitionDigest(workflow.mcpDefinitions.adds!);
  const paths = new ProjectPaths(workerDir, box.project);
  assert.equal(existsSync(paths.sourceDir(altered, 'adds')), false, 'the altered source was not stored');
  assert.equal(existsSync(paths.sourceDir(digest, 'adds')), false);
  assert.deepEqual(markedProcesses(box.project), []);
  await client.close();
  await stopWorker(worker);
});

test('a job whose engine options are out of range is refused with invalid_job before anything starts', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const workerDir = join(box.base, 'worker-1');
  const worker = await startWorker(t, redis.url, workerDir);
  const workflow = parseWorkflow({
    agents: { main: agent([]), analyst: agent([['adds', 'adds']]) },
    mcpDefinitions: { adds: fixtureDefinition('addsNumbers.cjs') },
  });
  const digest = definitionDigest(workflow.mcpDefinitions.adds!);
  // Beyond the timer ceiling: a setTimeout of it would fire at once.
  const job = jobFor(box, 'options', workflow, digest, { graceMs: 2 ** 40 });
  const client = await QueueClient.open({ url: redis.url });
  t.after(() => client.close());
  await client.submit('options-test', job);
  const outcome = await client.wait('options-test', new AbortController().signal);
  assert.equal(outcome.status, 'failed');
  const refused = (outcome as { refused?: { code: string; message: string } }).refused;
  assert.equal(refused?.code, 'invalid_job', 'refused with its own code');
  assert.match(
    refused?.message ?? '',
    /has bad options: graceMs must be a whole number of milliseconds from 0 to 2147483647/,
  );
  const paths = new ProjectPaths(workerDir, box.project);
  assert.equal(existsSync(paths.sourceDir(digest, 'adds')), false, 'nothing was stored');
  assert.deepEqual(markedProcesses(box.project), []);
  await client.close();
  await stopWorker(worker);
});

test('a job whose run id is not a directory name (..) is refused with unsafe_path, not retried', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const workerDir = join(box.base, 'worker-1');
  const worker = await startWorker(t, redis.url, workerDir);
  const workflow = parseWorkflow({
    agents: { main: agent([]), analyst: agent([['adds', 'adds']]) },
    mcpDefinitions: { adds: fixtureDefinition('addsNumbers.cjs') },
  });
  const digest = definitionDigest(workflow.mcpDefinitions.adds!);
  // `..` is no directory name (schemas/pathId.ts): the job's schema refuses it as the store would.
  const job = { ...jobFor(box, 'dots', workflow, digest, { graceMs: 300 }), run: '..' };
  const client = await QueueClient.open({ url: redis.url });
  t.after(() => client.close());
  await client.submit('dots-test', job);
  const outcome = await client.wait('dots-test', new AbortController().signal);
  assert.equal(outcome.status, 'failed');
  const refused = (outcome as { refused?: { code: string; message: string } }).refused;
  assert.equal(refused?.code, 'unsafe_path', JSON.stringify(outcome));
  await worker.waitForStderr(/job dots-test failed: refused \[unsafe_path\]/);
  assert.deepEqual(markedProcesses(box.project), []);
  await client.close();
  await stopWorker(worker);
});
