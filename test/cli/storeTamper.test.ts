/**
 * The tamper-evident store through the built CLI: a real service rewriting
 * `$SCIENCEEVOLVE_PROJECT_ROOT/../workflow/accepted.json` is caught on the next read, `{"version": 2}` as
 * accepted.json is a coded error (never `undefined`, never exit 0), and `status`/`resume` report damaged
 * records and a damaged `format.json` with exit 1.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import { loadWorkflow } from '../../packages/sdk/src/store/workflowLoad.js';
import { assertGone } from '../fixtures/store/children.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { type EngineSandbox, assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';

const ROGUE = readFileSync(new URL('../fixtures/store/rewritesAccepted.cjs', import.meta.url), 'utf8');

/** A project whose Main has the notes service, loaded as version 1. */
async function loaded(t: TestContext, rogue = false): Promise<EngineSandbox & { paths: ProjectPaths }> {
  const box = await sandbox(t);
  await loadWorkflow({
    dataDir: box.dataDir,
    project: box.project,
    workflow: {
      agents: { main: agent(rogue ? [['rogue', 'rogue']] : [['notes', 'notes']]) },
      mcpDefinitions: rogue
        ? // Opted out of the sandbox on purpose: a sandboxed service cannot see the data dir at all
          // (sandboxHardening.test.ts); this shows what the hash chain catches when an unsandboxed one writes it.
          { rogue: { entrypoint: 'server.cjs', files: { 'server.cjs': ROGUE }, sandbox: false } }
        : { notes: fixtureDefinition('notesService.cjs') },
    },
  });
  return { ...box, paths: new ProjectPaths(box.dataDir, box.project) };
}

test('a real service rewriting $SCIENCEEVOLVE_PROJECT_ROOT/../workflow/accepted.json is store_tampered on the next read', async (t) => {
  const box = await loaded(t, true);
  const common = ['--data-dir', box.dataDir, '--project', box.project];
  const probe = await runCliToEnd(t, [
    'services',
    'probe',
    ...common,
    '--workspace',
    box.workspace,
    '--agent',
    'main',
    '--grace-ms',
    '300',
    '--json',
  ]);
  assert.equal(probe.code, 0, probe.stderr);
  const pid = (probe.json as { services: Array<{ pid: number }> }).services[0]!.pid;
  await assertGone(pid);
  await assertNothingLeft(box.project, []);

  // What the service saw: a directory of its own, holding none of the SDK's control files.
  const report = JSON.parse(await readFile(join(box.workspace, 'rogue-report.json'), 'utf8'));
  assert.equal(report.root, box.paths.serviceDataDir);
  assert.deepEqual(report.entries, []);
  assert.equal(report.wrote, box.paths.acceptedPath, 'the service did write accepted.json');

  for (const args of [
    ['workflow', 'show', ...common],
    ['workflow', 'history', ...common],
    ['workflow', 'verify', ...common],
    ['status', ...common],
  ]) {
    const r = await runCliToEnd(t, args);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout + r.stderr, /store_tampered|DAMAGED STORE/, args.join(' '));
    assert.ok((r.stdout + r.stderr).includes(box.paths.acceptedPath), `${args.join(' ')} names accepted.json`);
    assert.doesNotMatch(r.stdout, /allowMainReconfiguration": true/);
  }
  const show = await runCliToEnd(t, ['workflow', 'show', ...common, '--json']);
  const error = (show.json as { error: { code: string; data: { path: string } } }).error;
  assert.equal(error.code, 'store_tampered');
  assert.equal(error.data.path, box.paths.acceptedPath);
  // A run or a probe refuses to start on the edited store.
  const again = await runCliToEnd(t, [
    'services',
    'probe',
    ...common,
    '--workspace',
    box.workspace,
    '--agent',
    'main',
    '--json',
  ]);
  assert.equal(again.code, 1);
  assert.equal((again.json as { error: { code: string } }).error.code, 'store_tampered');
});

test('{"version": 2} as accepted.json: workflow show is store_tampered, exit 1, nothing undefined', async (t) => {
  const box = await loaded(t);
  await writeFile(box.paths.acceptedPath, '{"version": 2}');
  const common = ['--data-dir', box.dataDir, '--project', box.project];
  const human = await runCliToEnd(t, ['workflow', 'show', ...common]);
  assert.equal(human.code, 1);
  assert.match(human.stderr, /store_tampered/);
  assert.doesNotMatch(human.stdout + human.stderr, /undefined/);
  const json = await runCliToEnd(t, ['workflow', 'show', ...common, '--json']);
  assert.equal(json.code, 1);
  assert.equal((json.json as { error: { code: string } }).error.code, 'store_tampered');
  const verify = await runCliToEnd(t, ['workflow', 'verify', ...common, '--json']);
  assert.equal(verify.code, 1);
  const problems = (verify.json as { projects: Array<{ problems: Array<{ file: string }> }> }).projects[0]!.problems;
  assert.ok(problems.some((p) => p.file === box.paths.acceptedPath));
});

test('status exits 1 on a garbage format.json and on a truncated run.json, naming the run and the file', async (t) => {
  const box = await loaded(t);
  const runDir = box.paths.runDir('run-truncated');
  await mkdir(runDir, { recursive: true });
  const file = join(runDir, 'run.json');
  await writeFile(file, '{"format": 1, "run": "run-trunc');
  const status = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--project', box.project]);
  assert.equal(status.code, 1, status.stdout + status.stderr);
  assert.match(status.stdout, /run run-truncated: DAMAGED RECORD/);
  assert.ok(status.stdout.includes(file));

  const formatPath = join(box.dataDir, 'format.json');
  const format = await readFile(formatPath, 'utf8');
  await writeFile(formatPath, 'garbage');
  const garbage = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--json']);
  assert.equal(garbage.code, 1);
  assert.equal((garbage.json as { error: { code: string } }).error.code, 'io_error');
  await writeFile(formatPath, format);
});

test('resume reports a damaged run.json with its error instead of "nothing to resume"', async (t) => {
  const box = await loaded(t);
  const runDir = box.paths.runDir('run-truncated');
  await mkdir(runDir, { recursive: true });
  const file = join(runDir, 'run.json');
  await writeFile(file, '{"format": 1, "run": "run-trunc');
  const common = ['--data-dir', box.dataDir, '--project', box.project];
  const human = await runCliToEnd(t, ['resume', ...common]);
  assert.equal(human.code, 1, human.stderr);
  assert.match(human.stdout, /run-truncated: failed/);
  assert.match(human.stdout, /error store_tampered: run run-truncated was not resumed/);
  assert.ok(human.stdout.includes(file));
  // As `run` does, the error goes to stderr too, with its fix line.
  assert.match(human.stderr, /^run-truncated: error \[store_tampered\]: run run-truncated was not resumed/m);
  assert.match(human.stderr, /^ {2}fix: /m);
  const json = await runCliToEnd(t, ['resume', ...common, '--json']);
  assert.equal(json.code, 1);
  const runs = (json.json as { runs: Array<{ run: string; error: { code: string; data: { path: string } } }> }).runs;
  assert.deepEqual(
    runs.map((r) => [r.run, r.error.code, r.error.data.path]),
    [['run-truncated', 'store_tampered', file]],
  );
  assert.deepEqual(await readdir(runDir), ['run.json'], 'the damaged record is left as it is');
});

test('a stored source edited under mcp/<digest>/ is refused before a service runs from it', async (t) => {
  const box = await loaded(t);
  const digest = (await readdir(box.paths.mcpDir)).find((d) => /^[0-9a-f]{64}$/.test(d))!;
  const server = join(box.paths.sourceDir(digest, 'notes'), 'server.cjs');
  await writeFile(server, `require('node:fs').writeFileSync('${join(box.base, 'ran')}', 'x');\n`);
  const probe = await runCliToEnd(t, [
    'services',
    'probe',
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    '--workspace',
    box.workspace,
    '--agent',
    'main',
    '--grace-ms',
    '300',
    '--json',
  ]);
  assert.equal(probe.code, 1, probe.stderr);
  const service = (
    probe.json as { services: Array<{ state: string; pid: number | null; error: { code: string; message: string } }> }
  ).services[0]!;
  assert.equal(service.state, 'failed');
  assert.equal(service.error.code, 'store_tampered');
  assert.match(service.error.message, /server\.cjs differs/);
  assert.equal(service.pid, null, 'never started');
  await assert.rejects(readFile(join(box.base, 'ran')), { code: 'ENOENT' });
  await assertNothingLeft(box.project, []);
});
