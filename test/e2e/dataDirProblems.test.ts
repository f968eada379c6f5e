/**
 * Every data-dir problem is `io_error` naming the path and the fix (issue 27, item 2): a table of bad data
 * dirs × the commands that open one (`services probe`, `workflow load`, `run`), each with its message, exit
 * 1, within a time bound — a data dir under /proc used to spin in an endless mkdir loop. EACCES needs a user
 * the permissions bind: as root, the CLI runs as `nobody` (uid 65534) through `setpriv`.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { BIN, assertGone, tempDir } from './helpers.js';

/** Milliseconds a refused data dir may take, CLI start included, on a loaded 2-core machine: 20,000. */
const BOUND_MS = 20_000;

const asRoot = process.getuid?.() === 0;
const setpriv = spawnSync('setpriv', ['--version']).status === 0;
/** Whether `nobody` can run the built CLI here (the checkout and Node readable by all), as the EACCES rows need. */
const nobodyRuns =
  asRoot &&
  setpriv &&
  spawnSync('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', process.execPath, BIN, '--version'])
    .status === 0;

interface Case {
  name: string;
  /** The data dir, from the test's directory. */
  dataDir(dir: string): string;
  message: RegExp;
  fix: RegExp;
  /** Run as a user the permissions bind (root ignores them). */
  unprivileged?: boolean;
}

const CASES: Case[] = [
  {
    name: 'that is a file',
    dataDir: (dir) => join(dir, 'a-file'),
    message: /the data dir \S+\/a-file cannot be used: \S+\/a-file is a file, not a directory/,
    fix: /fix: remove or rename the file \S+\/a-file; pass another with --data-dir, or set it once with SCIENCEEVOLVE_DATA_DIR/,
  },
  {
    name: 'below a file',
    dataDir: (dir) => join(dir, 'a-file', 'data'),
    message: /the data dir \S+\/a-file\/data cannot be used: \S+\/a-file is a file, not a directory \(ENOTDIR\)/,
    fix: /fix: remove or rename the file \S+\/a-file;/,
  },
  {
    name: 'under /proc',
    dataDir: () => '/proc/scienceevolve-test/data',
    message: /the data dir \/proc\/scienceevolve-test\/data cannot be used: \/proc is on a pseudo-filesystem \(proc\)/,
    fix: /fix: choose a data dir on a real disk/,
  },
  {
    name: 'that is /proc',
    dataDir: () => '/proc',
    message: /the data dir \/proc cannot be used: \/proc is on a pseudo-filesystem \(proc\)/,
    fix: /fix: pass another with --data-dir/,
  },
  {
    name: 'under /sys',
    dataDir: () => '/sys/scienceevolve-test',
    message: /the data dir \/sys\/scienceevolve-test cannot be used: \/sys is on a pseudo-filesystem \(sysfs\)/,
    fix: /fix: choose a data dir on a real disk/,
  },
  {
    name: 'in a directory this user may not write (EACCES)',
    dataDir: (dir) => join(dir, 'root-only', 'data'),
    message: /the data dir \S+\/root-only\/data cannot be used: this user may not create \S+\/root-only\/data \(EACCES/,
    fix: /fix: choose a data dir this user may write .*, or give this user write permission on \S+\/root-only;/,
    unprivileged: true,
  },
  {
    name: 'that this user may not write (EACCES)',
    dataDir: (dir) => join(dir, 'root-only'),
    message: /the data dir \S+\/root-only cannot be used: this user may not write in \S+\/root-only \(EACCES\)/,
    fix: /fix: give this user write permission on \S+\/root-only/,
    unprivileged: true,
  },
];

const COMMANDS: { name: string; args(w: { workflow: string; workspace: string; script: string }): string[] }[] = [
  {
    name: 'services probe',
    args: (w) => ['services', 'probe', '--workflow', w.workflow, '--workspace', w.workspace, '--agent', 'main'],
  },
  { name: 'workflow load', args: (w) => ['workflow', 'load', '--workflow', w.workflow, '--workspace', w.workspace] },
  {
    name: 'run',
    args: (w) => ['run', '--workflow', w.workflow, '--workspace', w.workspace, '--script', w.script, 'count'],
  },
];

for (const c of CASES) {
  for (const command of COMMANDS) {
    const skip =
      c.unprivileged && asRoot && !nobodyRuns
        ? 'running as root, and uid 65534 cannot run the CLI here (no setpriv, or the checkout is not readable by all)'
        : false;
    test(`${command.name}: a data dir ${c.name} is io_error naming it and the fix`, {
      skip,
      timeout: 60_000,
    }, async (t) => {
      const dir = tempDir(t, 'se-datadir-');
      // Readable by the unprivileged user too (mkdtemp makes it 0700).
      chmodSync(dir, 0o755);
      writeFileSync(join(dir, 'a-file'), 'not a directory\n');
      mkdirSync(join(dir, 'root-only'), { mode: 0o755 });
      chmodSync(join(dir, 'root-only'), 0o755);
      const workspace = join(dir, 'ws');
      mkdirSync(workspace, { mode: 0o777 });
      const workflow = join(dir, 'workflow.json');
      writeFileSync(
        workflow,
        JSON.stringify({
          agents: { main: { instructions: 'x', mcpServers: [{ name: 's', project: 's' }] } },
          mcpDefinitions: { s: { entrypoint: 's.cjs', files: { 's.cjs': 'process.exit(1)\n' } } },
        }),
      );
      const script = join(dir, 'script.json');
      writeFileSync(script, JSON.stringify({ agents: { main: [{ final: 'x' }] } }));
      const args = [BIN, ...command.args({ workflow, workspace, script }), '--data-dir', c.dataDir(dir)];
      const privileged = !(c.unprivileged && asRoot);
      const started = Date.now();
      const out = await cliAs(t, privileged ? [process.execPath, ...args] : [...NOBODY, process.execPath, ...args]);
      const took = Date.now() - started;
      assert.equal(out.code, 1, out.stderr);
      assert.ok(took < BOUND_MS, `refused within ${BOUND_MS} ms (took ${took} ms)`);
      assert.match(out.stderr, new RegExp(`^error \\[io_error\\]: ${c.message.source}`, 'm'));
      assert.match(out.stderr, c.fix);
      assert.doesNotMatch(out.stderr, /internal|EEXIST: file already exists, mkdir/);
    });
  }
}

/** `setpriv` to nobody (uid and gid 65534, no groups), with a HOME it may not write (the CLI needs none). */
const NOBODY = ['setpriv', '--reuid', '65534', '--regid', '65534', '--clear-groups'];

/** Runs `argv`, collects its output, SIGKILLs it at the bound, and proves it gone. */
async function cliAs(t: TestContext, argv: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  assert.ok(child.pid !== undefined);
  const pid = child.pid;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await assertGone(pid);
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), BOUND_MS + 5_000);
  const code = await exited;
  clearTimeout(timer);
  await assertGone(pid);
  return { code, stderr };
}
