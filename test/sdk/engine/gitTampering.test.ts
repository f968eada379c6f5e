/**
 * Security finding 1: the host never runs git on anything a service could write. A Git-on service
 * rewrites the git state of its worktree so that the host's `git add -A / commit` after the invocation
 * would run its programs (hooks, fsmonitor, a nested repository's filter) with the host's environment, or
 * commit onto the user's branch. The sandbox is off in every run here, so what is proven is the host's own
 * defence: git dir and work tree named, hooks and fsmonitor off, the `.git` pointer checked first.
 * Real services and git: a few seconds each.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { checkGitPointer } from '../../../packages/sdk/src/engine/hostGit.js';
import { runWorkflow } from '../../../packages/sdk/src/engine/runs.js';
import type { RunResult } from '../../../packages/sdk/src/engine/runs.js';
import { tempDir } from '../../fixtures/store/tempDir.js';
import { git, initRepo } from '../../fixtures/engine/git.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { type EngineSandbox, assertNothingLeft, sandbox } from './helpers.js';

/** A host variable the services never get: a planted program that ran on the host would write it. */
const SECRET = 'host-only-4711';

/** A sandbox whose workspace is a repository with one commit; HOME points away from the user's git config. */
async function gitBox(t: TestContext): Promise<EngineSandbox & { marker: string; head: string }> {
  const box = await sandbox(t);
  process.env.HOME = box.base;
  process.env.XDG_CONFIG_HOME = join(box.base, 'xdg');
  process.env.SE_HOST_ONLY_SECRET = SECRET;
  const head = initRepo(box.workspace, 'the shared start\n');
  return { ...box, marker: join(box.base, 'MARKER'), head };
}

/** Main calls one tool of the tampering service, then answers; sandbox off, no retry. */
function tamperRun(box: EngineSandbox, call: string, args: Record<string, unknown>): Promise<RunResult> {
  return runWorkflow({
    ...box,
    workflow: {
      orchestration: { git: true, sandbox: 'off', invocationRetries: 0 },
      agents: { main: agent([['tamper', 'tamper']]) },
      mcpDefinitions: { tamper: fixtureDefinition('tampersWithGit.cjs') },
    },
    script: { agents: { main: [{ call: `tamper__${call}`, arguments: args }, { final: 'said: {{0}}' }] } },
    requirement: 'change the worktree',
    graceMs: 500,
  });
}

/** What a planted program left (nothing, when the host ran none). */
function planted(marker: string): string {
  return existsSync(marker) ? readFileSync(marker, 'utf8') : '';
}

/** The role branch of main still at the workspace's first commit: the host committed nothing of the service. */
function assertNoCommit(box: EngineSandbox & { head: string }): void {
  assert.equal(git(box.workspace, 'rev-parse', `scienceevolve/${box.project}/main`).trim(), box.head);
}

function assertRefused(result: RunResult, box: EngineSandbox): void {
  assert.equal(result.status, 'failed', JSON.stringify(result.error));
  assert.equal(result.error?.code, 'worktree_tampered', JSON.stringify(result.error));
  const worktree = join(box.dataDir, 'projects', box.project, 'worktrees', 'main');
  assert.match(result.error?.message ?? '', new RegExp(`the worktree ${worktree} was changed`));
  assert.match(result.error?.remedy ?? '', /remove the directory/);
}

for (const mode of ['hooksPath', 'fsmonitor'] as const) {
  test(`a service replaces its worktree's .git with a repository whose config sets core.${mode}: refused, nothing of it runs`, async (t) => {
    const box = await gitBox(t);
    const result = await tamperRun(box, 'replaceDotGit', { mode, marker: box.marker });
    assert.equal(planted(box.marker), '', 'a planted program ran on the host');
    assertRefused(result, box);
    assertNoCommit(box);
    await assertNothingLeft(box.project, result.events);
  });
}

test("a service points its worktree's .git at the user's repository: refused, the user's branch and index unchanged", async (t) => {
  const box = await gitBox(t);
  const branch = git(box.workspace, 'symbolic-ref', 'HEAD').trim();
  const result = await tamperRun(box, 'pointDotGit', { gitDir: join(box.workspace, '.git') });
  assertRefused(result, box);
  assert.equal(git(box.workspace, 'rev-parse', branch).trim(), box.head, "nothing was committed on the user's branch");
  assert.equal(git(box.workspace, 'status', '--porcelain'), '', "the user's index and checkout are as they were");
  assertNoCommit(box);
  await assertNothingLeft(box.project, result.events);
});

test("a nested repository's own config (a clean filter, an fsmonitor) is never run by the host's commit", async (t) => {
  const box = await gitBox(t);
  const result = await tamperRun(box, 'nestRepo', { marker: box.marker });
  assert.equal(planted(box.marker), '', 'a program of the nested repository ran on the host');
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  // The worktree is the host's and intact: its changes are committed, the nested repository as a gitlink.
  const branch = `scienceevolve/${box.project}/main`;
  assert.notEqual(git(box.workspace, 'rev-parse', branch).trim(), box.head);
  assert.match(git(box.workspace, 'ls-tree', branch, 'sub'), /^160000 commit [0-9a-f]{40}\tsub\n$/);
  await assertNothingLeft(box.project, result.events);
});

test('the .git pointer is exactly the line git wrote: every other .git is worktree_tampered', async (t) => {
  const base = realpathSync(await tempDir(t, 'se-pointer-'));
  const gitDir = join(base, 'repo.git', 'worktrees', 'main');
  mkdirSync(gitDir, { recursive: true });
  const line = `gitdir: ${gitDir}\n`;
  const cases: Array<[what: string, make: (dotGit: string) => void, reason: RegExp]> = [
    ['missing', () => {}, /is missing/],
    ['a directory', (p) => mkdirSync(p), /is not a file/],
    [
      'a symlink to a file holding the right line',
      (p) => {
        writeFileSync(`${p}-real`, line);
        symlinkSync(`${p}-real`, p);
      },
      /is a symbolic link/,
    ],
    ['another git dir', (p) => writeFileSync(p, `gitdir: ${join(base, 'repo.git')}\n`), /does not name the git dir/],
    [
      'a relative path to the same git dir',
      (p) => writeFileSync(p, 'gitdir: ../repo.git/worktrees/main\n'),
      /does not name/,
    ],
    ['the right line twice', (p) => writeFileSync(p, line + line), /does not name/],
    ['the right line without its newline', (p) => writeFileSync(p, line.trimEnd()), /does not name/],
    ['the right line and a trailing space', (p) => writeFileSync(p, `${line.trimEnd()} \n`), /does not name/],
  ];
  for (const [index, [what, make, reason]] of cases.entries()) {
    const workTree = join(base, `tree-${index}`);
    mkdirSync(workTree);
    make(join(workTree, '.git'));
    assert.throws(
      () => checkGitPointer(workTree, gitDir),
      (error: { code: string; message: string }) => {
        assert.equal(error.code, 'worktree_tampered', what);
        assert.match(error.message, reason, what);
        assert.ok(error.message.includes(workTree), what);
        return true;
      },
      what,
    );
  }
  const good = join(base, 'good');
  mkdirSync(good);
  writeFileSync(join(good, '.git'), line);
  checkGitPointer(good, gitDir);
});
