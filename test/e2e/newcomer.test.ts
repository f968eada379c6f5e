/**
 * The newcomer path as a test (issue 27): docs/getting-started.md's commands, read from the page's fenced
 * `sh` blocks and run in order, as a new user would type them, in a temporary directory with its own HOME
 * (so `~/.scienceevolve/data` is the test's) and `scienceevolve` on the PATH (the page's alias). Each must
 * exit as the page says: 0, with the output the page shows; `ui` prints its URL, serves it, and ends on
 * Ctrl-C (SIGINT) with 0. The page's `/tmp/ws` becomes the temporary directory's `ws`, so that runs do not
 * share a workspace. Afterwards nothing the commands started is left running.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BIN, ROOT, assertGone, assertNothingLeft, tempDir } from './helpers.js';

const PAGE = join(ROOT, 'docs/getting-started.md');

/** Every command of the page's fenced `sh` blocks, in order: continuation lines joined, comments dropped. */
export function pageCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const [, body] of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const joined = (body ?? '').replace(/\\\n\s*/g, '');
    for (const line of joined.split('\n')) {
      const command = line.replace(/\s+#.*$/, '').trim();
      if (command !== '' && !command.startsWith('#')) commands.push(command);
    }
  }
  return commands;
}

/** What the page says each command prints (beyond exiting 0), by the command's start. */
const EXPECTED: [RegExp, (out: { stdout: string; stderr: string }, dir: string) => void][] = [
  [/^scienceevolve init /, (_out, dir) => assert.ok(existsSync(join(dir, 'my-flow/services/text-tools/server.cjs')))],
  [/^scienceevolve workflow pack /, (_out, dir) => assert.ok(existsSync(join(dir, 'my-flow/workflow.json')))],
  [
    /^scienceevolve services probe /,
    (out) => {
      assert.match(out.stdout, /text-tools: ready \(pid \d+\)\n\s+tools: count_words\n\s+resources: \(none\)/);
    },
  ],
  [/^scienceevolve run /, (out) => assert.equal(out.stdout, 'The text has 4 words.\n')],
  [/^scienceevolve status/, (out) => assert.match(out.stdout, /run run-\S+: succeeded/)],
];

// 240 s: init, pack, a probe and a run (each starts a supervisor and a service), status and the viewer, one
// after another, on a shared 2-core machine.
test('getting-started.md, command by command, as a newcomer types it', { timeout: 240_000 }, async (t) => {
  const markdown = readFileSync(PAGE, 'utf8');
  const commands = pageCommands(markdown);
  // What the checks below hold the commands to is what the page tells the reader.
  for (const said of ['`The text has 4 words.`', 'tools: count_words', 'resources: (none)']) {
    assert.ok(markdown.includes(said), `the page says ${said}`);
  }
  // The page's path, in order: a page edit that drops or reorders a step shows here.
  const starts = commands.map((c) => c.split(' ').slice(0, 2).join(' '));
  assert.deepEqual(starts, [
    'scienceevolve init',
    'scienceevolve workflow',
    'export SCIENCEEVOLVE_DATA_DIR=~/.scienceevolve/data',
    'mkdir -p',
    'scienceevolve services',
    'scienceevolve run',
    'scienceevolve status',
    'scienceevolve ui',
  ]);

  const dir = tempDir(t, 'se-newcomer-');
  const home = join(dir, 'home');
  const bin = join(dir, 'bin');
  mkdirSync(home);
  mkdirSync(bin);
  // The page's alias, as a command on the PATH (aliases do not reach `bash -c`).
  writeFileSync(join(bin, 'scienceevolve'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'scienceevolve'), 0o755);
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, PATH: `${bin}:${process.env.PATH}` };
  delete env.SCIENCEEVOLVE_DATA_DIR;

  for (const original of commands) {
    const command = original.replaceAll('/tmp/ws', join(dir, 'ws'));
    const exported = /^export ([A-Z_]+)=(.*)$/.exec(command);
    if (exported) {
      // As the shell would: `~` is HOME; the variable holds for every command after it.
      env[exported[1]!] = exported[2]!.replace(/^~(?=\/|$)/, home);
      continue;
    }
    if (command === 'scienceevolve ui') {
      await viewer(t, env, dir);
      continue;
    }
    const out = spawnSync('bash', ['-c', command], { cwd: dir, env, encoding: 'utf8', timeout: 90_000 });
    assert.equal(out.status, 0, `${original}\nexited ${out.status ?? out.signal}\n${out.stdout}\n${out.stderr}`);
    for (const [pattern, check] of EXPECTED) if (pattern.test(command)) check(out, dir);
  }
  // The data dir the page chose holds the run.
  assert.ok(existsSync(join(home, '.scienceevolve/data/format.json')));
  await assertNothingLeft({ dir });
});

/** `scienceevolve ui`: prints a URL with its token, serves the page there, and ends 0 on Ctrl-C. */
async function viewer(t: import('node:test').TestContext, env: NodeJS.ProcessEnv, dir: string): Promise<void> {
  const child = spawn('bash', ['-c', 'exec scienceevolve ui'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid!;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await assertGone(pid);
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    output += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    output += c;
  });
  const deadline = Date.now() + 30_000;
  let url: string | undefined;
  while (url === undefined) {
    url = /http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/.exec(output)?.[0];
    if (url === undefined && (Date.now() > deadline || child.exitCode !== null)) {
      assert.fail(`ui printed no URL: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const page = await fetch(url);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<title>ScienceEvolve runs<\/title>/);
  const projects = await fetch(new URL(`/api/projects?token=${new URL(url).searchParams.get('token')}`, url));
  assert.equal(projects.status, 200);
  assert.match(JSON.stringify(await projects.json()), /"status":"succeeded"/);
  child.kill('SIGINT');
  assert.equal(await exited, 0, output);
  await assertGone(pid);
}
