/** Project ids (SPEC §2): `--project`, or `<basename>-<12 hex of sha256(realpath)>` of the workspace. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readdir, realpath, symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import { loadWorkflow } from '../../../packages/sdk/src/index.js';
import { projectIdForWorkspace, resolveProjectId } from '../../../packages/sdk/src/internal.js';
import { tempDir } from '../../fixtures/store/tempDir.js';
import { fullWorkflow } from '../../fixtures/workflows/documents.js';

function expectedId(base: string, real: string): string {
  return `${base}-${createHash('sha256').update(real).digest('hex').slice(0, 12)}`;
}

describe('project ids', () => {
  test("a workspace's id is <basename>-<12 hex of sha256(realpath)>", async (t) => {
    const workspace = join(await tempDir(t), 'study');
    await mkdir(workspace);
    const real = await realpath(workspace);
    const id = projectIdForWorkspace(workspace);
    assert.equal(id, expectedId('study', real));
    assert.match(id, /^study-[0-9a-f]{12}$/);
  });

  test('a symlinked path, a relative path and a trailing slash give the same id', async (t) => {
    const parent = await tempDir(t);
    const workspace = join(parent, 'study');
    await mkdir(workspace);
    await symlink(workspace, join(parent, 'link'));
    const id = projectIdForWorkspace(workspace);
    assert.equal(projectIdForWorkspace(join(parent, 'link')), id);
    assert.equal(projectIdForWorkspace(relative(process.cwd(), workspace)), id);
    assert.equal(projectIdForWorkspace(`${workspace}/`), id);
    assert.equal(projectIdForWorkspace(join(workspace, 'x', '..')), id);
  });

  test('two workspaces of one name get different ids', async (t) => {
    const parent = await tempDir(t);
    await mkdir(join(parent, 'a', 'study'), { recursive: true });
    await mkdir(join(parent, 'b', 'study'), { recursive: true });
    assert.notEqual(
      projectIdForWorkspace(join(parent, 'a', 'study')),
      projectIdForWorkspace(join(parent, 'b', 'study')),
    );
  });

  test('the basename is made a safe directory name: lower case, other characters as "-"', async (t) => {
    const workspace = join(await tempDir(t), 'My Study (v2)');
    await mkdir(workspace);
    assert.equal(projectIdForWorkspace(workspace), expectedId('my-study--v2-', await realpath(workspace)));
  });

  test('a workspace that does not exist is a usage error', async (t) => {
    const missing = join(await tempDir(t), 'missing');
    assert.throws(() => projectIdForWorkspace(missing), { code: 'usage' });
  });

  test('resolveProjectId: --project wins, is checked, and one of the two is required', async (t) => {
    const workspace = await tempDir(t);
    assert.equal(resolveProjectId({ project: 'mine', workspace }), 'mine');
    assert.equal(resolveProjectId({ workspace }), projectIdForWorkspace(workspace));
    assert.throws(() => resolveProjectId({ project: '../escape' }), { code: 'usage' });
    assert.throws(() => resolveProjectId({}), { code: 'usage' });
  });

  test('loading with a workspace writes under projects/<derived id>/', async (t) => {
    const dir = await tempDir(t);
    const workspace = join(dir, 'ws');
    await mkdir(workspace);
    const result = await loadWorkflow({ dataDir: join(dir, 'data'), workspace, workflow: fullWorkflow() });
    assert.equal(result.project, projectIdForWorkspace(workspace));
    assert.deepEqual(await readdir(join(dir, 'data', 'projects')), [result.project]);
  });
});
