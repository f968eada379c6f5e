/** The data dir's format.json (SPEC §4): created when new, newer refused, older only by explicit migrate. */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { loadWorkflow } from '../../../packages/sdk/src/index.js';
import {
  DATA_DIR_FORMAT,
  defaultDataDir,
  migrateDataDir,
  openDataDir,
  openProject,
} from '../../../packages/sdk/src/internal.js';
import { tempDir } from '../../fixtures/store/tempDir.js';
import { fullWorkflow } from '../../fixtures/workflows/documents.js';

function withCode(code: string) {
  return (error: unknown) => {
    const e = error as { code?: string; remedy?: string };
    assert.equal(e.code, code);
    assert.ok(e.remedy !== undefined && e.remedy.length > 0, 'a remedy');
    return true;
  };
}

async function formatOf(dataDir: string): Promise<unknown> {
  return JSON.parse(await readFile(join(dataDir, 'format.json'), 'utf8'));
}

async function writeFormat(dataDir: string, format: unknown): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  await writeFile(join(dataDir, 'format.json'), JSON.stringify({ format }));
}

describe('the data dir', () => {
  test('the format is 2 (the hash-chained store)', () => {
    assert.equal(DATA_DIR_FORMAT, 2);
  });

  test('the library default is ~/.scienceevolve/data', () => {
    assert.match(defaultDataDir(), /[/\\]\.scienceevolve[/\\]data$/);
  });

  test('a new data dir is created with format.json; the path returned is absolute', async (t) => {
    const parent = await tempDir(t);
    const dataDir = join(parent, 'a', 'b');
    const opened = await openDataDir(relative(process.cwd(), dataDir));
    assert.equal(opened, dataDir);
    assert.deepEqual(await formatOf(dataDir), { format: 2, createdBy: 'scienceevolve' });
    assert.equal(await openDataDir(dataDir), dataDir, 'opens again');
  });

  test('a newer format is refused everywhere: data_dir_too_new', async (t) => {
    const dataDir = await tempDir(t);
    await writeFormat(dataDir, DATA_DIR_FORMAT + 1);
    await assert.rejects(openDataDir(dataDir), withCode('data_dir_too_new'));
    await assert.rejects(openProject(dataDir, 'p'), withCode('data_dir_too_new'));
    await assert.rejects(
      loadWorkflow({ dataDir, project: 'p', workflow: fullWorkflow() }),
      withCode('data_dir_too_new'),
    );
    await assert.rejects(migrateDataDir(dataDir), withCode('data_dir_too_new'));
    assert.deepEqual(await formatOf(dataDir), { format: DATA_DIR_FORMAT + 1 }, 'left as it was');
  });

  test('an older format is refused until migrate: data_dir_needs_migration, then it works', async (t) => {
    const dataDir = await tempDir(t);
    await writeFormat(dataDir, DATA_DIR_FORMAT - 1);
    await assert.rejects(openDataDir(dataDir), withCode('data_dir_needs_migration'));
    await assert.rejects(openProject(dataDir, 'p'), withCode('data_dir_needs_migration'));
    assert.deepEqual(await formatOf(dataDir), { format: DATA_DIR_FORMAT - 1 }, 'never upgraded silently');
    assert.deepEqual(await migrateDataDir(dataDir), { from: DATA_DIR_FORMAT - 1, to: DATA_DIR_FORMAT });
    assert.equal(((await formatOf(dataDir)) as { format: number }).format, DATA_DIR_FORMAT);
    assert.equal((await loadWorkflow({ dataDir, project: 'p', workflow: fullWorkflow() })).version, 1);
    assert.deepEqual(await migrateDataDir(dataDir), { from: DATA_DIR_FORMAT, to: DATA_DIR_FORMAT }, 'idempotent');
  });

  test('migrate on a directory without format.json records the format', async (t) => {
    const dataDir = await tempDir(t);
    assert.deepEqual(await migrateDataDir(dataDir), { from: null, to: DATA_DIR_FORMAT });
    assert.equal(((await formatOf(dataDir)) as { format: number }).format, DATA_DIR_FORMAT);
  });

  test('a format.json without a format number is io_error', async (t) => {
    const dataDir = await tempDir(t);
    await writeFormat(dataDir, 'one');
    await assert.rejects(openDataDir(dataDir), withCode('io_error'));
  });

  test('a project id that is not a safe directory name is a usage error', async (t) => {
    const dataDir = await tempDir(t);
    for (const id of ['', '../x', 'a/b', '.hidden', 'x'.repeat(101)]) {
      await assert.rejects(openProject(dataDir, id), withCode('usage'));
    }
  });
});
