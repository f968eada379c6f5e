/**
 * The attempt seam (docs/decisions/attempt-seam.md): one attempt spec, run once in this process (a function
 * call with its events delivered as they happen, as the host runs a local attempt) and once by a real
 * `scienceevolve worker` through a real redis-server (a BullMQ job, its events in the result), gives the
 * same outcome, compared field by field. Only what must differ
 * between two runs on two data dirs is left out of the comparison, each named in `comparable` below.
 */
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runAttempt } from '../../packages/sdk/src/engine/attemptSeam.js';
import { RoleWorktrees } from '../../packages/sdk/src/engine/worktrees.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { RunHarnesses } from '../../packages/sdk/src/harness/harnessFor.js';
import { hostSupervisor } from '../../packages/sdk/src/invocation/hostSupervision.js';
import { QueueClient } from '../../packages/sdk/src/queue/queueClient.js';
import {
  ATTEMPT_FORMAT,
  type AttemptOutcome,
  AttemptOutcomeSchema,
  type AttemptSpec,
} from '../../packages/sdk/src/schemas/attempt.js';
import { openProject } from '../../packages/sdk/src/store/projectStore.js';
import { acceptWorkflow, requireAccepted } from '../../packages/sdk/src/store/workflowVersions.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertNothingLeft, markedProcesses, sandbox } from '../sdk/engine/helpers.js';
import { startRedis, startWorker, stopWorker } from './helpers.js';

/** Fields that differ between two runs of one attempt by their nature: times, timings, process ids. */
const DIFFER = new Set([
  'time', // when each event happened
  'startedAt', // when the attempt started and ended
  'finishedAt',
  'savedAt', // when the checkpoint was saved
  'pid', // the services' process ids and groups
  'pgid',
  'startMs', // how long a service took to start, a call to answer, a start to queue
  'durationMs',
  'queuedMs',
]);

/**
 * The outcome as compared: `worker` (who ran it: this process or the worker's) left out, the fields of
 * {@link DIFFER} left out wherever they are, and the runner's data dir in any path (the attempt's
 * `runtimePath`, the services' `log`, the checkpoint event's `path`) replaced by `<data>`. Services of one
 * attempt start and stop concurrently, so a run of consecutive events of one type is compared sorted.
 */
function comparable(outcome: AttemptOutcome, dataDir: string): unknown {
  const strip = (value: unknown): unknown => {
    if (typeof value === 'string') return value.split(dataDir).join('<data>');
    if (Array.isArray(value)) return value.map(strip);
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(
        Object.entries(value)
          .filter(([key]) => !DIFFER.has(key))
          .map(([key, v]) => [key, strip(v)]),
      );
    }
    return value;
  };
  const { worker: _worker, events, ...rest } = outcome;
  const lines = (events as RunEvent[]).map((e) => JSON.stringify(strip(e)));
  const grouped: string[] = [];
  let group: string[] = [];
  lines.forEach((line, i) => {
    if (group.length > 0 && (events[i] as RunEvent).type !== (events[i - 1] as RunEvent).type) {
      grouped.push(...group.sort());
      group = [];
    }
    group.push(line);
  });
  grouped.push(...group.sort());
  return { ...(strip(rest) as object), events: grouped };
}

test('one attempt spec run in this process and by a queue worker through redis-server: the same outcome, field by field', async (t) => {
  const box = await sandbox(t);
  const paths = await openProject(box.dataDir, box.project);
  await acceptWorkflow(paths, {
    agents: {
      main: agent([]),
      analyst: agent([
        ['adds', 'adds'],
        ['counts', 'counts'],
      ]),
    },
    mcpDefinitions: { adds: fixtureDefinition('addsNumbers.cjs'), counts: fixtureDefinition('countsCalls.cjs') },
  });
  const version = await requireAccepted(paths);
  // The analyst's second invocation: its first used the first step (the run's positions say so).
  const script = {
    agents: {
      analyst: [
        { final: 'the first invocation' },
        { call: 'counts__count', arguments: { label: 'seam' } },
        { call: 'adds__add', arguments: { a: 2, b: 3 } },
        // A call the service refuses (not a number): its error is the result, and the script goes on.
        { call: 'adds__add', arguments: { a: 'two', b: 3 } },
        { final: 'counted {{0}}, added {{1}}' },
      ],
    },
  };
  const spec: AttemptSpec = {
    format: ATTEMPT_FORMAT,
    run: 'run-seam-test',
    project: box.project,
    workspace: box.workspace,
    invocation: {
      id: 'inv-seam-test',
      agent: 'analyst',
      parent: 'inv-main-test',
      task: 'count, then add 2 and 3',
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
    version: { version: version.version, digests: version.digests, workflow: version.workflow },
    mainProposed: [],
    checkpoint: null,
    journaled: { responses: [], calls: [] },
    script,
    positions: { analyst: 1 },
    options: { graceMs: 500 },
    git: null,
  };

  // In this process: a runner as the host builds one for a local attempt, over this data dir, its events
  // delivered as they happen (the host journals them at once).
  const harnesses = await RunHarnesses.load({ script });
  harnesses.scripted?.restore(spec.positions ?? {});
  const streamed: unknown[] = [];
  const ran = await runAttempt(structuredClone(spec), {
    id: `local:${process.pid}`,
    paths,
    version,
    harnesses,
    options: { graceMs: 500 },
    worktrees: new RoleWorktrees(paths, box.workspace),
    signal: new AbortController().signal,
    registry: () => hostSupervisor(paths, { graceMs: 500 }),
    onEvent: (event) => streamed.push(event),
  });
  assert.deepEqual(ran.events, [], 'delivered as they happened, not kept');
  const local: AttemptOutcome = { ...ran, events: streamed };
  await assertNothingLeft(box.project, local.events as RunEvent[]);
  // The counting service's log in the workspace is put back as it was: the worker counts from zero too.
  await rm(join(box.workspace, 'calls.log'), { force: true });

  // Through the queue: the same spec as a BullMQ job, a real worker process with its own data dir.
  const redis = await startRedis(t, box.base);
  const workerDir = join(box.base, 'worker-1');
  const worker = await startWorker(t, redis.url, workerDir);
  const client = await QueueClient.open({ url: redis.url });
  t.after(() => client.close());
  await client.submit('seam-test', spec);
  const finished = await client.wait('seam-test', new AbortController().signal);
  assert.equal(finished.status, 'completed', JSON.stringify(finished));
  const queued = AttemptOutcomeSchema.parse((finished as { value: unknown }).value);

  // What the attempt did, checked on its own before the two are compared.
  assert.equal(local.attempt.outcome, 'succeeded', JSON.stringify(local.attempt.error));
  assert.equal(local.output, 'counted seam#1, added 5');
  assert.equal(local.attempt.toolCalls, 3);
  assert.equal(
    (local.events as RunEvent[]).filter((e) => e.type === 'tool.called').length,
    3,
    'three calls: two answered, one refused by the service',
  );
  assert.deepEqual(
    (local.checkpoint as { state: { position: number } } | null)?.state.position,
    4,
    'the scripted harness position of the final step is in its checkpoint',
  );
  // Who ran each: this process, then the worker.
  assert.match(local.worker, /^local:\d+$/);
  assert.match(queued.worker, /^.+:\d+$/);
  assert.notEqual(queued.worker, local.worker);

  // Field by field.
  const a = comparable(local, box.dataDir) as Record<string, unknown>;
  const b = comparable(queued, workerDir) as Record<string, unknown>;
  assert.deepEqual(Object.keys(b).sort(), Object.keys(a).sort());
  for (const key of Object.keys(a)) assert.deepEqual(b[key], a[key], `outcome field "${key}"`);

  assert.deepEqual(markedProcesses(box.project), []);
  await client.close();
  await stopWorker(worker);
});
