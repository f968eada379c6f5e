/**
 * The queue URL of `run`, `resume` and `worker` (security finding 3): `--queue` takes no credentials, since
 * every user can read a command line; `--queue-env VAR` and `--queue-file F` (the user's own file, 0600 or
 * stricter, not a link) carry them. Each bad input, on each command, with the error it must give — before
 * anything starts, and never repeating the password.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { queueUrlFrom } from '../../packages/sdk/src/queue/queueUrl.js';
import { assertErrorJson, runCli } from './runCli.js';

const PASSWORD = 'hunter2-QueuePw';

interface Case {
  name: string;
  /** The queue options. */
  queue: string[];
  code: number;
  error: string;
  message: RegExp;
  remedy?: RegExp;
}

function casesIn(dir: string): Case[] {
  const file = (name: string, text: string, mode: number) => {
    const path = join(dir, name);
    writeFileSync(path, text, { mode });
    chmodSync(path, mode);
    return path;
  };
  const good = file('good', `redis://:${PASSWORD}@127.0.0.1:1\n`, 0o600);
  const link = join(dir, 'link');
  symlinkSync(good, link);
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const foreign = file('foreign', `redis://:${PASSWORD}@127.0.0.1:1\n`, 0o600);
  chownSync(foreign, 65534, 65534);
  const otherWays = /--queue-env VAR.*--queue-file F/;
  return [
    {
      name: 'a password in --queue',
      queue: ['--queue', `redis://:${PASSWORD}@127.0.0.1:1`],
      code: 2,
      error: 'usage',
      message: /--queue must not carry a user name or password .*\/proc\/<pid>\/cmdline/,
      remedy: otherWays,
    },
    {
      name: 'a user and password in --queue',
      queue: ['--queue', `rediss://worker:${PASSWORD}@redis.example:6390/2`],
      code: 2,
      error: 'usage',
      message: /a user name or password/,
      remedy: otherWays,
    },
    {
      name: 'a user name alone in --queue',
      queue: ['--queue', 'redis://worker@127.0.0.1:1'],
      code: 2,
      error: 'usage',
      message: /a user name or password/,
      remedy: otherWays,
    },
    {
      name: 'a password in the query of --queue',
      queue: ['--queue', `redis://127.0.0.1:1/0?password=${PASSWORD}`],
      code: 2,
      error: 'usage',
      message: /must not carry a query/,
      remedy: otherWays,
    },
    {
      name: 'a password in a --queue that does not parse',
      queue: ['--queue', `redis://:${PASSWORD}@[bad`],
      code: 2,
      error: 'usage',
      message: /a user name or password/,
      remedy: otherWays,
    },
    {
      name: '--queue-env naming an unset variable',
      queue: ['--queue-env', 'SE_TEST_NOT_SET_QUEUE'],
      code: 2,
      error: 'usage',
      message: /--queue-env SE_TEST_NOT_SET_QUEUE: the variable SE_TEST_NOT_SET_QUEUE is not set/,
      remedy: /export SE_TEST_NOT_SET_QUEUE=redis:\/\//,
    },
    {
      name: '--queue-env given a URL instead of a variable name (never quoted back)',
      queue: ['--queue-env', `redis://:${PASSWORD}@127.0.0.1:1`],
      code: 2,
      error: 'usage',
      message: /--queue-env takes the name of an environment variable/,
      remedy: /--queue-env QUEUE_URL/,
    },
    {
      name: '--queue-env naming an empty variable',
      queue: ['--queue-env', 'SE_TEST_EMPTY_QUEUE'],
      code: 2,
      error: 'usage',
      message: /is not set \(or empty\)/,
    },
    {
      name: 'a --queue-file readable by others (0644)',
      queue: ['--queue-file', file('wide', `redis://:${PASSWORD}@127.0.0.1:1\n`, 0o644)],
      code: 1,
      error: 'insecure_file',
      message: /has mode 0644: others than its owner may read or change it/,
      remedy: /^chmod 600 \//,
    },
    {
      name: 'a --queue-file writable by its group (0620)',
      queue: ['--queue-file', file('group', `redis://:${PASSWORD}@127.0.0.1:1\n`, 0o620)],
      code: 1,
      error: 'insecure_file',
      message: /has mode 0620/,
      remedy: /chmod 600/,
    },
    {
      name: 'a --queue-file that is a symbolic link (to a good file)',
      queue: ['--queue-file', link],
      code: 1,
      error: 'insecure_file',
      message: /is a symbolic link \(links are not followed\)/,
      remedy: /the file itself/,
    },
    {
      name: 'a --queue-file that is a FIFO (refused, not waited on)',
      queue: ['--queue-file', fifo],
      code: 1,
      error: 'insecure_file',
      message: /is not a regular file/,
    },
    {
      name: 'a --queue-file of another user',
      queue: ['--queue-file', foreign],
      code: 1,
      error: 'insecure_file',
      message: /is owned by uid 65534, not by this user/,
      remedy: /chown/,
    },
    {
      name: 'a --queue-file that is missing',
      queue: ['--queue-file', join(dir, 'missing')],
      code: 1,
      error: 'io_error',
      message: /cannot be opened \(ENOENT\)/,
    },
    {
      name: 'a --queue-file of two lines',
      queue: ['--queue-file', file('two', `redis://:${PASSWORD}@127.0.0.1:1\nredis://h:2\n`, 0o600)],
      code: 2,
      error: 'usage',
      message: /holds 2 lines; it holds one line, the queue URL/,
    },
    {
      name: 'an empty --queue-file',
      queue: ['--queue-file', file('empty', '\n', 0o600)],
      code: 2,
      error: 'usage',
      message: /holds no URL/,
    },
    {
      name: 'a --queue-file whose URL is not a queue URL',
      queue: ['--queue-file', file('http', `http://:${PASSWORD}@127.0.0.1:1\n`, 0o600)],
      code: 2,
      error: 'usage',
      message: /the scheme "http:" is not redis:/,
    },
    {
      name: 'two ways at once',
      queue: ['--queue', 'redis://127.0.0.1:1', '--queue-file', good],
      code: 2,
      error: 'usage',
      message: /--queue and --queue-file cannot be given together/,
    },
  ];
}

/** The rest of each command's command line, after its queue options. */
function commandLines(dir: string): Array<[string, string[]]> {
  return [
    ['worker', ['worker', '--data-dir', join(dir, 'data')]],
    [
      'run',
      ['run', '--data-dir', join(dir, 'data'), '--workflow', join(dir, 'w.json'), '--workspace', dir, 'a requirement'],
    ],
    ['resume', ['resume', '--data-dir', join(dir, 'data'), '--project', 'p']],
  ];
}

test('bad queue options of run, resume and worker are refused with their code, before anything starts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'se-queue-options-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cases = casesIn(dir);
  const env = { ...process.env, SE_TEST_EMPTY_QUEUE: '' };
  for (const [command, line] of commandLines(dir)) {
    // Every case on worker; on run and resume (which share the one option helper) one case of each kind.
    const these = command === 'worker' ? cases : [cases[0]!, cases[5]!, cases[7]!];
    for (const c of these) {
      const [head, ...rest] = line;
      const result = await runCli([head!, ...c.queue, ...rest, '--json'], { env });
      const shown = `${command}, ${c.name}`;
      assert.equal(result.code, c.code, `${shown}: ${result.stderr}`);
      const error = assertErrorJson(result.json, c.error);
      assert.match(error.message, c.message, shown);
      if (c.remedy !== undefined) assert.match(error.remedy ?? '', c.remedy, shown);
      assert.equal(`${result.stdout}${result.stderr}`.includes(PASSWORD), false, `${shown} printed the password`);
    }
  }
});

test('the URL given by --queue-env or --queue-file is the one used; a plain --queue still works', () => {
  const dir = mkdtempSync(join(tmpdir(), 'se-queue-url-'));
  try {
    const url = `redis://:${PASSWORD}@10.0.0.5:6380/2`;
    const path = join(dir, 'queue');
    writeFileSync(path, `  ${url}\r\n\n`, { mode: 0o400 });
    assert.deepEqual(queueUrlFrom({ file: path }, {}), { url, from: { kind: 'file', path } });
    assert.deepEqual(queueUrlFrom({ env: 'Q' }, { Q: url }), { url, from: { kind: 'env', variable: 'Q' } });
    // A variable's name is looked up as an own key, never through Object.prototype.
    assert.throws(() => queueUrlFrom({ env: 'constructor' }, {}), { code: 'usage' });
    assert.deepEqual(queueUrlFrom({ url: 'redis://10.0.0.5:6380/2' }, {}), {
      url: 'redis://10.0.0.5:6380/2',
      from: { kind: 'argv' },
    });
    assert.equal(queueUrlFrom({}, { SCIENCEEVOLVE_QUEUE_URL: url }), undefined, 'no option, no queue');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('with no queue option, worker reads SCIENCEEVOLVE_QUEUE_URL, and run does not become a queued run', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'se-queue-default-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { ...process.env, SCIENCEEVOLVE_QUEUE_URL: `http://:${PASSWORD}@127.0.0.1:1` };
  // The variable is read (and its bad scheme reported), never printed.
  const worker = await runCli(['worker', '--data-dir', join(dir, 'data'), '--json'], { env });
  assert.equal(worker.code, 2, worker.stderr);
  assert.match(
    assertErrorJson(worker.json, 'usage').message,
    /the queue address http:\/\/127\.0\.0\.1:1\/ cannot be used/,
  );
  assert.equal(worker.stderr.includes(PASSWORD), false);
  const none = await runCli(['worker', '--data-dir', join(dir, 'data'), '--json'], {
    env: { ...process.env, SCIENCEEVOLVE_QUEUE_URL: undefined },
  });
  assert.equal(none.code, 2);
  assert.match(
    assertErrorJson(none.json, 'usage').message,
    /--queue, --queue-env or --queue-file is required: .*SCIENCEEVOLVE_QUEUE_URL/,
  );
  // run ignores the variable: a workflow that does not exist is its first complaint, not the queue.
  const run = await runCli(
    ['run', '--data-dir', join(dir, 'data'), '--workflow', join(dir, 'none.json'), '--workspace', dir, '--json', 'x'],
    { env },
  );
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /could not read the workflow file/);
  assert.doesNotMatch(run.stderr, /queue address|--queue/);
});
