#!/usr/bin/env node
// Runs test/**/*.test.ts with node:test through tsx. Node 20's `node --test` takes no globs, so the files
// are listed here. Two sets (docs/testing.md):
//   node scripts/test.mjs          the quick suite (`npm test`): everything but the heavy folders below
//   node scripts/test.mjs --e2e    the heavy suites (`npm run test:e2e`): several processes per test, seconds each
//   node scripts/test.mjs --all    both
// A path argument ending in .test.ts narrows the run to those files (of either set); --list prints the chosen
// files and runs nothing. Other arguments are passed to node (e.g. --test-name-pattern=…). Before anything runs, the system parts and test-only installs
// the chosen files need are checked: a missing one stops the run at once with the line that installs it.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

/**
 * The heavy suites: folders (ending in `/`) and files, as paths from the repository root. A test is heavy when
 * it starts several processes (the built CLI, services, a supervisor, redis-server, chromium) and takes
 * seconds. New heavy tests go under test/e2e/. Chosen from each file's measured duration (docs/testing.md): the
 * quick suite keeps every unit and integration test that takes under about 20 s on a loaded 2-core machine.
 */
const HEAVY = [
  'test/e2e/',
  'test/queue/',
  'test/viewer/',
  'test/lint/boundaries.test.ts',
  'test/cli/bridgeArgv.test.ts',
  'test/cli/bridgeSecrets.test.ts',
  'test/cli/gatewaySecrets.test.ts',
  'test/cli/jsonShapes.test.ts',
  'test/cli/queueOptions.test.ts',
  'test/sdk/invocation/probeCli.test.ts',
  'test/sdk/engine/prestart.test.ts',
  'test/sdk/processes/sandbox.test.ts',
  'test/sdk/processes/sandboxHardening.test.ts',
  'test/sdk/processes/sandboxPolicy.test.ts',
  'test/sdk/reconfigure/crashAtomicity.test.ts',
];

/**
 * What each suite needs from the machine. `prefixes` name files or folders (from the repository root);
 * `present` says whether the part is there; `install` is the one line that adds it.
 */
const NEEDS = [
  {
    part: 'bubblewrap (bwrap)',
    prefixes: ['test/sdk/processes/sandbox'],
    present: () => onPath('bwrap'),
    install: 'apt-get install bubblewrap redis-server chromium',
  },
  {
    part: 'redis-server',
    prefixes: ['test/queue/', 'test/cli/jsonShapes.test.ts'],
    present: () => onPath('redis-server'),
    install: 'apt-get install bubblewrap redis-server chromium',
  },
  {
    part: 'chromium (/usr/bin/chromium)',
    prefixes: ['test/viewer/viewer.test.ts'],
    present: () => existsSync('/usr/bin/chromium'),
    install: 'apt-get install bubblewrap redis-server chromium',
  },
  {
    part: "the MCP Inspector's CLI (a test-only install of its own)",
    prefixes: [
      'test/e2e/applyWorkflowInspector.test.ts',
      'test/e2e/httpFace.test.ts',
      'test/e2e/referenceServers.test.ts',
      'test/e2e/stdioFace.test.ts',
    ],
    present: () => existsSync(join(root, 'test/inspector/node_modules/@modelcontextprotocol/inspector/package.json')),
    install: 'npm ci --prefix test/inspector',
  },
];

/** True when `command` is an executable file in a directory of PATH. */
function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    // test/clis runs the real agent CLIs: `npm run test:clis` (scripts/test-clis.mjs); test/inspector is an install.
    if (name === 'node_modules' || name === 'fixtures' || name === 'clis' || name === 'inspector') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const isHeavy = (file) => HEAVY.some((prefix) => file.startsWith(prefix));

const args = process.argv.slice(2);
const set = args.includes('--all') ? 'all' : args.includes('--e2e') ? 'e2e' : 'quick';
const picked = args.filter((a) => a.endsWith('.test.ts'));
const flags = args.filter((a) => !a.endsWith('.test.ts') && a !== '--e2e' && a !== '--all' && a !== '--list');
const files = (picked.length > 0 ? picked : find(join(root, 'test')))
  .map((f) => relative(root, join(root, relative(root, f))))
  .filter((f) => picked.length > 0 || set === 'all' || (set === 'e2e') === isHeavy(f))
  .sort();

if (args.includes('--list')) {
  console.log(files.join('\n'));
  process.exit(0);
}

const missing = [];
for (const need of NEEDS) {
  const suites = files.filter((f) => need.prefixes.some((prefix) => f.startsWith(prefix)));
  if (suites.length > 0 && !need.present()) missing.push({ ...need, suites });
}
if (missing.length > 0) {
  for (const need of missing) {
    console.error(`test: ${need.part} is missing; these suites need it: ${need.suites.join(', ')}`);
  }
  const lines = [...new Set(missing.map((need) => need.install))];
  console.error(`test: install it, then run again:\n${lines.map((line) => `  ${line}`).join('\n')}`);
  process.exit(1);
}

const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...flags, ...files],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
