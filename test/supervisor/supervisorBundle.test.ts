/**
 * The supervisor's entry as one CommonJS file (docs/decisions/probe-bundle.md, "The supervisor's entry"): a
 * host forks `dist/main.bundle.cjs` when it is newer than the supervisor package's last tsc build, and
 * `dist/main.js` when it is stale or missing; the bundle's source map names the supervisor's TypeScript
 * files; a build the checks refuse leaves no bundle behind. That the supervisor forked from it supervises
 * (acknowledges, collects on the host's death) is what earlyFork, hostKilled and supervisorRestart prove:
 * they fork the default entry.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { forkSupervisor } from '../../packages/sdk/src/processes/supervisorClient.js';
import { defaultSupervisorEntry, supervisorBundleFresh } from '../../packages/sdk/src/processes/supervisorEntry.js';
import { assertGone } from '../fixtures/store/children.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = join(ROOT, 'packages', 'supervisor', 'dist');

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'se-supbundle-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A directory holding the files named, each with mtime `at` (s). */
function dist(dir: string, files: Record<string, number>): string {
  mkdirSync(dir, { recursive: true });
  for (const [file, at] of Object.entries(files)) {
    writeFileSync(join(dir, file), '');
    utimesSync(join(dir, file), at, at);
  }
  return dir;
}

test('the bundle is forked when it is newer than the last tsc build; stale, same-time or missing, main.js is', async (t) => {
  const dir = await tempDir(t);
  assert.equal(
    supervisorBundleFresh(dist(join(dir, 'fresh'), { 'main.bundle.cjs': 2000, '.tsbuildinfo': 1000 })),
    true,
  );
  assert.equal(
    supervisorBundleFresh(dist(join(dir, 'stale'), { 'main.bundle.cjs': 2000, '.tsbuildinfo': 3000 })),
    false,
  );
  assert.equal(
    supervisorBundleFresh(dist(join(dir, 'same'), { 'main.bundle.cjs': 2000, '.tsbuildinfo': 2000 })),
    false,
  );
  assert.equal(supervisorBundleFresh(dist(join(dir, 'none'), { 'main.js': 2000, '.tsbuildinfo': 1000 })), false);
  // A published package ships no .tsbuildinfo: its bundle is used.
  assert.equal(supervisorBundleFresh(dist(join(dir, 'published'), { 'main.bundle.cjs': 2000 })), true);
});

test('this checkout, built by `npm run build`, forks the bundle; it starts and ends with its host channel', async () => {
  assert.ok(existsSync(join(DIST, 'main.bundle.cjs')), 'no supervisor bundle: run `npm run build`');
  assert.equal(defaultSupervisorEntry(), join(DIST, 'main.bundle.cjs'), 'the bundle is older than the last tsc build');
  const child = forkSupervisor();
  assert.ok(child.pid !== undefined);
  // Forked ahead and never adopted: closing the channel ends it, having recorded nothing.
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.disconnect();
  await assertGone(child.pid);
});

test("the bundle's source map names the supervisor's TypeScript files, each of which exists", () => {
  const map = JSON.parse(readFileSync(join(DIST, 'main.bundle.cjs.map'), 'utf8')) as { sources: string[] };
  assert.ok(map.sources.includes('../src/main.ts'), map.sources.join(', '));
  for (const source of map.sources) {
    assert.match(source, /^\.\.\/src\/.*\.ts$/, source);
    assert.ok(existsSync(join(DIST, source)), `${source} does not exist`);
  }
  assert.ok(readFileSync(join(DIST, 'main.bundle.cjs'), 'utf8').startsWith("'use strict';"), 'strict, as its modules');
});

test('a supervisor build the checks refuse leaves no bundle behind (nor an earlier one)', async (t) => {
  // A tree of its own whose supervisor main.js imports a module of another package: the supervisor stands alone.
  const dir = await tempDir(t);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  copyFileSync(join(ROOT, 'scripts', 'build-supervisor.mjs'), join(dir, 'scripts', 'build-supervisor.mjs'));
  cpSync(join(ROOT, 'scripts', 'lib'), join(dir, 'scripts', 'lib'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const sup = join(dir, 'packages', 'supervisor', 'dist');
  const other = join(dir, 'packages', 'sdk', 'dist', 'x.js');
  mkdirSync(sup, { recursive: true });
  mkdirSync(dirname(other), { recursive: true });
  writeFileSync(other, 'export const x = 1;\n');
  writeFileSync(join(sup, 'main.js'), "import { x } from '../../sdk/dist/x.js';\nprocess.title = String(x);\n");
  writeFileSync(join(sup, 'main.bundle.cjs'), '/* an earlier build */\n');
  const child = spawn(process.execPath, [join(dir, 'scripts', 'build-supervisor.mjs')], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  assert.equal(code, 1, stderr);
  assert.match(stderr, /refused[\s\S]*packages\/sdk\/dist\/x\.js: not one of the supervisor's own modules/);
  for (const file of ['main.bundle.cjs', 'main.bundle.cjs.map']) {
    assert.equal(existsSync(join(sup, file)), false, `${file} is not left behind`);
  }
});
