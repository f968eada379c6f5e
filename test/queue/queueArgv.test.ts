/**
 * Security finding 3: the queue password was on the command line (`--queue redis://:<pw>@…`), and
 * `/proc/<pid>/cmdline` is readable by every user. Here a real redis-server that requires a password, a
 * worker given the URL by a 0600 file and a run given it by a variable: the job runs through the protected
 * queue while no process of either tree (services, supervisor, agent harness) shows the password on its
 * command line or in its environment. And the old usage is refused before anything starts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { processTree, secretsInTrees } from '../fixtures/cmdlines.js';
import { startCli } from '../fixtures/engine/cli.js';
import { assertGone } from '../fixtures/store/children.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';
import { RUN_TIMEOUT_MS, type RunDoc, startRedis, startWorker, stopWorker, writeDelegatingRun } from './helpers.js';

const PASSWORD = 'Qu3uePassw0rdSecret';

/** The socket path of a test Redis (its url is `unix://<path>`). */
function socketOf(url: string): string {
  return url.replace(/^unix:\/\//, '');
}

test('a job runs through a password-protected queue while no command line (nor child environment) holds the password', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base, ['--requirepass', PASSWORD]);
  const socket = socketOf(redis.url);
  const url = `unix://:${PASSWORD}@localhost${socket}`;
  // The queue really is protected: without the password Redis refuses.
  const anonymous = new Redis({ path: socket, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  anonymous.on('error', () => {});
  t.after(() => anonymous.disconnect());
  await assert.rejects(anonymous.ping(), /NOAUTH/);
  anonymous.disconnect();

  const queueFile = join(box.base, 'queue-url');
  writeFileSync(queueFile, `${url}\n`, { mode: 0o600 });
  chmodSync(queueFile, 0o600);
  const files = await writeDelegatingRun(box.base, 2, { slowMs: 1500 });
  const worker = await startWorker(t, ['--queue-file', queueFile], join(box.base, 'worker-1'));

  const run = startCli(
    t,
    [
      'run',
      '--data-dir',
      box.dataDir,
      '--project',
      box.project,
      '--grace-ms',
      '300',
      '--queue-env',
      'SE_TEST_QUEUE',
      '--workspace',
      box.workspace,
      '--workflow',
      files.workflowPath,
      '--script',
      files.scriptPath,
      '--json',
      'add',
    ],
    [],
    { ...process.env, SE_TEST_QUEUE: url },
  );
  const timer = setTimeout(() => run.child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  let done = false;
  void run.exited.then(() => {
    done = true;
  });
  // Sampled all along the run: the worker's tree while its services run the jobs, and the coordinator's.
  let samples = 0;
  let sawService = false;
  while (!done) {
    const found = secretsInTrees([worker.pid, run.pid], [PASSWORD]);
    assert.deepEqual(found, [], 'the password is readable by every user of the machine');
    samples += 1;
    // A job's services run from their copies as `server.cjs`, under the worker.
    if (processTree(worker.pid).some((p) => p.pid !== worker.pid && p.cmdline.includes('server.cjs')))
      sawService = true;
    await sleep(50);
  }
  clearTimeout(timer);
  const code = await run.exited;
  await assertGone(run.pid);
  const doc = JSON.parse(run.stdout()) as RunDoc;
  assert.equal(code, 0, run.stderr());
  assert.equal(doc.status, 'succeeded', run.stderr());
  assert.equal(doc.output, files.expected);
  assert.ok(samples > 5, `sampled the trees ${samples} times`);
  assert.ok(sawService, "the worker's service processes were among those sampled");
  for (const text of [run.stderr(), run.stdout(), worker.stderr()]) assert.equal(text.includes(PASSWORD), false);
  await stopWorker(worker);
  await assertNothingLeft(box.project, doc.events);
});

test('the old usage, `worker --queue` with the password in it, is refused before a worker runs with it on its command line', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base, ['--requirepass', PASSWORD]);
  const url = `unix://:${PASSWORD}@localhost${socketOf(redis.url)}`;
  const worker = startCli(t, ['worker', '--queue', url, '--data-dir', join(box.base, 'worker-old')]);
  const exited = await Promise.race([worker.exited, sleep(20_000).then(() => 'running' as const)]);
  if (exited === 'running') {
    // What the finding did: another user (uid 65534) reads the running worker's command line.
    const seen = spawnSync('cat', [`/proc/${worker.pid}/cmdline`], { uid: 65534, gid: 65534, encoding: 'latin1' });
    worker.child.kill('SIGKILL');
    await worker.exited;
    await assertGone(worker.pid);
    assert.fail(`the worker ran; uid 65534 read its command line: ${seen.stdout.split('\0').join(' ')}`);
  }
  assert.equal(exited, 2, worker.stderr());
  assert.match(worker.stderr(), /error \[usage\]: --queue must not carry a user name or password/);
  assert.match(worker.stderr(), /--queue-env/);
  assert.match(worker.stderr(), /--queue-file/);
  assert.equal(worker.stderr().includes(PASSWORD), false);
  await assertGone(worker.pid);
});
