/**
 * The tamper-evident store: version files and accepted.json as a hash chain of canonical JSON, checked on
 * every read (store_tampered naming the file), `verifyProjects` over a whole project, the format-1 →
 * format-2 migration, and damaged records reported by status and resume.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  acceptWorkflow,
  migrateDataDir,
  openProject,
  readAccepted,
  readVersion,
  readVersions,
  runStatus,
  verifyProjects,
} from '../../../packages/sdk/src/internal.js';
import { listRunRecords, readRunRecord } from '../../../packages/sdk/src/engine/runRecord.js';
import type { ProjectPaths } from '../../../packages/sdk/src/store/projectStore.js';
import { recordDigest, workflowDigest } from '../../../packages/sdk/src/store/storeChain.js';
import { definitionDigest } from '../../../packages/sdk/src/workflow/digest.js';
import { twoVersions } from '../../fixtures/store/twoVersions.js';
import { changed } from '../../fixtures/workflows/documents.js';

function withCode(code: string, mentions?: string) {
  return (error: unknown) => {
    const e = error as { code?: string; message?: string; remedy?: string };
    assert.equal(e.code, code, e.message);
    if (mentions !== undefined) assert.ok(e.message?.includes(mentions), `"${e.message}" names ${mentions}`);
    assert.ok(e.remedy !== undefined && e.remedy.length > 0, 'a remedy');
    assert.doesNotMatch(e.message ?? '', /undefined/);
    return true;
  };
}

/** Writes `record` as the SDK would: a forger who knows the format. */
async function writeLikeTheSdk(path: string, record: unknown): Promise<void> {
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`);
}

describe('the hash chain', () => {
  test('a clean store verifies, and every read returns what was accepted', async (t) => {
    const paths = await twoVersions(t);
    const report = await verifyProjects({ dataDir: paths.dataDir, project: 'p' });
    assert.equal(report.ok, true, JSON.stringify(report.projects[0]?.problems));
    assert.deepEqual(report.projects[0], {
      project: 'p',
      ok: true,
      acceptedVersion: 2,
      versions: 2,
      sources: 1,
      problems: [],
      notes: [],
    });
    assert.deepEqual(
      (await readVersions(paths)).map((v) => v.version),
      [1, 2],
    );
    assert.equal((await readAccepted(paths))?.workflow.agents.main?.instructions, 'second');
  });

  test('an edit of any byte of a version file or accepted.json is detected (every position, flipped)', async (t) => {
    const paths = await twoVersions(t);
    const files = [paths.acceptedPath, paths.versionPath(1), paths.versionPath(2)];
    let positions = 0;
    for (const file of files) {
      const original = await readFile(file);
      for (let at = 0; at < original.length; at++) {
        const edited = Buffer.from(original);
        edited[at] = (edited[at] as number) ^ 0x01;
        await writeFile(file, edited);
        const report = await verifyProjects({ dataDir: paths.dataDir, project: 'p' });
        const project = report.projects[0]!;
        if (project.ok || !project.problems.some((p) => p.message.includes(file))) {
          assert.fail(`flipping byte ${at} of ${file} went unnoticed: ${JSON.stringify(project.problems)}`);
        }
        // The reads that cross the edited file refuse it too.
        if (file !== paths.versionPath(1)) await assert.rejects(readAccepted(paths), withCode('store_tampered'));
        else await assert.rejects(readVersion(paths, 1), withCode('store_tampered'));
        positions += 1;
      }
      await writeFile(file, original);
    }
    assert.ok(positions > 1000, `${positions} positions flipped`);
    assert.equal((await verifyProjects({ dataDir: paths.dataDir, project: 'p' })).ok, true, 'restored');
  });

  test('{"version": 2} as accepted.json is store_tampered, however it is written', async (t) => {
    const paths = await twoVersions(t);
    for (const text of ['{"version":2}', '{\n  "version": 2\n}\n']) {
      await writeFile(paths.acceptedPath, text);
      await assert.rejects(readAccepted(paths), withCode('store_tampered', paths.acceptedPath));
      const report = await verifyProjects({ dataDir: paths.dataDir, project: 'p' });
      assert.equal(report.ok, false);
    }
  });

  test('a version rewritten by a forger who recomputes its digests breaks the link to accepted.json', async (t) => {
    const paths = await twoVersions(t);
    const v2 = JSON.parse(await readFile(paths.versionPath(2), 'utf8'));
    v2.workflow.orchestration.allowMainReconfiguration = true;
    v2.workflowDigest = workflowDigest(v2.workflow);
    await writeLikeTheSdk(paths.versionPath(2), v2);
    await assert.rejects(readAccepted(paths), withCode('store_tampered', paths.versionPath(2)));
  });

  test('accepted.json moved back over newer versions is store_tampered in verify', async (t) => {
    const paths = await twoVersions(t);
    await acceptWorkflow(
      paths,
      changed((d) => (d.agents.main.instructions = 'third')),
    );
    const v1 = JSON.parse(await readFile(paths.versionPath(1), 'utf8'));
    await writeLikeTheSdk(paths.acceptedPath, { version: 1, digest: recordDigest(v1) });
    const report = await verifyProjects({ dataDir: paths.dataDir, project: 'p' });
    assert.equal(report.ok, false);
    assert.match(report.projects[0]!.problems.map((p) => p.message).join('\n'), /moved back/);
  });

  test('a stored name edited to ../../x is refused by the schema before any path is built', async (t) => {
    const paths = await twoVersions(t);
    const outside = join(paths.dataDir, '..', 'x');
    // The forger rewrites the name and every digest the chain checks, so only the schema can refuse it.
    const v2 = JSON.parse(await readFile(paths.versionPath(2), 'utf8'));
    const definition = v2.workflow.mcpDefinitions.tools;
    v2.workflow.mcpDefinitions = { '../../x': definition };
    v2.digests = { '../../x': definitionDigest(definition) };
    v2.workflow.agents.main.mcpServers = [{ name: '../../x', project: '../../x' }];
    v2.workflowDigest = workflowDigest(v2.workflow);
    await writeLikeTheSdk(paths.versionPath(2), v2);
    await writeLikeTheSdk(paths.acceptedPath, { version: 2, digest: recordDigest(v2) });
    await assert.rejects(readAccepted(paths), (error: unknown) => {
      withCode('store_tampered', paths.versionPath(2))(error);
      assert.match((error as Error).message, /no longer validates/);
      return true;
    });
    const report = await verifyProjects({ dataDir: paths.dataDir, project: 'p' });
    assert.equal(report.ok, false);
    await assert.rejects(stat(outside), { code: 'ENOENT' });
    // And path building itself refuses what is not a name or a digest.
    assert.throws(() => paths.sourceDir(definitionDigest(definition), '../../x'), withCode('unsafe_path'));
    assert.throws(() => paths.sourceDir('../../x', 'tools'), withCode('unsafe_path'));
    assert.throws(() => paths.runDir('../x'), withCode('unsafe_path'));
    assert.throws(() => paths.invocationDir('run-1', '../../x'), withCode('unsafe_path'));
  });

  test('a stored source edited, extended or removed is found by verify against its digest', async (t) => {
    const paths = await twoVersions(t);
    const accepted = (await readAccepted(paths))!;
    const dir = paths.sourceDir(accepted.digests.tools!, 'tools');
    const file = join(dir, 'server.cjs');
    const original = await readFile(file, 'utf8');
    await writeFile(file, `${original}// edited\n`);
    let problems = (await verifyProjects({ dataDir: paths.dataDir })).projects[0]!.problems;
    assert.match(problems[0]?.message ?? '', /server\.cjs differs/);
    await writeFile(file, original);
    await writeFile(join(dir, 'extra.js'), 'x');
    problems = (await verifyProjects({ dataDir: paths.dataDir })).projects[0]!.problems;
    assert.match(problems[0]?.message ?? '', /extra\.js added/);
    await rm(dir, { recursive: true });
    problems = (await verifyProjects({ dataDir: paths.dataDir })).projects[0]!.problems;
    assert.match(problems[0]?.message ?? '', /is missing/);
  });

  test('an interrupted accept (a version above the accepted one) is a note, not a problem', async (t) => {
    const paths = await twoVersions(t);
    await writeFile(paths.versionPath(3), '{"torn": ');
    const project = (await verifyProjects({ dataDir: paths.dataDir, project: 'p' })).projects[0]!;
    assert.equal(project.ok, false, 'a torn file is not a version file');
    await rm(paths.versionPath(3));
    const v2 = JSON.parse(await readFile(paths.versionPath(2), 'utf8'));
    const v3 = { ...v2, version: 3, previous: recordDigest(v2) };
    await writeLikeTheSdk(paths.versionPath(3), v3);
    const again = (await verifyProjects({ dataDir: paths.dataDir, project: 'p' })).projects[0]!;
    assert.deepEqual(again.problems, []);
    assert.match(again.notes.join('\n'), /never accepted/);
    assert.equal((await readAccepted(paths))?.version, 2);
  });
});

describe('migrate from format 1', () => {
  /** Turns a format-2 data dir into the layout format 1 wrote: pretty records, no chain, accepted.json a copy. */
  async function downgrade(paths: ProjectPaths): Promise<void> {
    const versions = await readVersions(paths);
    for (const v of versions) {
      const { previous: _p, workflowDigest: _w, ...old } = v;
      await writeFile(paths.versionPath(v.version), `${JSON.stringify(old, null, 2)}\n`);
      if (v.version === versions.length) {
        await writeFile(paths.acceptedPath, `${JSON.stringify(old, null, 2)}\n`);
      }
    }
    await mkdir(join(paths.root, 'private'), { recursive: true });
    await writeFile(join(paths.root, 'private', 'service.db'), 'kept');
    await writeFile(join(paths.dataDir, 'format.json'), JSON.stringify({ format: 1 }));
  }

  test('an old data dir is refused naming migrate; migrate writes the chain; it is idempotent', async (t) => {
    const paths = await twoVersions(t);
    const before = await readVersions(paths);
    await downgrade(paths);
    await assert.rejects(openProject(paths.dataDir, 'p'), withCode('data_dir_needs_migration', 'migrate'));
    await assert.rejects(openProject(paths.dataDir, 'p'), (e: unknown) =>
      /scienceevolve migrate/.test((e as { remedy: string }).remedy),
    );
    assert.deepEqual(await migrateDataDir(paths.dataDir), { from: 1, to: 2 });
    assert.deepEqual(await readVersions(paths), before, 'the same versions, chained as the SDK writes them');
    assert.equal((await verifyProjects({ dataDir: paths.dataDir })).ok, true);
    assert.equal(await readFile(join(paths.serviceDataDir, 'service.db'), 'utf8'), 'kept');
    assert.deepEqual(await migrateDataDir(paths.dataDir), { from: 2, to: 2 });
    assert.deepEqual(await readVersions(paths), before);
  });

  test('migrate refuses an old store whose accepted.json differs from its version file', async (t) => {
    const paths = await twoVersions(t);
    await downgrade(paths);
    const accepted = JSON.parse(await readFile(paths.acceptedPath, 'utf8'));
    accepted.workflow.orchestration.allowMainReconfiguration = true;
    await writeFile(paths.acceptedPath, JSON.stringify(accepted));
    await assert.rejects(migrateDataDir(paths.dataDir), withCode('store_tampered', paths.acceptedPath));
    assert.deepEqual(JSON.parse(await readFile(join(paths.dataDir, 'format.json'), 'utf8')), { format: 1 });
  });

  test('projects without format.json (written before it existed) are refused until migrate', async (t) => {
    const paths = await twoVersions(t);
    await downgrade(paths);
    await rm(join(paths.dataDir, 'format.json'));
    await assert.rejects(openProject(paths.dataDir, 'p'), withCode('data_dir_needs_migration'));
    assert.deepEqual(await migrateDataDir(paths.dataDir), { from: null, to: 2 });
    assert.equal((await verifyProjects({ dataDir: paths.dataDir })).ok, true);
  });
});

describe('damaged records in status and resume', () => {
  test('a garbage format.json fails status', async (t) => {
    const paths = await twoVersions(t);
    await writeFile(join(paths.dataDir, 'format.json'), 'garbage');
    await assert.rejects(runStatus({ dataDir: paths.dataDir }), withCode('io_error', 'format.json'));
  });

  test('a damaged accepted.json shows as store_tampered in status, not as no accepted version', async (t) => {
    const paths = await twoVersions(t);
    await writeFile(paths.acceptedPath, '{"version": 2}');
    const project = (await runStatus({ dataDir: paths.dataDir })).projects[0]!;
    assert.equal(project.acceptedVersion, null);
    assert.equal(project.acceptedError?.code, 'store_tampered');
    assert.equal(project.acceptedError?.path, paths.acceptedPath);
  });

  test('a truncated run.json is reported with the run id and the file, never skipped', async (t) => {
    const paths = await twoVersions(t);
    const dir = paths.runDir('run-abc');
    await mkdir(dir, { recursive: true });
    const file = join(dir, 'run.json');
    await writeFile(file, '{"format": 1, "run": "run-abc", "status": "runn');
    await assert.rejects(readRunRecord(paths, 'run-abc'), withCode('store_tampered', file));
    const { corrupt } = await listRunRecords(paths);
    assert.deepEqual(
      corrupt.map((c) => [c.run, c.path]),
      [['run-abc', file]],
    );
    const project = (await runStatus({ dataDir: paths.dataDir, project: 'p' })).projects[0]!;
    assert.equal(project.corruptRuns[0]?.run, 'run-abc');
    assert.match(project.corruptRuns[0]?.message ?? '', /run-abc/);
    assert.deepEqual(await readdir(paths.runsDir), ['run-abc']);
  });

  test('a run.json whose invocation entry is damaged is reported, not met as a crash', async (t) => {
    const paths = await twoVersions(t);
    const dir = paths.runDir('run-inv');
    await mkdir(dir, { recursive: true });
    // A whole record but for its one invocation entry, so the entry is what the reader names.
    const record = {
      format: 1,
      run: 'run-inv',
      project: 'p',
      status: 'interrupted',
      requirement: 'r',
      workspace: '/w',
      version: 1,
      script: null,
      host: { pid: 1, start: '1' },
      startedAt: new Date().toISOString(),
      finishedAt: null,
      output: null,
      error: null,
      resumes: 0,
      invocations: [null],
    };
    await writeFile(join(dir, 'run.json'), JSON.stringify(record));
    await assert.rejects(readRunRecord(paths, 'run-inv'), withCode('store_tampered', 'invocation 1 of 1'));
    const project = (await runStatus({ dataDir: paths.dataDir, project: 'p' })).projects[0]!;
    assert.deepEqual(
      project.corruptRuns.map((c) => c.run),
      ['run-inv'],
    );
  });
});
