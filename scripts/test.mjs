#!/usr/bin/env node
// Runs every test/**/*.test.ts with node:test through tsx. Node 20's `node --test` takes no globs,
// so the files are listed here. Extra arguments are passed to node (e.g. --test-name-pattern=…);
// a path argument ending in .test.ts narrows the run to those files.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function find(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    // test/clis runs the real agent CLIs: `npm run test:clis` (scripts/test-clis.mjs).
    if (name === 'node_modules' || name === 'fixtures' || name === 'clis') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...find(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const args = process.argv.slice(2);
const picked = args.filter((a) => a.endsWith('.test.ts'));
const flags = args.filter((a) => !a.endsWith('.test.ts'));
const files = (picked.length > 0 ? picked : find(join(root, 'test')))
  .map((f) => relative(root, join(root, relative(root, f))))
  .sort();

const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...flags, ...files],
  { cwd: root, stdio: 'inherit' },
);
process.exit(result.status ?? 1);
