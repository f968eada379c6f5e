/**
 * Git-on: the run's git remote travels in the job as the workspace's `origin` names it, credentials
 * included (by design: see docs/scale-out.md, "Security"). Nothing prints it: a remote that refuses the
 * worker leaves its user and password in no log line, event, error, run record or worker file. A real
 * redis-server, a real worker process, a remote URL whose server is not there.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';
import {
  readJournal,
  readRunRecord,
  runQueued,
  startRedis,
  startWorker,
  stopWorker,
  writeDelegatingRun,
} from './helpers.js';

const AUTHOR = ['-c', 'user.name=Test', '-c', 'user.email=test@localhost'];

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...AUTHOR, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Every file under `dir` (but git's own directories), with its text. */
function filesUnder(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (name === '.git') continue;
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    if (stat.isDirectory()) out.push(...filesUnder(path));
    else if (stat.isFile()) out.push([path, readFileSync(path, 'latin1')]);
  }
  return out;
}

test('a git remote with credentials is never printed: logs, events, errors, run.json and worker files', async (t) => {
  const box = await sandbox(t);
  const user = 'robot-user-x1';
  const password = 'S3cretT0kenValue';
  // Port 1 on the loopback: nothing listens, the worker's fetch fails at once.
  const remote = `http://${user}:${password}@127.0.0.1:1/lab/study.git?sig=QuerySecret9`;
  git(box.workspace, 'init', '-q', '-b', 'trunk');
  git(box.workspace, 'commit', '-q', '--allow-empty', '-m', 'init');
  git(box.workspace, 'remote', 'add', 'origin', remote);
  const redis = await startRedis(t, box.base);
  const files = await writeDelegatingRun(box.base, 1, { git: true, retries: 0 });
  const workerDir = join(box.base, 'worker-1');
  const worker = await startWorker(t, redis.url, workerDir);
  const { code, stderr, doc } = await runQueued(t, box, redis.url, files);
  assert.equal(code, 0, stderr);
  const analyst = readRunRecord(box, doc.run).invocations.find((i) => i.agent === 'analyst')!;
  const error = analyst.attempts[0]?.error;
  assert.equal(error?.code, 'io_error', JSON.stringify(error));
  // The remote is named, without its credentials and query values.
  assert.match(error?.message ?? '', /the run's git remote http:\/\/127\.0\.0\.1:1\/lab\/study\.git\?sig=REDACTED/);
  await stopWorker(worker);

  const texts: Array<[string, string]> = [
    ['coordinator stderr', stderr],
    ['coordinator stdout', JSON.stringify(doc)],
    ['worker stderr', worker.stderr()],
    ['journal', JSON.stringify(readJournal(box, doc.run))],
    ...filesUnder(box.dataDir),
    ...filesUnder(workerDir),
  ];
  assert.ok(texts.length > 6, 'the data dirs hold files to check');
  for (const [where, text] of texts) {
    for (const secret of [password, user, 'QuerySecret9']) {
      assert.equal(text.includes(secret), false, `${where} shows ${secret}`);
    }
  }
  await assertNothingLeft(box.project, doc.events);
});
