/**
 * Git-on across queue workers: each invocation fetches its role's branch from the run's git remote (a bare
 * repository, the workspace's `origin`), works in a clone in the worker's data dir, commits and pushes the
 * branch back; the next invocation of the role, on whichever worker, starts from that push; the
 * coordinator's repository gets the branch. Two workers, two invocations with real services: about 20–40 s.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { startCli } from '../fixtures/engine/cli.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';
import {
  type RunDoc,
  queuedRunArgs,
  readRunRecord,
  runQueued,
  startRedis,
  startWorker,
  stopWorker,
  waitForFile,
  writeDelegatingRun,
} from './helpers.js';

const AUTHOR = ['-c', 'user.name=Test', '-c', 'user.email=test@localhost'];

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...AUTHOR, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

test('Git-on over the queue: each invocation fetches its role branch from the remote, commits and pushes it', async (t) => {
  const box = await sandbox(t);
  const remote = join(box.base, 'remote.git');
  mkdirSync(remote);
  git(remote, 'init', '--bare', '-q', '-b', 'trunk');
  // The coordinator's workspace is a clone of the bare remote, with a first commit pushed.
  const workspace = join(box.base, 'study');
  git(box.base, 'clone', '-q', remote, workspace);
  git(workspace, 'commit', '-q', '--allow-empty', '-m', 'init');
  git(workspace, 'push', '-q', 'origin', 'HEAD:trunk');
  const redis = await startRedis(t, box.base);
  const { workflowPath, scriptPath, expected } = await writeDelegatingRun(box.base, 2, { git: true });
  const workers = [
    await startWorker(t, redis.url, join(box.base, 'worker-1')),
    await startWorker(t, redis.url, join(box.base, 'worker-2')),
  ];
  const run = await runQueued(t, box, redis.url, { workflowPath, scriptPath, workspace });
  assert.equal(run.code, 0, run.stderr);
  const doc = run.doc;
  assert.equal(doc.output, expected);
  const branch = `scienceevolve/${box.project}/analyst`;
  // The second invocation started from the first one's push: the role's log holds both, in order.
  assert.equal(git(remote, 'show', `${branch}:calls.log`), 'task-0\ntask-1\n');
  assert.equal(git(remote, 'rev-list', '--count', branch), '3\n', 'init and one commit per invocation');
  const finished = doc.events.filter(
    (e): e is Extract<RunEvent, { type: 'invocation.finished' }> =>
      e.type === 'invocation.finished' && (e as { agent?: string }).agent === 'analyst',
  );
  assert.deepEqual(
    finished.map((e) => e.branch),
    [branch, branch],
  );
  assert.equal(git(remote, 'rev-parse', branch).trim(), finished[1]!.commit);
  // The coordinator's repository has the role's branch at the pushed commit.
  assert.equal(git(workspace, 'rev-parse', `origin/${branch}`).trim(), finished[1]!.commit);
  for (const worker of workers) await stopWorker(worker);
  await assertNothingLeft(box.project, doc.events);
});

test('Git-on over the queue: a push the remote refuses (non-fast-forward) fails the attempt, coded, never forced', async (t) => {
  const box = await sandbox(t);
  const remote = join(box.base, 'remote.git');
  mkdirSync(remote);
  git(remote, 'init', '--bare', '-q', '-b', 'trunk');
  const workspace = join(box.base, 'study');
  git(box.base, 'clone', '-q', remote, workspace);
  git(workspace, 'commit', '-q', '--allow-empty', '-m', 'init');
  git(workspace, 'push', '-q', 'origin', 'HEAD:trunk');
  const redis = await startRedis(t, box.base);
  // The analyst sleeps 8 s in its `slow` service: time for someone else to push the role's branch.
  const files = await writeDelegatingRun(box.base, 1, { git: true, slowMs: 8000, retries: 0 });
  const workerDir = join(box.base, 'worker-1');
  const worker = await startWorker(t, redis.url, workerDir);
  const coordinator = startCli(t, queuedRunArgs(box, redis.url, { ...files, workspace }));
  const branch = `scienceevolve/${box.project}/analyst`;
  // The worker fetched the branch (absent: started from trunk) and the analyst is at work in its clone.
  await waitForFile(join(workerDir, 'projects', box.project, 'clones', 'analyst', 'calls.log'), /task-0/);
  const other = join(box.base, 'other');
  git(box.base, 'clone', '-q', remote, other);
  git(other, 'checkout', '-q', '-b', branch);
  git(other, 'commit', '-q', '--allow-empty', '-m', 'pushed first, elsewhere');
  git(other, 'push', '-q', 'origin', branch);
  const theirs = git(other, 'rev-parse', 'HEAD').trim();

  assert.equal(await coordinator.exited, 0, coordinator.stderr());
  await assertGone(coordinator.pid);
  const doc = JSON.parse(coordinator.stdout()) as RunDoc;
  const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
  assert.equal(analyst.state, 'failed');
  const error = analyst.attempts[0]?.error;
  assert.equal(error?.code, 'io_error', JSON.stringify(error));
  assert.match(
    error?.message ?? '',
    new RegExp(`the remote \\S+remote\\.git refused branch ${branch} \\(commit [0-9a-f]{12}\\)`),
  );
  assert.match(error?.remedy ?? '', /another push to the role's branch came first/);
  assert.equal(error?.data?.branch, branch);
  // Never forced: the remote keeps the other push.
  assert.equal(git(remote, 'rev-parse', branch).trim(), theirs);
  assert.notEqual(error?.data?.commit, theirs);
  await stopWorker(worker);
  await assertNothingLeft(box.project, doc.events);
});
