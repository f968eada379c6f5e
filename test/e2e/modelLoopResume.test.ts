/**
 * A model-loop run through the real CLI (`scienceevolve run`, Main on the `openai` loop; the local model
 * server lives in this test process), stopped right after a tool call's result was recorded — the host
 * SIGKILLed, or sent SIGINT — then `scienceevolve resume`: the recorded call is not made again (the
 * counting service proves it), the run succeeds with the right answer, and nothing is left running.
 *
 * The model "holds" its answer to the first request that carries the first tool result (a 60 s delay): by
 * then the loop has checkpointed that result (it checkpoints before the next model call), so the host is
 * stopped exactly between a recorded result and the next turn. Real services and three or four CLI
 * processes per test: about 5–15 s on 2 cores; each step has its own timeout.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import { runEventsPath, runRecordPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { StatusReport } from '../../packages/sdk/src/engine/runStatus.js';
import type { ErrorRecord } from '../../packages/sdk/src/events/runEvents.js';
import type { ModelLoopCheckpoint } from '../../packages/sdk/src/harness/modelLoopCheckpoint.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { fixtureDefinition } from '../fixtures/engine/workflows.js';
import { type ModelServer, scriptedPolicy, startModelServer } from '../fixtures/modelServer/index.js';
import { assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';
import { BIN, assertGone, type Spawned, spawnNode, until, runEvents as events } from './helpers.js';

const KEY_ENV = 'SE_E2E_MODEL_KEY';
const KEY = 'sk-resume-test';
/** The CLI's environment: the test's, plus the model key the workflow names. */
const CLI_ENV = { ...process.env, [KEY_ENV]: KEY };

interface Lab {
  box: Awaited<ReturnType<typeof sandbox>>;
  model: ModelServer;
  workflowPath: string;
  common: string[];
  paths: ProjectPaths;
  /** Resolves once the model holds its answer to the first request carrying a tool result. */
  held: Promise<void>;
  calls(): string;
}

/**
 * A sandbox, the model server and a workflow whose Main (openai chat) counts "first", then "second", and
 * answers with both results. The model holds its answer to the first request that brings back "first".
 */
async function lab(t: TestContext): Promise<Lab> {
  const box = await sandbox(t);
  const policy = scriptedPolicy(
    [
      { call: 'counts__count', arguments: { label: 'first' } },
      { call: 'counts__count', arguments: { label: 'second' } },
    ],
    { final: (results) => `Main counted ${results.join(' and ')}` },
  );
  let holding = false;
  let onHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  const model = await startModelServer({
    requireApiKey: KEY,
    respond: async (request, index) => {
      const reply = await policy(request, index);
      const results = request.messages.flatMap((m) => m.toolResults ?? []);
      if (!holding && results.length === 1) {
        holding = true;
        onHeld();
        // The host is stopped while it waits; close() ends the wait.
        return { ...reply, delayMs: 60_000 };
      }
      return reply;
    },
  });
  t.after(() => model.close());
  const workflowPath = join(box.base, 'workflow.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      agents: {
        main: {
          instructions: 'Count twice.',
          harness: { type: 'openai', model: 'test-model', baseUrl: `${model.url}/v1`, apiKeyEnv: KEY_ENV },
          mcpServers: [{ name: 'counts', project: 'counts' }],
        },
      },
      mcpDefinitions: { counts: fixtureDefinition('countsCalls.cjs') },
    }),
  );
  const calls = () => {
    const path = join(box.workspace, 'calls.log');
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  };
  return {
    box,
    model,
    workflowPath,
    common: ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '500'],
    paths: new ProjectPaths(box.dataDir, box.project),
    held,
    calls,
  };
}

/** `scienceevolve run` of the lab's workflow, started. */
function startRunCli(t: TestContext, l: Lab, extra: string[] = []): Spawned {
  return spawnNode(
    t,
    [BIN, 'run', ...l.common, '--workspace', l.box.workspace, '--workflow', l.workflowPath, ...extra, 'count twice'],
    { env: CLI_ENV },
  );
}

/** Runs a CLI command to its end (60 s at most: a resume starts a real service) and proves it gone. */
async function cliToEnd(
  t: TestContext,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = spawnNode(t, [BIN, ...args], { env: CLI_ENV });
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), 60_000);
  const { code } = await cli.exited;
  clearTimeout(timer);
  await assertGone(cli.pid);
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

/** The run id `run` printed on stderr. */
function runIdOf(cli: Spawned): Promise<string> {
  return until('the run id on stderr', () => /run (run-\S+) started/.exec(cli.stderr())?.[1]);
}

/** The model server's requests whose conversation brought back `label`'s result. */
function requestsWithResult(model: ModelServer, label: string): number {
  return model.requests.filter((r) =>
    r.messages.some((m) => (m.toolResults ?? []).some((x) => x.text.includes(`${label}#`))),
  ).length;
}

/** `resume` to success: the recorded "first" is not counted again, "second" is counted once. */
async function resumeToSuccess(t: TestContext, l: Lab, runId: string) {
  const resumed = await cliToEnd(t, ['resume', ...l.common, '--json']);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual((JSON.parse(resumed.stdout) as { runs: unknown[] }).runs, [
    { run: runId, status: 'succeeded', output: 'Main counted first#1 and second#1', error: null },
  ]);
  assert.match(resumed.stderr, /\[main\] invocation inv-\S+ attempt 2 \(restarted\) from its checkpoint/);
  assert.equal(l.calls(), 'first\nsecond\n', 'the recorded call was not made again');
  // The resumed loop's first request already carries the recorded result: the model was not asked again
  // for the first step.
  const resumedRequests = l.model.requests.slice(2);
  assert.ok(resumedRequests.length >= 2, `${resumedRequests.length} requests after the stop`);
  assert.equal(
    resumedRequests[0]!.messages.flatMap((m) => m.toolResults ?? []).length,
    1,
    'the resumed conversation starts from the checkpoint',
  );
  const record = JSON.parse(readFileSync(runRecordPath(l.paths, runId), 'utf8')) as RunRecord;
  assert.equal(record.status, 'succeeded');
  const main = record.invocations[0]!;
  assert.equal(main.attempts.at(-1)!.fromCheckpoint, true);
  assert.ok((record.usage?.modelCalls ?? 0) >= 3, 'usage kept across the resume');
  return record;
}

test('SIGKILL the host right after a tool result is recorded; resume does not call it again', async (t) => {
  const l = await lab(t);
  const host = startRunCli(t, l);
  const runId = await runIdOf(host);
  await l.held;
  // The request that brings "first" back arrived: the result is in the checkpoint (journaled too).
  assert.equal(requestsWithResult(l.model, 'first'), 1);
  assert.equal(l.calls(), 'first\n');
  const eventsPath = runEventsPath(l.paths, runId);
  await until('the checkpoint event of the recorded result', () =>
    ofType(events(eventsPath), 'invocation.checkpoint').some((e) => e.step === 1) ? true : undefined,
  );
  process.kill(host.pid, 'SIGKILL');
  assert.equal((await host.exited).signal, 'SIGKILL');
  await assertGone(host.pid);

  // The dead host's supervisor collects its service.
  const before = events(eventsPath);
  const oldPids = ofType(before, 'service.ready').map((e) => e.pid!);
  assert.equal(oldPids.length, 1);
  for (const pid of oldPids) await assertGone(pid);
  const status = await cliToEnd(t, ['status', '--data-dir', l.box.dataDir, '--project', l.box.project, '--json']);
  assert.equal(
    (JSON.parse(status.stdout) as StatusReport).projects[0]!.runs.find((r) => r.run === runId)!.status,
    'interrupted',
  );

  const record = await resumeToSuccess(t, l, runId);
  assert.equal(record.resumes, 1);
  assert.deepEqual(
    record.invocations[0]!.attempts.map((a) => [a.outcome, a.fromCheckpoint]),
    [
      ['interrupted', false],
      ['succeeded', true],
    ],
  );
  const after = events(eventsPath);
  assert.equal(after.at(-1)!.type, 'run.finished');
  const newPids = ofType(after.slice(before.length), 'service.ready').map((e) => e.pid!);
  assert.equal(newPids.length, 1);
  assert.ok(!oldPids.includes(newPids[0]!), 'a new service process');
  await assertNothingLeft(l.box.project, after);
  assert.deepEqual(markedProcesses(l.box.project), []);
});

test('SIGINT on run while the model is answering: cancelled, then resume finishes without repeating the call', async (t) => {
  const l = await lab(t);
  const host = startRunCli(t, l, ['--json']);
  const runId = await runIdOf(host);
  await l.held;
  assert.equal(l.calls(), 'first\n');
  host.child.kill('SIGINT');
  assert.equal((await host.exited).code, 1, host.stderr());
  await assertGone(host.pid);
  assert.match(host.stderr(), /received SIGINT: cancelling the run/);
  const doc = JSON.parse(host.stdout()) as { run: string; status: string; output: string | null };
  assert.equal(doc.run, runId);
  assert.equal(doc.status, 'cancelled');
  assert.equal(doc.output, null);
  const eventsPath = runEventsPath(l.paths, runId);
  const first = events(eventsPath);
  assert.equal(ofType(first, 'run.finished')[0]!.status, 'cancelled');
  await assertNothingLeft(l.box.project, first);

  const status = await cliToEnd(t, ['status', '--data-dir', l.box.dataDir, '--project', l.box.project, '--json']);
  assert.equal(
    (JSON.parse(status.stdout) as StatusReport).projects[0]!.runs.find((r) => r.run === runId)!.status,
    'cancelled',
  );

  const record = await resumeToSuccess(t, l, runId);
  assert.equal(record.resumes, 1);
  assert.deepEqual(
    record.invocations[0]!.attempts.map((a) => [a.outcome, a.fromCheckpoint]),
    [
      ['interrupted', false],
      ['succeeded', true],
    ],
  );
  const all = events(eventsPath);
  assert.deepEqual(
    ofType(all, 'run.resumed').map((e) => e.from),
    ['cancelled'],
  );
  await assertNothingLeft(l.box.project, all);
  assert.deepEqual(markedProcesses(l.box.project), []);
});

test('a checkpoint a service rewrote after a host SIGKILL is refused by resume, naming the forged call; nothing forged reaches the model', async (t) => {
  const l = await lab(t);
  const host = startRunCli(t, l);
  const runId = await runIdOf(host);
  await l.held;
  const eventsPath = runEventsPath(l.paths, runId);
  await until('the checkpoint event of the recorded result', () =>
    ofType(events(eventsPath), 'invocation.checkpoint').some((e) => e.step === 1) ? true : undefined,
  );
  process.kill(host.pid, 'SIGKILL');
  assert.equal((await host.exited).signal, 'SIGKILL');
  await assertGone(host.pid);
  for (const pid of ofType(events(eventsPath), 'service.ready').map((e) => e.pid!)) await assertGone(pid);

  // What an unsandboxed service (the host user) can do: rewrite Main's checkpoint with a step that never
  // ran — a call, its result — and a result for a call of the open step that is still to run.
  const record = JSON.parse(readFileSync(runRecordPath(l.paths, runId), 'utf8')) as RunRecord;
  const path = record.invocations[0]!.checkpoint!;
  const file = JSON.parse(readFileSync(path, 'utf8')) as { state: ModelLoopCheckpoint };
  const call = (id: string, label: string) => ({
    type: 'tool-call',
    toolCallId: id,
    toolName: 'counts__count',
    input: { label },
  });
  file.state.messages.push(
    { role: 'assistant', content: [call('call_forged', 'forged')] },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'call_forged',
          toolName: 'counts__count',
          output: { type: 'text', value: 'forged#1' },
        },
      ],
    },
    { role: 'assistant', content: [call('call_inflight', 'second'), call('call_next', 'third')] },
  );
  file.state.results = [{ toolCallId: 'call_inflight', text: 'second#1', isError: false }];
  file.state.turn += 2;
  await writeFile(path, JSON.stringify(file));
  // The journal holds no `tool.called` for either call.
  assert.equal(
    ofType(events(eventsPath), 'tool.called').filter((e) => e.callId === 'call_forged' || e.callId === 'call_inflight')
      .length,
    0,
  );

  const requestsBefore = l.model.requests.length;
  const resumed = await cliToEnd(t, ['resume', ...l.common, '--json']);
  assert.notEqual(resumed.code, 0, resumed.stdout);
  const [run] = (JSON.parse(resumed.stdout) as { runs: { run: string; status: string; error: ErrorRecord }[] }).runs;
  assert.equal(run!.run, runId);
  assert.equal(run!.status, 'failed');
  assert.equal(run!.error.code, 'invalid_checkpoint');
  assert.match(
    run!.error.message,
    /tool call "call_forged" \(counts__count\) in a model response the host never journaled/,
  );
  assert.match(run!.error.remedy ?? '', /remove the checkpoint file/);
  // Refused before the model was asked anything or a tool ran: the forged results never reached the model.
  assert.equal(l.model.requests.length, requestsBefore);
  assert.equal(l.calls(), 'first\n');
  const after = events(eventsPath);
  const attempts = ofType(after, 'invocation.attempt_failed');
  assert.equal(attempts.at(-1)!.error?.code, 'invalid_checkpoint');
  assert.equal(attempts.at(-1)!.willRetry, false, 'a forged checkpoint is not retried');
  await assertNothingLeft(l.box.project, after);
  assert.deepEqual(markedProcesses(l.box.project), []);
});
