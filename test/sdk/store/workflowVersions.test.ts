/** Accepted workflow versions (SPEC §4): versions/<n>.json, accepted.json, a new version only on change. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import stableStringify from 'fast-json-stable-stringify';
import { loadWorkflow, parseWorkflow } from '../../../packages/sdk/src/index.js';
import {
  acceptWorkflow,
  definitionDigest,
  listVersions,
  openProject,
  readAccepted,
  readVersion,
} from '../../../packages/sdk/src/internal.js';
import { assertGone } from '../../fixtures/store/children.js';
import { tempDir } from '../../fixtures/store/tempDir.js';
import { type Doc, SERVER, changed, fullWorkflow, minimalWorkflow } from '../../fixtures/workflows/documents.js';

async function readJson(path: string): Promise<unknown> {
  return JSON.parse(await readFile(path, 'utf8'));
}

function withCode(code: string) {
  return (error: unknown) => {
    assert.equal((error as { code?: string }).code, code);
    return true;
  };
}

describe('acceptWorkflow', () => {
  test('a fresh project has no accepted version', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    assert.equal(await readAccepted(paths), undefined);
    assert.deepEqual(await listVersions(paths), []);
    await assert.rejects(readVersion(paths, 1), withCode('unknown_version'));
  });

  test('versions 1, 2, … chained by digests; accepted.json names the last and its digest; old versions stay', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    const before = Date.now();
    const r1 = await acceptWorkflow(paths, minimalWorkflow());
    const digest1 = definitionDigest(fullWorkflow().mcpDefinitions.tools);
    assert.deepEqual(r1, {
      version: 1,
      previousVersion: 0,
      digests: { tools: digest1 },
      changedMcps: ['tools'],
      changedAgents: ['main'],
      orchestrationChanged: true,
      changed: true,
    });
    const v1 = await readJson(paths.versionPath(1));
    const v1Text = await readFile(paths.versionPath(1), 'utf8');
    assert.equal(
      v1Text,
      `${JSON.stringify(v1, null, 2)}\n`,
      'one spelling: JSON.stringify(record, null, 2) and a newline',
    );
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    assert.deepEqual(await readJson(paths.acceptedPath), { version: 1, digest: sha(stableStringify(v1)) });
    const record = v1 as Record<string, unknown>;
    assert.deepEqual(Object.keys(record).sort(), [
      'acceptedAt',
      'by',
      'changedAgents',
      'changedMcps',
      'digests',
      'previous',
      'version',
      'workflow',
      'workflowDigest',
    ]);
    assert.equal(record.previous, null);
    assert.equal(record.workflowDigest, sha(stableStringify(record.workflow)));
    assert.equal(record.version, 1);
    assert.equal(record.by, 'operator');
    assert.deepEqual(record.workflow, fullWorkflow(), 'stored with every default filled');
    assert.ok(Date.parse(record.acceptedAt as string) >= before - 1000);
    assert.ok((await stat(paths.sourceDir(digest1, 'tools'))).isDirectory());

    const next = changed((d) => (d.mcpDefinitions.tools.files['server.cjs'] = `${SERVER}// v2\n`));
    const r2 = await acceptWorkflow(paths, next, { by: 'main' });
    assert.equal(r2.version, 2);
    assert.equal(r2.previousVersion, 1);
    assert.deepEqual(r2.changedMcps, ['tools']);
    const v2 = (await readJson(paths.versionPath(2))) as Record<string, unknown>;
    assert.equal(v2.by, 'main');
    assert.equal(v2.previous, sha(stableStringify(v1)), 'version 2 names the digest of version 1');
    assert.deepEqual(await readJson(paths.acceptedPath), { version: 2, digest: sha(stableStringify(v2)) });
    assert.deepEqual(await readAccepted(paths), v2);
    assert.deepEqual(await readVersion(paths, 1), v1);
    assert.deepEqual(await listVersions(paths), [1, 2]);
    // Both sources stay.
    assert.equal((await readdir(paths.mcpDir)).filter((n) => !n.startsWith('.')).length, 2);
  });

  test('no new version when nothing changed, however the document is written', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    await acceptWorkflow(paths, minimalWorkflow());
    const acceptedBefore = await readFile(paths.acceptedPath, 'utf8');
    // The same workflow, every default spelled out and keys in another order.
    const spelled: Doc = fullWorkflow();
    const reordered = {
      mcpDefinitions: spelled.mcpDefinitions,
      agents: spelled.agents,
      orchestration: spelled.orchestration,
    };
    for (const doc of [minimalWorkflow(), reordered, parseWorkflow(minimalWorkflow())]) {
      const r = await acceptWorkflow(paths, doc);
      assert.equal(r.version, 1);
      assert.equal(r.previousVersion, 1);
      assert.equal(r.changed, false);
      assert.deepEqual(r.changedMcps, []);
      assert.deepEqual(r.changedAgents, []);
    }
    assert.equal(await readFile(paths.acceptedPath, 'utf8'), acceptedBefore, 'accepted.json untouched');
    assert.deepEqual(await readdir(paths.versionsDir), ['1.json']);
  });

  test('an orchestration change alone is a new version', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    await acceptWorkflow(paths, fullWorkflow());
    const r = await acceptWorkflow(
      paths,
      changed((d) => (d.orchestration.git = true)),
    );
    assert.equal(r.version, 2);
    assert.equal(r.orchestrationChanged, true);
    assert.deepEqual([r.changedMcps, r.changedAgents], [[], []]);
  });

  test('an invalid workflow is refused with every issue and nothing is written', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    const bad = changed((d) => {
      d.extra = 1;
      d.mcpDefinitions.tools.files['../x'] = 'x';
    });
    await assert.rejects(acceptWorkflow(paths, bad), (error: unknown) => {
      const e = error as { code: string; data: { errors: Array<{ path: string }> } };
      assert.equal(e.code, 'invalid_workflow');
      assert.deepEqual(
        e.data.errors.map((i) => i.path),
        ['$.extra', '$.mcpDefinitions.tools.files["../x"]'],
      );
      return true;
    });
    assert.equal(await readAccepted(paths), undefined);
    assert.deepEqual(await readdir(paths.workflowDir), []);
  });

  test('a refusing check writes nothing and releases the lock', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    await acceptWorkflow(paths, fullWorkflow());
    const next = changed((d) => (d.agents.main.instructions = 'new'));
    await assert.rejects(
      acceptWorkflow(paths, next, {
        check: (current, proposed) => {
          assert.equal(current?.version, 1);
          assert.equal(proposed.agents.main?.instructions, 'new');
          throw Object.assign(new Error('refused'), { code: 'immutable_definition' });
        },
      }),
      withCode('immutable_definition'),
    );
    assert.deepEqual(await listVersions(paths), [1]);
    assert.equal((await acceptWorkflow(paths, next, { lockTimeoutMs: 2000 })).version, 2);
  });

  test('concurrent accepts of different workflows get distinct versions; accepted.json is the last', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    const docs = Array.from({ length: 4 }, (_, i) => changed((d) => (d.agents.main.instructions = `variant ${i}`)));
    const results = await Promise.all(docs.map((d) => acceptWorkflow(paths, d)));
    assert.deepEqual(results.map((r) => r.version).sort(), [1, 2, 3, 4]);
    assert.deepEqual(await listVersions(paths), [1, 2, 3, 4]);
    assert.deepEqual(await readAccepted(paths), await readVersion(paths, 4));
    for (let n = 2; n <= 4; n++) assert.deepEqual((await readVersion(paths, n)).changedAgents, ['main']);
  });

  test('a lock left by a dead process does not block the next accept', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const pid = Number(dead.stdout);
    await assertGone(pid);
    await writeFile(paths.workflowLockPath, JSON.stringify({ pid, start: '1' }));
    const r = await acceptWorkflow(paths, fullWorkflow(), { lockTimeoutMs: 2000 });
    assert.equal(r.version, 1);
    await assert.rejects(stat(paths.workflowLockPath), withCode('ENOENT'));
  });

  test('a version file above the accepted one (a crash before the pointer moved) is ignored, then replaced', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    await acceptWorkflow(paths, fullWorkflow());
    await writeFile(paths.versionPath(2), '{"torn": ');
    assert.deepEqual(await listVersions(paths), [1]);
    const r = await acceptWorkflow(
      paths,
      changed((d) => (d.agents.main.instructions = 'after the crash')),
    );
    assert.equal(r.version, 2);
    assert.deepEqual(await readVersion(paths, 2), await readAccepted(paths));
  });

  test('readVersion refuses numbers that are no version', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    await acceptWorkflow(paths, fullWorkflow());
    for (const n of [0, -1, 1.5, 2, Number.NaN])
      await assert.rejects(readVersion(paths, n), withCode('unknown_version'));
  });

  test('no temporary file is left in workflow/ after accepting', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    await acceptWorkflow(paths, fullWorkflow());
    await acceptWorkflow(
      paths,
      changed((d) => (d.orchestration.git = true)),
    );
    assert.deepEqual((await readdir(paths.workflowDir)).sort(), ['accepted.json', 'versions']);
    assert.deepEqual((await readdir(paths.versionsDir)).sort(), ['1.json', '2.json']);
  });
});

describe('loadWorkflow', () => {
  test('reads a file, stores its sources, accepts it; the digests are the documented ones', async (t) => {
    const dir = await tempDir(t);
    const file = join(dir, 'workflow.json');
    await writeFile(file, JSON.stringify(minimalWorkflow()));
    const result = await loadWorkflow({ dataDir: join(dir, 'data'), project: 'p', workflow: file });
    assert.equal(result.project, 'p');
    assert.equal(result.version, 1);
    assert.equal(result.changed, true);
    const digest = definitionDigest(minimalWorkflow().mcpDefinitions.tools);
    assert.deepEqual(result.digests, { tools: digest });
    assert.equal(
      await readFile(join(dir, 'data', 'projects', 'p', 'mcp', digest, 'project-tools', 'server.cjs'), 'utf8'),
      SERVER,
    );
    const again = await loadWorkflow({ dataDir: join(dir, 'data'), project: 'p', workflow: file });
    assert.equal(again.version, 1);
    assert.equal(again.changed, false);
  });

  test('an unreadable file is io_error; an invalid one is invalid_workflow naming the file', async (t) => {
    const dir = await tempDir(t);
    await assert.rejects(
      loadWorkflow({ dataDir: join(dir, 'data'), project: 'p', workflow: join(dir, 'missing.json') }),
      withCode('io_error'),
    );
    const file = join(dir, 'bad.json');
    await writeFile(file, '{"agents": {}}');
    await assert.rejects(
      loadWorkflow({ dataDir: join(dir, 'data'), project: 'p', workflow: file }),
      (error: unknown) => {
        const e = error as { code: string; message: string };
        assert.equal(e.code, 'invalid_workflow');
        assert.ok(e.message.includes(file));
        return true;
      },
    );
  });
});
