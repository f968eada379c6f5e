/**
 * The worked example of docs/api.md, run for real: examples/api/services.mjs (which imports only the
 * package root, `@scienceevolve/sdk`, as built) loads the demo workflow into a fresh data dir, starts the
 * analyst's `stats` service, calls `stats__summarize` and closes. Every child process it started (the
 * supervisor, the service or its sandbox) is logged by a preload and proven gone afterwards, and no process
 * carries a marker of the project. Slow (a few seconds): a supervisor and a service start.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, assertGone, assertNothingLeft, killLeftovers, spawnNode, tempDir } from './helpers.js';

const EXAMPLE = join(ROOT, 'examples/api/services.mjs');
const SPAWN_LOG = join(ROOT, 'test/fixtures/api/spawnLog.mjs');

test('the worked example of docs/api.md runs with the public root alone and leaves nothing', {
  timeout: 120_000,
}, async (t) => {
  const source = readFileSync(EXAMPLE, 'utf8');
  const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
  assert.deepEqual(
    imports.filter((m) => m?.startsWith('@scienceevolve/')),
    ['@scienceevolve/sdk'],
    'the example imports the package root and nothing else of ScienceEvolve',
  );

  const dir = tempDir(t, 'se-api-');
  const dataDir = join(dir, 'data');
  const workspace = join(dir, 'workspace');
  const log = join(dir, 'spawned.log');
  writeFileSync(log, '');
  t.after(() => killLeftovers({ dir }));

  const example = spawnNode(t, ['--import', SPAWN_LOG, EXAMPLE, dataDir, workspace], {
    env: { ...process.env, SCIENCEEVOLVE_SPAWN_LOG: log },
  });
  const { code } = await example.exited;
  assert.equal(code, 0, `the example failed:\n${example.stdout()}\n${example.stderr()}`);

  const out = example.stdout();
  const project = /^project (\S+): version 1$/m.exec(out)?.[1];
  assert.ok(project !== undefined, out);
  assert.match(out, /^tools: stats__summarize$/m);
  // Computed by the stats service's own process: 3, 5, 8, 13.
  assert.match(out, /^result: n=4 mean=7\.25 min=3 max=13$/m);

  const spawned = readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number);
  assert.ok(spawned.length >= 2, `the example started its supervisor and a service: ${spawned.join(' ')}`);
  await assertGone(example.pid);
  for (const pid of spawned) await assertGone(pid);
  await assertNothingLeft({ dir, projectId: project });
});
