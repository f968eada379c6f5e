/**
 * Security finding 1 on queue workers: a worker invocation works in a clone of the run's git remote, then the
 * worker commits and pushes there. The clone's git dir is kept out of the clone (the services' cwd), its
 * `.git` is a pointer the worker checks, and hooks are off: a service that plants hooks in the git dir its
 * `.git` leads to runs none of them, and one that replaces `.git` gets the attempt refused. Sandbox off, so
 * the worker's own defence is what is proven. One worker, one invocation with real services: about 15–30 s.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { git } from '../fixtures/engine/git.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { type EngineSandbox, assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';
import { readRunRecord, runQueued, startRedis, startWorker, stopWorker } from './helpers.js';

/** A variable of the worker's environment only: a planted hook that ran on the worker would write it. */
const SECRET = 'worker-only-4711';

/** A bare remote with one commit on `trunk`, the coordinator's workspace cloned from it, Redis, one worker. */
async function setUp(t: TestContext) {
  const box = await sandbox(t);
  // The worker inherits this process's environment: the secret is in the worker's, never in a service's.
  process.env.SE_HOST_ONLY_SECRET = SECRET;
  const remote = join(box.base, 'remote.git');
  mkdirSync(remote);
  git(remote, 'init', '--bare', '-q', '-b', 'trunk');
  const workspace = join(box.base, 'study');
  git(box.base, 'clone', '-q', remote, workspace);
  git(workspace, 'commit', '-q', '--allow-empty', '-m', 'init');
  git(workspace, 'push', '-q', 'origin', 'HEAD:trunk');
  const redis = await startRedis(t, box.base);
  const workerDir = join(box.base, 'worker-1');
  const worker = await startWorker(t, redis.url, workerDir);
  return { box, remote, workspace, redis, worker, workerDir, marker: join(box.base, 'MARKER') };
}

/** Main delegates once to the analyst, whose `tamper` service makes one call; sandbox off, no retry. */
async function writeRun(base: string, call: string, args: Record<string, unknown>) {
  const workflowPath = join(base, 'workflow.json');
  const scriptPath = join(base, 'script.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      orchestration: { git: true, sandbox: 'off', invocationRetries: 0 },
      agents: { main: agent([]), analyst: agent([['tamper', 'tamper']]) },
      mcpDefinitions: { tamper: fixtureDefinition('tampersWithGit.cjs') },
    }),
  );
  await writeFile(
    scriptPath,
    JSON.stringify({
      agents: {
        main: [{ call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'work' } }, { final: '{{0}}' }],
        analyst: [{ call: `tamper__${call}`, arguments: args }, { final: 'done' }],
      },
    }),
  );
  return { workflowPath, scriptPath };
}

function planted(marker: string): string {
  return existsSync(marker) ? readFileSync(marker, 'utf8') : '';
}

function cloneOf(box: EngineSandbox, workerDir: string) {
  const project = join(workerDir, 'projects', box.project);
  return { clone: join(project, 'clones', 'analyst'), gitDir: join(project, 'clone-gitdirs', 'analyst') };
}

test("queue clone: hooks a service plants in the clone's git dir are not run by the worker's commit and push", async (t) => {
  const { box, remote, workspace, redis, worker, workerDir, marker } = await setUp(t);
  const files = await writeRun(box.base, 'plantHooks', { marker });
  const run = await runQueued(t, box, redis.url, { ...files, workspace });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(planted(marker), '', 'a planted hook ran on the worker');
  const { clone, gitDir } = cloneOf(box, workerDir);
  // The git dir is out of the clone; `.git` in the clone is only the pointer to it.
  assert.equal(readFileSync(join(clone, '.git'), 'utf8'), `gitdir: ${realpathSync(gitDir)}\n`);
  assert.ok(existsSync(join(gitDir, 'hooks', 'post-commit')), 'the service did plant its hooks in the git dir');
  // The work was committed and pushed all the same, hooks off.
  const branch = `scienceevolve/${box.project}/analyst`;
  assert.equal(git(remote, 'show', `${branch}:work.txt`), 'the work\n');
  const analyst = readRunRecord(box, run.doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.equal(analyst.state, 'succeeded', JSON.stringify(analyst.attempts));
  assert.equal(git(remote, 'rev-parse', branch).trim(), analyst.git?.commit);
  await stopWorker(worker);
  await assertNothingLeft(box.project, run.doc.events);
});

test("queue clone: a service that replaces the clone's .git with its own repository gets the attempt refused, nothing run or pushed", async (t) => {
  const { box, remote, workspace, redis, worker, workerDir, marker } = await setUp(t);
  const files = await writeRun(box.base, 'replaceDotGit', { mode: 'hooksPath', marker });
  const run = await runQueued(t, box, redis.url, { ...files, workspace });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(planted(marker), '', 'a planted hook ran on the worker');
  const analyst = readRunRecord(box, run.doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.equal(analyst.state, 'failed');
  const error = analyst.attempts[0]?.error;
  assert.equal(error?.code, 'worktree_tampered', JSON.stringify(error));
  assert.match(error?.message ?? '', new RegExp(`the clone ${cloneOf(box, workerDir).clone} was changed`));
  const branch = `scienceevolve/${box.project}/analyst`;
  assert.equal(git(remote, 'branch', '--list', branch), '', 'nothing was pushed');
  await stopWorker(worker);
  await assertNothingLeft(box.project, run.doc.events);
});
