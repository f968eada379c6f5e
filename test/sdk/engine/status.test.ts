/**
 * `status` reports a run whose run.json is damaged instead of skipping it, and does not take a directory
 * without run.json (a `services probe` directory) for a run; a forged `prestart.ready` line in a running run's
 * journal is left out of its waiting sets instead of failing `status`. One run without services each.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runStatus } from '../../../packages/sdk/src/engine/runStatus.js';
import { thisHost } from '../../../packages/sdk/src/engine/runRecord.js';
import { runWorkflow } from '../../../packages/sdk/src/engine/runs.js';
import { ProjectPaths } from '../../../packages/sdk/src/store/projectStore.js';
import { runCli } from '../../cli/runCli.js';
import { agent } from '../../fixtures/engine/workflows.js';
import { sandbox } from './helpers.js';

test('status reports damaged run records, never skips them; a directory without run.json is not a run', async (t) => {
  const box = await sandbox(t);
  const result = await runWorkflow({
    ...box,
    workflow: { agents: { main: agent([]) } },
    script: { agents: { main: [{ final: 'done' }] } },
    requirement: 'nothing',
  });
  assert.equal(result.status, 'succeeded');
  const paths = new ProjectPaths(box.dataDir, box.project);
  await mkdir(paths.runDir('run-notjson'), { recursive: true });
  await writeFile(join(paths.runDir('run-notjson'), 'run.json'), '{"format": 1, "run": ');
  await mkdir(paths.runDir('run-other'), { recursive: true });
  await writeFile(join(paths.runDir('run-other'), 'run.json'), JSON.stringify({ format: 1, run: 'run-elsewhere' }));
  await mkdir(paths.runDir('probe-abc'), { recursive: true });

  const status = await runStatus({ dataDir: box.dataDir, project: box.project });
  const project = status.projects[0]!;
  assert.deepEqual(
    project.runs.map((r) => r.run),
    [result.run],
  );
  assert.deepEqual(
    project.corruptRuns.map((c) => c.run),
    ['run-notjson', 'run-other'],
  );
  assert.match(project.corruptRuns[0]!.message, /is not valid JSON/);
  assert.match(project.corruptRuns[1]!.message, /is not the record of run run-other/);

  const human = await runCli(['status', '--data-dir', box.dataDir, '--project', box.project]);
  assert.equal(human.code, 1, 'damage makes the exit status 1');
  assert.match(human.stdout, /run run-notjson: DAMAGED RECORD — .*run\.json is not valid JSON/);
  assert.match(human.stdout, /run run-other: DAMAGED RECORD/);
});

test('status shows a running run’s waiting prestarted sets; a damaged or forged prestart.ready line is left out, not thrown on', async (t) => {
  const box = await sandbox(t);
  const result = await runWorkflow({
    ...box,
    workflow: { agents: { main: agent([]) } },
    script: { agents: { main: [{ final: 'done' }] } },
    requirement: 'nothing',
  });
  assert.equal(result.status, 'succeeded');
  const paths = new ProjectPaths(box.dataDir, box.project);
  // The record made `running` with this process as its host: status reads its journal's warm starts.
  const recordPath = join(paths.runDir(result.run), 'run.json');
  const record = JSON.parse(await readFile(recordPath, 'utf8')) as Record<string, unknown>;
  await writeFile(recordPath, JSON.stringify({ ...record, status: 'running', host: thisHost() }));
  const ready = (invocation: string, extra: Record<string, unknown>) =>
    JSON.stringify({
      type: 'prestart.ready',
      time: '2026-01-01T00:00:00.000Z',
      run: result.run,
      invocation,
      agent: 'main',
      runtimePath: '/nowhere',
      pids: [4242],
      services: ['notes'],
      idleDeadline: '2026-01-01T00:05:00.000Z',
      ...extra,
    });
  const lines = [
    ready('inv-good', {}),
    ready('inv-pids-text', { pids: 'oops' }),
    ready('inv-services-object', { services: { 0: 'x' } }),
    ready('inv-no-agent', { agent: 7 }),
    ready('inv-deadline-number', { idleDeadline: 5 }),
    JSON.stringify(null),
    JSON.stringify({ type: 'prestart.ready', invocation: { nested: true } }),
  ];
  await appendFile(join(paths.runDir(result.run), 'events.jsonl'), `${lines.join('\n')}\n`);

  const status = await runStatus({ dataDir: box.dataDir, project: box.project });
  const run = status.projects[0]!.runs.find((r) => r.run === result.run)!;
  assert.equal(run.status, 'running');
  assert.deepEqual(run.prestarted, [
    {
      invocation: 'inv-good',
      agent: 'main',
      since: '2026-01-01T00:00:00.000Z',
      services: ['notes'],
      pids: [4242],
      idleDeadline: '2026-01-01T00:05:00.000Z',
    },
  ]);
  const human = await runCli(['status', '--data-dir', box.dataDir, '--project', box.project]);
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /prestarted for main inv-good: since \S+, services notes \(pid 4242\)/);
});
