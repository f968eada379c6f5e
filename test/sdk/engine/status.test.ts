/**
 * `status` reports a run whose run.json is damaged instead of skipping it, and does not take a directory
 * without run.json (a `services probe` directory) for a run. One run without services: well under 1 s.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runStatus } from '../../../packages/sdk/src/engine/runStatus.js';
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
