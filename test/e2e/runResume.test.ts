/**
 * The host SIGKILLed mid-run, then `scienceevolve resume`: the supervisor collects the dead host's services,
 * `status` shows the run interrupted, and resume continues Main's invocation from its last checkpoint with
 * new processes: no tool call whose result was recorded runs again (a counting tool proves it, and the
 * worker Main had delegated is not delegated again); the run finishes and leaves no process of the project
 * behind. Real services and two CLI processes: about 10–20 s on 2 cores; each step has its own timeout.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runEventsPath, runRecordPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunRecord } from '../../packages/sdk/src/engine/runRecord.js';
import type { StatusReport } from '../../packages/sdk/src/engine/runStatus.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, markedProcesses, ofType, sandbox } from '../sdk/engine/helpers.js';
import { runEvents as events } from './helpers.js';

test('SIGKILL the host mid-run, then resume finishes the run and nothing survives', async (t) => {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  const scriptPath = join(box.base, 'script.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      agents: {
        main: agent([
          ['slow', 'slow'],
          ['counts', 'counts'],
        ]),
        analyst: agent([
          ['adds', 'adds'],
          ['counts', 'counts'],
        ]),
      },
      mcpDefinitions: {
        slow: fixtureDefinition('sleepsOnCall.cjs'),
        adds: fixtureDefinition('addsNumbers.cjs'),
        counts: fixtureDefinition('countsCalls.cjs'),
      },
    }),
  );
  await writeFile(
    scriptPath,
    JSON.stringify({
      agents: {
        main: [
          { call: 'counts__count', arguments: { label: 'main-first' } },
          { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'add 1 and 2' } },
          { call: 'slow__sleep', arguments: { ms: 1500 } },
          { call: 'counts__count', arguments: { label: 'main-last' } },
          { final: '{{0}} sum={{1}} {{2}} {{3}}' },
        ],
        analyst: [
          { call: 'counts__count', arguments: { label: 'analyst' } },
          { call: 'adds__add', arguments: { a: 1, b: 2 } },
          { final: '{{1}}' },
        ],
      },
    }),
  );
  const common = ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '500'];
  const host = startCli(t, [
    'run',
    ...common,
    '--workspace',
    box.workspace,
    '--workflow',
    workflowPath,
    '--script',
    scriptPath,
    'sleep',
  ]);
  await host.waitForStderr(/\[main\] calling slow__sleep/);
  process.kill(host.pid, 'SIGKILL');
  assert.equal(await host.exited, null);
  await assertGone(host.pid);

  const paths = new ProjectPaths(box.dataDir, box.project);
  const runId = /run (run-\S+) started/.exec(host.stderr())![1]!;
  const before = events(runEventsPath(paths, runId));
  const oldPids = ofType(before, 'service.ready').map((e) => e.pid!);
  assert.equal(oldPids.length, 4, 'main and the analyst had started their services');
  assert.equal(readFileSync(join(box.workspace, 'calls.log'), 'utf8'), 'main-first\nanalyst\n');
  // The dead host's supervisor collects its services (SIGTERM, 500 ms grace, SIGKILL).
  for (const pid of oldPids) await assertGone(pid, 10_000);

  const status = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--project', box.project, '--json']);
  assert.equal((status.json as StatusReport).projects[0]!.runs[0]!.status, 'interrupted');

  const resumed = await runCliToEnd(t, ['resume', ...common, '--json']);
  assert.equal(resumed.code, 0, resumed.stderr);
  const doc = resumed.json as { runs: Array<{ run: string; status: string; output: string }> };
  assert.deepEqual(doc.runs, [
    { run: runId, status: 'succeeded', output: 'main-first#1 sum=3 slept 1500 main-last#1', error: null },
  ]);
  assert.match(resumed.stderr, /\[main\] invocation inv-\S+ attempt 2 \(restarted\) from its checkpoint/);
  assert.equal(
    readFileSync(join(box.workspace, 'calls.log'), 'utf8'),
    'main-first\nanalyst\nmain-last\n',
    'no call whose result was recorded ran again',
  );

  const record = JSON.parse(readFileSync(runRecordPath(paths, runId), 'utf8')) as RunRecord;
  assert.equal(record.status, 'succeeded');
  assert.equal(record.resumes, 1);
  const main = record.invocations.find((i) => i.agent === 'main')!;
  assert.equal(main.restarted, true);
  assert.deepEqual(
    main.attempts.map((a) => [a.outcome, a.restarted]),
    [
      ['interrupted', false],
      ['succeeded', true],
    ],
  );
  // Main's delegation was recorded in its checkpoint: the analyst ran once.
  assert.deepEqual(
    record.invocations.filter((i) => i.agent === 'analyst').map((i) => i.state),
    ['succeeded'],
  );
  assert.equal(main.attempts[1]!.fromCheckpoint, true);
  const after = events(runEventsPath(paths, runId));
  assert.ok(after.some((e) => e.type === 'run.resumed'));
  assert.equal(after.at(-1)!.type, 'run.finished');
  const newPids = ofType(after.slice(before.length), 'service.ready').map((e) => e.pid!);
  assert.equal(newPids.length, 2, "only Main's services started again");
  for (const pid of newPids) assert.ok(!oldPids.includes(pid), 'new processes');
  await assertNothingLeft(box.project, after);
  assert.deepEqual(markedProcesses(box.project), []);
});

test('resume --json of a failed run: the error without the service stderr lines run.json keeps', async (t) => {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  const scriptPath = join(box.base, 'script.json');
  // The service exits at start, printing a line on stderr.
  const needs = {
    entrypoint: 'server.cjs',
    files: { 'server.cjs': "process.stderr.write('API_KEY is not set\\n');\nprocess.exit(2);\n" },
  };
  await writeFile(
    workflowPath,
    JSON.stringify({
      orchestration: { invocationRetries: 0 },
      agents: { main: agent([['needs', 'needs']]) },
      mcpDefinitions: { needs },
    }),
  );
  await writeFile(scriptPath, JSON.stringify({ agents: { main: [{ final: 'never' }] } }));
  const common = ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '300'];
  const run = await runCliToEnd(t, [
    'run',
    ...common,
    '--workspace',
    box.workspace,
    '--workflow',
    workflowPath,
    '--script',
    scriptPath,
    '--json',
    'x',
  ]);
  assert.equal(run.code, 1, run.stderr);
  const runId = (run.json as { run: string }).run;
  const record = readFileSync(runRecordPath(new ProjectPaths(box.dataDir, box.project), runId), 'utf8');
  assert.match(record, /"stderrTail": \[\s*"API_KEY is not set"/, 'run.json keeps the lines');

  const resumed = await runCliToEnd(t, ['resume', ...common, '--run', runId, '--json']);
  assert.equal(resumed.code, 1, resumed.stderr);
  const [only] = (resumed.json as { runs: Array<{ status: string; error: { code: string } }> }).runs;
  assert.equal(only?.status, 'failed');
  assert.equal(only?.error.code, 'service_exited');
  assert.doesNotMatch(resumed.stdout, /API_KEY is not set|stderrTail/);
  await assertNothingLeft(box.project, []);
});

test('resume without --run names a run whose record is damaged and exits 1, never "no runs" in silence', async (t) => {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  await writeFile(workflowPath, JSON.stringify({ agents: { main: agent([]) } }));
  const common = ['--data-dir', box.dataDir, '--project', box.project];
  const loaded = await runCliToEnd(t, ['workflow', 'load', workflowPath, ...common]);
  assert.equal(loaded.code, 0, loaded.stderr);
  const runDir = join(box.dataDir, 'projects', box.project, 'runs', 'run-damaged');
  await mkdir(runDir, { recursive: true });
  await writeFile(join(runDir, 'run.json'), '{"format": 1, "run": "run-dam');

  const resumed = await runCliToEnd(t, ['resume', ...common]);
  assert.equal(resumed.code, 1, resumed.stderr);
  // Listed as a failed run with its error (store_tampered naming the run and the file), never dropped.
  assert.match(
    resumed.stdout,
    /^run-damaged: failed\n {2}error store_tampered: run run-damaged was not resumed: .*run\.json is not valid JSON/,
  );
  assert.doesNotMatch(resumed.stdout, /no interrupted or cancelled runs/);
});
