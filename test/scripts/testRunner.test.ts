/**
 * scripts/test.mjs: the quick and heavy sets split the suites between them (test/e2e/ heavy), and a suite
 * whose system part is missing stops the run at once with the one install line, before any test starts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RUNNER = join(ROOT, 'scripts/test.mjs');

function runner(args: string[], env: NodeJS.ProcessEnv = process.env) {
  // Without the parent's NODE_TEST_CONTEXT, the runner's node:test reports as it does for a user (spec).
  const { NODE_TEST_CONTEXT: _, ...own } = env;
  const result = spawnSync(process.execPath, [RUNNER, ...args], {
    cwd: ROOT,
    env: own,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(result.error, undefined);
  return result;
}

function listed(args: string[]): string[] {
  const result = runner([...args, '--list']);
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.split('\n').filter((line) => line !== '');
}

test('the quick and heavy sets are disjoint, together every suite; test/e2e/ is heavy', () => {
  const quick = listed([]);
  const heavy = listed(['--e2e']);
  const all = listed(['--all']);
  assert.ok(quick.length > 50 && heavy.length > 20, `${quick.length} quick, ${heavy.length} heavy`);
  assert.deepEqual(
    quick.filter((file) => heavy.includes(file)),
    [],
  );
  assert.deepEqual([...quick, ...heavy].sort(), all);
  const e2e = readdirSync(join(ROOT, 'test/e2e')).filter((f) => f.endsWith('.test.ts'));
  for (const file of e2e) assert.ok(heavy.includes(`test/e2e/${file}`), `test/e2e/${file} is not heavy`);
  assert.ok(!all.some((file) => file.startsWith('test/clis/') || file.includes('node_modules')));
});

test('missing redis-server and bwrap: the run stops at once, naming the suites and the apt-get line', (t) => {
  // A PATH holding node alone: neither redis-server nor bwrap is found there.
  const bin = mkdtempSync(join(tmpdir(), 'se-runner-path-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  symlinkSync(process.execPath, join(bin, 'node'));
  const started = Date.now();
  const result = runner(['test/queue/queueUrl.test.ts', 'test/sdk/processes/sandbox.test.ts'], {
    ...process.env,
    PATH: bin,
  });
  assert.equal(result.status, 1, result.stdout + result.stderr);
  assert.ok(Date.now() - started < 30_000, 'it stops before any test runs');
  assert.match(result.stderr, /redis-server is missing; these suites need it: test\/queue\/queueUrl\.test\.ts/);
  assert.match(
    result.stderr,
    /bubblewrap \(bwrap\) is missing; these suites need it: test\/sdk\/processes\/sandbox\.test\.ts/,
  );
  // One install line, once.
  assert.equal(result.stderr.split('apt-get install bubblewrap redis-server chromium').length - 1, 1, result.stderr);
  assert.doesNotMatch(result.stderr + result.stdout, /ENOENT|ℹ tests/);
});

test('a suite that needs none of the missing parts runs', (t) => {
  const bin = mkdtempSync(join(tmpdir(), 'se-runner-path-'));
  t.after(() => rmSync(bin, { recursive: true, force: true }));
  symlinkSync(process.execPath, join(bin, 'node'));
  const result = runner(['test/sdk/workflow/toolGlob.test.ts'], { ...process.env, PATH: bin });
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /ℹ pass [1-9]/);
  assert.doesNotMatch(result.stderr, /is missing/);
});
