/**
 * A model-loop run through the real CLI killed (SIGKILL) mid-conversation after its checkpoint went to the
 * log beside the checkpoint file — the file holds the first step, the log the later ones — then
 * `scienceevolve resume`: the conversation continues from the log's last record, no recorded call is made
 * again (the counting service proves it), and the log is gone once the run ends. A torn record at the
 * log's end (a save that was never reported durable) is left out; a damaged record before the last fails
 * the resume with `invalid_checkpoint` naming the log, before the model is asked or a tool runs.
 *
 * The model holds its answer to the first request that carries `holdAt` tool results (a 60 s delay): by
 * then the loop has saved that step (it saves before the next model call, and a step's calls wait for the
 * previous step's save), so the host is killed exactly between a recorded step and the next turn. Real
 * services and three CLI processes per test: about 5–15 s on 2 cores; each step has its own timeout.
 */
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { checkpointLogPath } from '../../packages/sdk/src/engine/checkpointLog.js';
import type { RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import { runEventsPath, runRecordPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { ErrorRecord } from '../../packages/sdk/src/events/runEvents.js';
import type { ModelLoopCheckpoint } from '../../packages/sdk/src/harness/modelLoopCheckpoint.js';
import { splitLog } from '../../packages/sdk/src/store/appendLog.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { fixtureDefinition } from '../fixtures/engine/workflows.js';
import { type ModelServer, scriptedPolicy, startModelServer } from '../fixtures/modelServer/index.js';
import { assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';
import { BIN, assertGone, spawnNode, until, runEvents as events } from './helpers.js';

const KEY_ENV = 'SE_E2E_MODEL_KEY';
const KEY = 'sk-resume-log-test';
const CLI_ENV = { ...process.env, [KEY_ENV]: KEY };

interface Killed {
  model: ModelServer;
  common: string[];
  runId: string;
  eventsPath: string;
  /** The checkpoint file and its log. */
  file: string;
  log: string;
  calls(): string;
  project: string;
}

/**
 * Main (openai chat) counts each of `labels` in its own step, then answers with every result; the model
 * holds its answer to the first request carrying `holdAt` results. Runs the CLI to that point and SIGKILLs
 * it once the step is checkpointed.
 */
async function killedMidConversation(t: TestContext, labels: string[], holdAt: number): Promise<Killed> {
  const box = await sandbox(t);
  const policy = scriptedPolicy(
    labels.map((label) => ({ call: 'counts__count', arguments: { label } })),
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
      if (!holding && request.messages.flatMap((m) => m.toolResults ?? []).length === holdAt) {
        holding = true;
        onHeld();
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
          instructions: 'Count.',
          harness: { type: 'openai', model: 'test-model', baseUrl: `${model.url}/v1`, apiKeyEnv: KEY_ENV },
          mcpServers: [{ name: 'counts', project: 'counts' }],
        },
      },
      mcpDefinitions: { counts: fixtureDefinition('countsCalls.cjs') },
    }),
  );
  const common = ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '500'];
  const paths = new ProjectPaths(box.dataDir, box.project);
  const host = spawnNode(
    t,
    [BIN, 'run', ...common, '--workspace', box.workspace, '--workflow', workflowPath, 'count'],
    {
      env: CLI_ENV,
    },
  );
  const runId = await until('the run id on stderr', () => /run (run-\S+) started/.exec(host.stderr())?.[1]);
  await held;
  const eventsPath = runEventsPath(paths, runId);
  await until(`the checkpoint event of step ${holdAt}`, () =>
    ofType(events(eventsPath), 'invocation.checkpoint').some((e) => e.step === holdAt) ? true : undefined,
  );
  process.kill(host.pid, 'SIGKILL');
  assert.equal((await host.exited).signal, 'SIGKILL');
  await assertGone(host.pid);
  for (const pid of ofType(events(eventsPath), 'service.ready').map((e) => e.pid!)) await assertGone(pid);
  const record = JSON.parse(readFileSync(runRecordPath(paths, runId), 'utf8')) as RunRecord;
  const file = record.invocations[0]!.checkpoint!;
  const calls = () => {
    const path = join(box.workspace, 'calls.log');
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  };
  return { model, common, runId, eventsPath, file, log: checkpointLogPath(file), calls, project: box.project };
}

async function resume(t: TestContext, k: Killed): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = spawnNode(t, [BIN, 'resume', ...k.common, '--json'], { env: CLI_ENV });
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), 60_000);
  const { code } = await cli.exited;
  clearTimeout(timer);
  await assertGone(cli.pid);
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

test('SIGKILL after the log holds a step: resume continues from the log, repeats no call, and a torn last record is left out', async (t) => {
  const k = await killedMidConversation(t, ['first', 'second', 'third'], 2);
  assert.equal(k.calls(), 'first\nsecond\n');
  // The file holds the first step; the log (its header and one record) the second.
  const file = JSON.parse(readFileSync(k.file, 'utf8')) as { state: ModelLoopCheckpoint };
  assert.equal(file.state.turn, 1);
  const split = splitLog(readFileSync(k.log));
  assert.equal(split.damaged, undefined);
  assert.equal(split.lines?.length, 2, 'a header and one record');
  // A save that never became durable: part of a record at the log's end.
  const record = Buffer.from(`${readFileSync(k.log, 'utf8').split('\n')[1]!}`);
  appendFileSync(k.log, record.subarray(0, Math.floor(record.length / 2)));

  const requestsBefore = k.model.requests.length;
  const resumed = await resume(t, k);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual((JSON.parse(resumed.stdout) as { runs: unknown[] }).runs, [
    { run: k.runId, status: 'succeeded', output: 'Main counted first#1 and second#1 and third#1', error: null },
  ]);
  assert.equal(k.calls(), 'first\nsecond\nthird\n', 'no recorded call was made again');
  // The resumed loop's first request already carries both recorded results.
  const first = k.model.requests[requestsBefore]!;
  assert.equal(first.messages.flatMap((m) => m.toolResults ?? []).length, 2);
  // The run's end wrote the whole checkpoint file and removed the log.
  assert.equal(existsSync(k.log), false, 'the log is gone');
  const final = JSON.parse(readFileSync(k.file, 'utf8')) as { attempt: number; state: ModelLoopCheckpoint };
  assert.equal(final.attempt, 2);
  assert.equal(final.state.final, 'Main counted first#1 and second#1 and third#1');
  await assertNothingLeft(k.project, events(k.eventsPath));
  assert.deepEqual(markedProcesses(k.project), []);
});

test('a damaged record before the log’s last fails resume with invalid_checkpoint naming the log; nothing runs', async (t) => {
  const k = await killedMidConversation(t, ['first', 'second', 'third', 'fourth'], 3);
  assert.equal(k.calls(), 'first\nsecond\nthird\n');
  const bytes = readFileSync(k.log);
  const lines = bytes.toString('utf8').split('\n');
  assert.equal(lines.length, 4, 'a header, two records and the end');
  // A byte of the first record (the second step) changed.
  const at = Buffer.byteLength(`${lines[0]!}\n`) + 30;
  bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
  writeFileSync(k.log, bytes);

  const requestsBefore = k.model.requests.length;
  const resumed = await resume(t, k);
  assert.notEqual(resumed.code, 0, resumed.stdout);
  const [run] = (JSON.parse(resumed.stdout) as { runs: { run: string; status: string; error: ErrorRecord }[] }).runs;
  assert.equal(run!.status, 'failed');
  assert.equal(run!.error.code, 'invalid_checkpoint');
  assert.match(run!.error.message, /line 2 \(at byte \d+\) is damaged: its checksum does not match/);
  assert.ok(run!.error.message.includes(k.log), run!.error.message);
  assert.match(run!.error.remedy ?? '', /remove the log/);
  assert.equal(k.model.requests.length, requestsBefore, 'the model was not asked');
  assert.equal(k.calls(), 'first\nsecond\nthird\n', 'no tool ran');
  const after = events(k.eventsPath);
  assert.equal(ofType(after, 'invocation.attempt_failed').at(-1)!.error?.code, 'invalid_checkpoint');
  await assertNothingLeft(k.project, after);
  assert.deepEqual(markedProcesses(k.project), []);
});
