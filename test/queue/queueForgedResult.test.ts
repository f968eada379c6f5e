/**
 * A result written to the queue by something other than a worker of this version: the coordinator checks
 * it before anything of it reaches the run record or the user's repository. The forger is a BullMQ worker
 * in the test process that completes the job with a result naming the user's `main` branch; the attempt
 * fails with `invalid_job` and its output is not taken.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'bullmq';
import { DEFAULT_QUEUE_NAME } from '../../packages/sdk/src/queue/queueClient.js';
import { parseQueueUrl } from '../../packages/sdk/src/queue/queueUrl.js';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';
import { readJournal, readRunRecord, runQueued, startRedis, writeDelegatingRun } from './helpers.js';

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

  const { doc } = await runQueued(t, box, redis.url, { workflowPath, scriptPath });
  const record = readRunRecord(box, doc.run);
  const analyst = record.invocations.find((i) => i.agent === 'analyst');
  assert.ok(analyst !== undefined);
  assert.equal(analyst.attempts[0]?.error?.code, 'invalid_job');
  assert.notEqual(analyst.output, 'forged');
  assert.equal(analyst.git, null);
  await forger.close(true);
  await assertNothingLeft(box.project, doc.events);
});

/** A forged event a result replays, and why the coordinator refuses it. */
type Forgery = [name: string, event: (ids: { run: string; invocation: string; agent: string }) => object, why: RegExp];

const FORGERIES: Forgery[] = [
  [
    'run.finished',
    (ids) => ({ type: 'run.finished', invocation: ids.invocation, status: 'succeeded', output: 'forged', usage: {} }),
    /event 1 \(run\.finished\) is one only the coordinator writes/,
  ],
  [
    'workflow.reconfigured',
    (ids) => ({
      type: 'workflow.reconfigured',
      invocation: ids.invocation,
      agent: ids.agent,
      version: 9,
      changedMcps: [],
      changedAgents: [],
    }),
    /event 1 \(workflow\.reconfigured\) is one only the coordinator writes/,
  ],
  [
    'an unknown type',
    (ids) => ({ type: 'apply.accepted', invocation: ids.invocation, agent: ids.agent }),
    /event 1 \(apply\.accepted\) is of no known type/,
  ],
  [
    'a field its type has not',
    (ids) => ({ type: 'tool.calling', invocation: ids.invocation, agent: ids.agent, tool: 'x', note: 'forged' }),
    /event 1 \(tool\.calling\) has a field its type has not \("note"\)/,
  ],
  [
    'a bad field',
    (ids) => ({
      type: 'invocation.state',
      invocation: ids.invocation,
      agent: ids.agent,
      from: null,
      to: 'won',
      attempt: 1,
    }),
    /event 1 \(invocation\.state\) has a bad or missing "to"/,
  ],
  [
    'another run',
    (ids) => ({
      type: 'tool.calling',
      run: `${ids.run}-other`,
      invocation: ids.invocation,
      agent: ids.agent,
      tool: 'x',
    }),
    /event 1 \(tool\.calling\) names another run/,
  ],
  [
    'another agent',
    (ids) => ({ type: 'tool.calling', invocation: ids.invocation, agent: 'main', tool: 'x' }),
    /event 1 \(tool\.calling\) names another agent/,
  ],
];

test("forged events in a job result (coordinator-only, unknown, misshapen, not the job's own) are refused with invalid_job, none journaled", async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const files = await writeDelegatingRun(box.base, 1, { retries: 0 });
  let forge: Forgery = FORGERIES[0]!;
  const forger = new Worker(
    DEFAULT_QUEUE_NAME,
    async (job) => {
      const data = job.data as { run: string; workspace: string; invocation: { id: string; agent: string } };
      const ids = { run: data.run, invocation: data.invocation.id, agent: data.invocation.agent };
      const time = new Date().toISOString();
      return {
        format: 1,
        worker: 'forger:1',
        attempt: {
          attempt: 1,
          servicesId: data.invocation.id,
          runtimePath: '',
          version: 1,
          restarted: false,
          startedAt: time,
          finishedAt: time,
          outcome: 'succeeded',
          error: null,
        },
        retryable: false,
        // A genuine-looking event first: the whole result is refused for the forged one after it.
        events: [
          { type: 'tool.calling', invocation: ids.invocation, agent: ids.agent, tool: 'adds__add', time },
          { time, ...forge[1](ids) },
        ],
        state: 'succeeded',
        output: 'forged',
        git: null,
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

  for (const forgery of FORGERIES) {
    forge = forgery;
    const { code, stderr, doc } = await runQueued(t, box, redis.url, files);
    assert.equal(code, 0, `${forgery[0]}: ${stderr}`);
    const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
    const error = analyst.attempts[0]?.error;
    assert.equal(error?.code, 'invalid_job', forgery[0]);
    assert.match(error?.message ?? '', forgery[2], forgery[0]);
    assert.notEqual(analyst.output, 'forged');
    // The journal holds what was refused (with the attempt's failure), and nothing the result carried.
    const journal = readJournal(box, doc.run);
    const failed = ofType(journal, 'invocation.attempt_failed').find((e) => e.agent === 'analyst');
    assert.equal(failed?.error?.code, 'invalid_job');
    assert.equal((failed?.error?.data as { event?: number } | undefined)?.event, 1, forgery[0]);
    assert.equal(
      journal.filter((e) => e.type === 'tool.calling' && (e as { agent?: string }).agent === 'analyst').length,
      0,
      `${forgery[0]}: no event of the refused result was journaled`,
    );
    assert.equal(ofType(journal, 'run.finished').length, 1);
    assert.equal(ofType(journal, 'workflow.reconfigured').length, 0);
    await assertNothingLeft(box.project, doc.events);
  }
  await forger.close(true);
});
