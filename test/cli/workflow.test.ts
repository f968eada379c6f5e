/**
 * `scienceevolve workflow load | show` and `migrate` (SPEC §13): `--json` shapes, exit codes and the
 * data dir layout they write (SPEC §4), run as the built bin.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import stableStringify from 'fast-json-stable-stringify';
import { assertGone } from '../fixtures/store/children.js';
import { tempDir } from '../fixtures/store/tempDir.js';
import { BIN, assertErrorJson, runCli, workflowFixture } from './runCli.js';

const MINIMAL = workflowFixture('minimal.json');
/** A data dir for usage errors, which must fail before touching it: it never exists. */
const NOWHERE = join(tmpdir(), `scienceevolve-never-${process.pid}`);

/** The digest recipe of docs/data-dir.md. */
function digestOf(def: { files: unknown; entrypoint: string; command?: string; args?: string[]; envFrom?: object }) {
  const canonical = stableStringify({
    files: def.files,
    entrypoint: def.entrypoint,
    command: def.command ?? 'node',
    args: def.args ?? [],
    envFrom: def.envFrom ?? {},
  });
  return createHash('sha256').update(canonical).digest('hex');
}

async function minimalDigest(): Promise<string> {
  const doc = JSON.parse(await readFile(MINIMAL, 'utf8'));
  return digestOf(doc.mcpDefinitions.echo);
}

describe('scienceevolve workflow load', { concurrency: 2 }, () => {
  test('--json: {project, version, digests, changedMcps, changedAgents}; the layout of SPEC §4', async (t) => {
    const dataDir = join(await tempDir(t), 'data');
    const r = await runCli(['workflow', 'load', MINIMAL, '--data-dir', dataDir, '--project', 'study', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const digest = await minimalDigest();
    assert.deepEqual(r.json, {
      project: 'study',
      version: 1,
      digests: { echo: digest },
      changedMcps: ['echo'],
      changedAgents: ['main'],
    });
    const project = join(dataDir, 'projects', 'study');
    assert.deepEqual((await readdir(dataDir)).sort(), ['format.json', 'projects']);
    assert.deepEqual((await readdir(join(project, 'workflow'))).sort(), ['accepted.json', 'versions']);
    assert.deepEqual(await readdir(join(project, 'workflow', 'versions')), ['1.json']);
    assert.deepEqual(await readdir(join(project, 'mcp')), [digest]);
    assert.deepEqual(await readdir(join(project, 'mcp', digest)), ['project-echo']);
    assert.equal(
      await readFile(join(project, 'mcp', digest, 'project-echo', 'server.cjs'), 'utf8'),
      'process.stdin.pipe(process.stdout);\n',
    );
    // accepted.json names the version in force and the sha256 of its record's canonical JSON (docs/data-dir.md).
    const versionText = await readFile(join(project, 'workflow', 'versions', '1.json'), 'utf8');
    const digest1 = createHash('sha256')
      .update(stableStringify(JSON.parse(versionText)))
      .digest('hex');
    assert.deepEqual(JSON.parse(await readFile(join(project, 'workflow', 'accepted.json'), 'utf8')), {
      version: 1,
      digest: digest1,
    });
  });

  test('a second identical load keeps the version; a changed one makes the next', async (t) => {
    const dir = await tempDir(t);
    const dataDir = join(dir, 'data');
    const args = ['--data-dir', dataDir, '--project', 'study', '--json'];
    assert.equal((await runCli(['workflow', 'load', MINIMAL, ...args])).code, 0);
    const again = await runCli(['workflow', 'load', MINIMAL, ...args]);
    assert.equal(again.code, 0);
    assert.deepEqual(again.json, {
      project: 'study',
      version: 1,
      digests: { echo: await minimalDigest() },
      changedMcps: [],
      changedAgents: [],
    });
    const human = await runCli(['workflow', 'load', MINIMAL, '--data-dir', dataDir, '--project', 'study']);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^project study: unchanged, version 1 stays in force$/m);
    assert.match(human.stdout, new RegExp(`^ {2}echo {2}${await minimalDigest()}$`, 'm'));

    const doc = JSON.parse(await readFile(MINIMAL, 'utf8'));
    doc.agents.worker = { mcpServers: [{ name: 'echo', project: 'echo' }] };
    doc.mcpDefinitions.echo.args = ['--loud'];
    const file = join(dir, 'v2.json');
    await writeFile(file, JSON.stringify(doc));
    const v2 = await runCli(['workflow', 'load', '--workflow', file, ...args]);
    assert.equal(v2.code, 0);
    assert.deepEqual(v2.json, {
      project: 'study',
      version: 2,
      digests: { echo: digestOf(doc.mcpDefinitions.echo) },
      changedMcps: ['echo'],
      changedAgents: ['main', 'worker'],
    });
  });

  test('--workspace derives the project id from the real path', async (t) => {
    const dir = await tempDir(t);
    const workspace = join(dir, 'My Study');
    await mkdir(workspace);
    const r = await runCli([
      'workflow',
      'load',
      MINIMAL,
      '--data-dir',
      join(dir, 'data'),
      '--workspace',
      workspace,
      '--json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const hash = createHash('sha256')
      .update(await realpath(workspace))
      .digest('hex')
      .slice(0, 12);
    assert.equal((r.json as { project: string }).project, `my-study-${hash}`);
  });

  test('an invalid workflow: exit 1, invalid_workflow with every issue in data.errors; nothing accepted', async (t) => {
    const dataDir = join(await tempDir(t), 'data');
    const r = await runCli([
      'workflow',
      'load',
      workflowFixture('severalFaults.json'),
      '--data-dir',
      dataDir,
      '--project',
      'study',
      '--json',
    ]);
    assert.equal(r.code, 1);
    const error = assertErrorJson(r.json, 'invalid_workflow');
    assert.equal((error.data as { errors: unknown[] }).errors.length, 7);
    assert.match(r.stderr, /^error \[invalid_workflow\]: /m);
  });

  test('a data dir of a newer format: exit 1, data_dir_too_new', async (t) => {
    const dataDir = await tempDir(t);
    await writeFile(join(dataDir, 'format.json'), '{"format": 99}');
    const r = await runCli(['workflow', 'load', MINIMAL, '--data-dir', dataDir, '--project', 'p', '--json']);
    assert.equal(r.code, 1);
    assertErrorJson(r.json, 'data_dir_too_new');
  });

  for (const [title, args] of [
    ['no --data-dir', ['workflow', 'load', MINIMAL, '--project', 'p', '--json']],
    ['neither --project nor --workspace', ['workflow', 'load', MINIMAL, '--data-dir', NOWHERE, '--json']],
    ['an unknown subcommand', ['workflow', 'remove', '--json']],
    ['an unknown command', ['frobnicate', '--json']],
  ] as const) {
    test(`usage error (${title}): exit 2`, async () => {
      const r = await runCli([...args]);
      assert.equal(r.code, 2);
      assertErrorJson(r.json, 'usage');
      assert.equal(existsSync(NOWHERE), false, 'a usage error touches nothing');
    });
  }
});

describe('scienceevolve workflow show', { concurrency: 2 }, () => {
  test('--json: {project, version, acceptedAt, by, digests, workflow}; --version N picks one', async (t) => {
    const dir = await tempDir(t);
    const dataDir = join(dir, 'data');
    const common = ['--data-dir', dataDir, '--project', 'study', '--json'];
    await runCli(['workflow', 'load', MINIMAL, ...common]);
    const doc = JSON.parse(await readFile(MINIMAL, 'utf8'));
    doc.orchestration = { git: true };
    const file = join(dir, 'v2.json');
    await writeFile(file, JSON.stringify(doc));
    await runCli(['workflow', 'load', file, ...common]);

    const r = await runCli(['workflow', 'show', ...common]);
    assert.equal(r.code, 0);
    const shown = r.json as Record<string, unknown>;
    assert.deepEqual(Object.keys(shown).sort(), ['acceptedAt', 'by', 'digests', 'project', 'version', 'workflow']);
    assert.equal(shown.project, 'study');
    assert.equal(shown.version, 2);
    assert.equal(shown.by, 'operator');
    assert.ok(!Number.isNaN(Date.parse(shown.acceptedAt as string)));
    assert.deepEqual(shown.digests, { echo: await minimalDigest() });
    assert.deepEqual((shown.workflow as { orchestration: unknown }).orchestration, {
      allowMainReconfiguration: false,
      git: true,
      invocationRetries: 1,
      allowedRemoteUrls: [],
    });

    const v1 = await runCli(['workflow', 'show', ...common, '--version', '1']);
    assert.equal(v1.code, 0);
    assert.equal((v1.json as { version: number }).version, 1);
    assert.equal((v1.json as { workflow: { orchestration: { git: boolean } } }).workflow.orchestration.git, false);

    const human = await runCli(['workflow', 'show', '--data-dir', dataDir, '--project', 'study']);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /^project study, version 2 \(accepted .* by operator\)$/m);

    const unknown = await runCli(['workflow', 'show', ...common, '--version', '7']);
    assert.equal(unknown.code, 1);
    assertErrorJson(unknown.json, 'unknown_version');
  });

  test('a project with nothing accepted: exit 1, unknown_project, and the project is not created', async (t) => {
    const dataDir = join(await tempDir(t), 'data');
    const r = await runCli(['workflow', 'show', '--data-dir', dataDir, '--project', 'nothing', '--json']);
    assert.equal(r.code, 1);
    assertErrorJson(r.json, 'unknown_project');
    assert.deepEqual(await readdir(dataDir), ['format.json']);
  });

  for (const [title, args] of [
    ['no --data-dir', ['workflow', 'show', '--project', 'p', '--json']],
    [
      'a version that is not a number',
      ['workflow', 'show', '--data-dir', NOWHERE, '--project', 'p', '--version', 'x', '--json'],
    ],
  ] as const) {
    test(`usage error (${title}): exit 2`, async () => {
      const r = await runCli([...args]);
      assert.equal(r.code, 2);
      assertErrorJson(r.json, 'usage');
      assert.equal(existsSync(NOWHERE), false, 'a usage error touches nothing');
    });
  }
});

describe('scienceevolve migrate and help', { concurrency: 2 }, () => {
  test('migrate upgrades an older data dir that workflow load refused', async (t) => {
    const dataDir = await tempDir(t);
    await writeFile(join(dataDir, 'format.json'), '{"format": 0}');
    const refused = await runCli(['workflow', 'load', MINIMAL, '--data-dir', dataDir, '--project', 'p', '--json']);
    assert.equal(refused.code, 1);
    const error = assertErrorJson(refused.json, 'data_dir_needs_migration');
    assert.match(error.remedy ?? '', /scienceevolve migrate/);

    const migrated = await runCli(['migrate', '--data-dir', dataDir, '--json']);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.deepEqual(migrated.json, { from: 0, to: 2 });
    assert.equal((await runCli(['workflow', 'load', MINIMAL, '--data-dir', dataDir, '--project', 'p'])).code, 0);
  });

  test('migrate without --data-dir: exit 2', async () => {
    const r = await runCli(['migrate', '--json']);
    assert.equal(r.code, 2);
    assertErrorJson(r.json, 'usage');
  });

  test('--help: exit 0 with the commands; no command at all: exit 2', async () => {
    const help = await runCli(['--help']);
    assert.equal(help.code, 0);
    for (const command of ['validate', 'workflow load', 'workflow show', 'migrate'])
      assert.ok(help.stdout.includes(command));
    assert.equal((await runCli([])).code, 2);
  });

  test('--debug adds the stack trace that is otherwise never printed', async (t) => {
    const missing = join(await tempDir(t), 'missing.json');
    const r = spawnSync(process.execPath, [BIN, 'validate', missing, '--debug'], { encoding: 'utf8' });
    await assertGone(r.pid);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^error \[io_error\]/m);
    assert.match(r.stderr, /^\s+at /m);
  });
});
