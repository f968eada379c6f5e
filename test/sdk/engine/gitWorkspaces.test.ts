/**
 * Git-on (SPEC §10.4): each role works in its own worktree on its own branch under the project's data; its
 * services' cwd is that worktree; a file one role's service writes is not in another role's worktree, and
 * is committed on its branch with the invocation id. Real services and git: a few seconds.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runWorkflow } from '../../../packages/sdk/src/engine/runs.js';
import type { RunRecord } from '../../../packages/sdk/src/engine/runRecord.js';
import { git, initRepo } from '../../fixtures/engine/git.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, sandbox } from './helpers.js';

test('Git-on: one worktree and branch per role, services run there, changes committed per invocation', async (t) => {
  const box = await sandbox(t);
  // No global or system git identity (this file runs in its own process): the engine must supply its own.
  // HOME and XDG_CONFIG_HOME point away from the user's git configuration.
  process.env.HOME = box.base;
  process.env.XDG_CONFIG_HOME = join(box.base, 'xdg');
  initRepo(box.workspace, 'the shared start\n');

  const result = await runWorkflow({
    ...box,
    workflow: {
      orchestration: { git: true },
      agents: { main: agent([['notes', 'notes']]), writer: agent([['notes', 'notes']]) },
      mcpDefinitions: { notes: fixtureDefinition('notesService.cjs') },
    },
    script: {
      agents: {
        main: [
          { call: 'notes__write', arguments: { name: 'main.txt', text: 'from main' } },
          { call: 'scienceevolve__delegate', arguments: { agent: 'writer', task: 'write your note' } },
          { call: 'notes__read', arguments: { name: 'writer.txt' } },
          { call: 'notes__where' },
          { final: 'writer said: {{1}} | main reads writer.txt: {{2}} | main cwd: {{3}}' },
        ],
        writer: [
          { call: 'notes__write', arguments: { name: 'writer.txt', text: 'from writer' } },
          { call: 'notes__read', arguments: { name: 'main.txt' } },
          { call: 'notes__read', arguments: { name: 'README.md' } },
          { final: 'writer reads main.txt: {{1}}; README: {{2}}' },
        ],
      },
    },
    requirement: 'write notes in isolation',
    graceMs: 500,
  });
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  const projectRoot = join(box.dataDir, 'projects', box.project);
  const mainTree = join(projectRoot, 'worktrees', 'main');
  const writerTree = join(projectRoot, 'worktrees', 'writer');
  const output = result.output!;
  assert.match(output, /writer reads main\.txt: no note main\.txt/, "main's file is not in the writer's worktree");
  assert.match(output, /README: the shared start/, 'each worktree starts from the workspace HEAD');
  assert.match(output, /main reads writer\.txt: no note writer\.txt/);
  assert.match(output, new RegExp(`main cwd: ${realpathSync(mainTree)} `), "the service's cwd is the role's worktree");

  assert.equal(readFileSync(join(writerTree, 'writer.txt'), 'utf8'), 'from writer');
  assert.equal(existsSync(join(mainTree, 'writer.txt')), false);
  assert.equal(existsSync(join(box.workspace, 'main.txt')), false, 'the workspace itself is untouched');
  assert.equal(existsSync(join(box.workspace, 'writer.txt')), false);

  const record = JSON.parse(readFileSync(join(result.runDir, 'run.json'), 'utf8')) as RunRecord;
  for (const [role, file] of [
    ['main', 'main.txt'],
    ['writer', 'writer.txt'],
  ] as const) {
    const invocation = record.invocations.find((i) => i.agent === role)!;
    const branch = `scienceevolve/${box.project}/${role}`;
    assert.equal(invocation.git?.branch, branch);
    assert.ok(invocation.git?.commit, `a commit for ${role}`);
    const [hash, author, subject] = git(box.workspace, 'log', '-1', '--format=%H%n%an%n%s', branch).split('\n');
    assert.equal(hash, invocation.git.commit);
    assert.match(subject!, new RegExp(`${role} invocation ${invocation.id}`));
    assert.equal(author, 'ScienceEvolve', 'the fallback identity when git has none');
    const tree = git(box.workspace, 'ls-tree', '--name-only', branch);
    assert.deepEqual(tree.trim().split('\n').sort(), ['README.md', file].sort(), `only ${role}'s file on its branch`);
  }
  await assertNothingLeft(box.project, result.events);
});
