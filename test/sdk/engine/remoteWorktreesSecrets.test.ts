/**
 * A queue worker's clone of the run's git remote: when the remote cannot be reached, the error names the
 * remote without the credential an `origin` URL may carry (user information, query values).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { RemoteRoleWorktrees } from '../../../packages/sdk/src/engine/remoteWorktrees.js';
import { openProject } from '../../../packages/sdk/src/store/projectStore.js';
import { tempDir } from '../../fixtures/store/tempDir.js';

const SECRET = 'ghp-s3cret-4711';

/** A 127.0.0.1 port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(typeof address === 'object' && address !== null);
  return address.port;
}

test('an unreachable git remote is named without its credentials', async (t) => {
  const paths = await openProject(await tempDir(t), 'p');
  const port = await closedPort();
  for (const remote of [
    `http://x-access-token:${SECRET}@127.0.0.1:${port}/repo.git`,
    `http://127.0.0.1:${port}/repo.git?token=${SECRET}`,
  ]) {
    const worktrees = new RemoteRoleWorktrees(paths, remote);
    await assert.rejects(worktrees.worktree('analyst'), (error: { code: string; message: string; data: unknown }) => {
      assert.equal(error.code, 'io_error');
      assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}/repo\\.git`));
      assert.ok(!JSON.stringify({ m: error.message, d: error.data }).includes(SECRET), error.message);
      return true;
    });
  }
});
