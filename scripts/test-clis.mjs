#!/usr/bin/env node
// Runs test/clis/*.test.ts: each command-harness preset against its real agent CLI (installed with
// `npm ci --prefix test/clis`) and a local model server. As root, everything — the model server, the
// host, the CLIs — runs inside a fresh network namespace whose only interface is loopback (`unshare -n`,
// then `ip link set lo up`), which proves the CLIs stay offline. Elsewhere the tests run in the host's
// network, and this script says so. Extra arguments are passed to node; a path ending in .test.ts
// narrows the run.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dir = join(root, 'test', 'clis');
if (!existsSync(join(dir, 'node_modules', '.bin'))) {
  console.error('test:clis: the CLIs are not installed; run `npm ci --prefix test/clis` first');
  process.exit(1);
}
const args = process.argv.slice(2);
const picked = args.filter((a) => a.endsWith('.test.ts'));
const flags = args.filter((a) => !a.endsWith('.test.ts'));
const files = (
  picked.length > 0
    ? picked
    : readdirSync(dir)
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => join(dir, f))
)
  .map((f) => relative(root, join(root, relative(root, f))))
  .sort();
// Gemini CLI ignores a system settings file below a directory others can write (such as /tmp), and the
// gemini preset refuses to start there: the tests' temporary directories go under one of our own.
const tmp = join(dir, '.tmp');
mkdirSync(tmp, { recursive: true, mode: 0o700 });
chmodSync(tmp, 0o700);
process.env.TMPDIR = tmp;
const node = [
  process.execPath,
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=2',
  '--test-reporter=spec',
  ...flags,
  ...files,
];

/**
 * Why this process cannot make a loopback-only network namespace, or undefined when it can (root, and
 * `unshare -n` with `ip link set lo up` works here).
 */
function whyNotIsolated() {
  if (process.getuid?.() !== 0) return 'not root';
  const probe = spawnSync('unshare', ['-n', 'ip', 'link', 'set', 'lo', 'up'], { encoding: 'utf8' });
  if (probe.error !== undefined) return `unshare could not be run (${probe.error.message})`;
  if (probe.status !== 0) {
    const said = (probe.stderr ?? '').trim().split('\n').at(-1);
    return `\`unshare -n ip link set lo up\` failed${said ? ` (${said})` : ''}`;
  }
  return undefined;
}

let result;
const why = whyNotIsolated();
if (why === undefined) {
  console.error('test:clis: in a loopback-only network namespace (unshare -n)');
  const quoted = node.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  result = spawnSync('unshare', ['-n', 'sh', '-c', `ip link set lo up && exec ${quoted}`], {
    cwd: root,
    stdio: 'inherit',
  });
} else {
  console.error(
    `test:clis: NOT isolated: ${why}; running in the host network, so the CLIs staying offline is not proven`,
  );
  result = spawnSync(node[0], node.slice(1), { cwd: root, stdio: 'inherit' });
}
process.exit(result.status ?? 1);
