/**
 * storeSource (SPEC §4): content-addressed persistent sources, written to a temporary directory and
 * renamed into place. Real child processes race, write while a reader polls, and are SIGKILLed mid-write.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { McpDefinition } from '../../../packages/sdk/src/index.js';
import { type ProjectPaths, definitionDigest, openProject, storeSource } from '../../../packages/sdk/src/internal.js';
import { bigDefinition } from '../../fixtures/store/bigDefinition.js';
import { type Child, assertGone, killChild, spawnFixture } from '../../fixtures/store/children.js';
import { defer, tempDir } from '../../fixtures/store/tempDir.js';

/** Every file below `dir`, as POSIX paths relative to it, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

/** Asserts that `dir` holds exactly `definition`'s files with their full content. */
async function assertComplete(dir: string, definition: McpDefinition): Promise<void> {
  assert.deepEqual(await listFiles(dir), Object.keys(definition.files).sort(), `files of ${dir}`);
  for (const [path, content] of Object.entries(definition.files)) {
    assert.equal(await readFile(join(dir, path), 'utf8'), content, `content of ${path} in ${dir}`);
  }
}

/**
 * Checks every visible version under `mcp/`: each `<digest>/project-big/` must hold the complete big
 * definition its `seed.txt` names, and that definition must have that digest. Hidden entries (the
 * writers' temporary directories) are returned, not checked. `seen` skips versions already checked:
 * they are immutable.
 */
async function checkVisibleVersions(paths: ProjectPaths, seen = new Set<string>()): Promise<{ hidden: string[] }> {
  let digests: string[];
  try {
    digests = await readdir(paths.mcpDir);
  } catch {
    return { hidden: [] };
  }
  const hidden: string[] = [];
  for (const digest of digests) {
    if (digest.startsWith('.')) {
      hidden.push(digest);
      continue;
    }
    assert.match(digest, /^[0-9a-f]{64}$/, `visible entry ${digest} of mcp/`);
    for (const name of await readdir(join(paths.mcpDir, digest))) {
      assert.equal(name, 'project-big', `entry of mcp/${digest}`);
      const dir = join(paths.mcpDir, digest, name);
      if (seen.has(dir)) continue;
      // The directory is visible: seed.txt must be there at once, and everything else with it.
      const seed = await readFile(join(dir, 'seed.txt'), 'utf8');
      const definition = bigDefinition(seed);
      assert.equal(definitionDigest(definition), digest, `digest of seed ${seed}`);
      await assertComplete(dir, definition);
      seen.add(dir);
    }
  }
  return { hidden };
}

/** Starts a fixture child, registering its cleanup (SIGKILL, then proof it is gone) at once. */
function start(t: import('node:test').TestContext, fixture: string, args: string[]): Child {
  const child = spawnFixture(fixture, args);
  defer(t, async () => {
    await killChild(child);
    await assertGone(child.pid);
  });
  return child;
}

describe('storeSource', () => {
  test('writes mcp/<digest>/project-<name>/ with every file; a second store writes nothing', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    const definition = bigDefinition('one');
    const first = await storeSource(paths, 'big', definition);
    assert.equal(first.digest, definitionDigest(definition));
    assert.equal(first.dir, join(paths.root, 'mcp', first.digest, 'project-big'));
    assert.equal(first.written, true);
    await assertComplete(first.dir, definition);

    const again = await storeSource(paths, 'big', structuredClone(definition));
    assert.deepEqual(again, { ...first, written: false });
    await assertComplete(first.dir, definition);
    assert.deepEqual(await readdir(paths.mcpDir), [first.digest], 'no temporary directory left behind');
  });

  test('two names of one definition: one digest, a directory for each name; old versions stay', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    const v1 = bigDefinition('v1');
    const a = await storeSource(paths, 'alpha', v1);
    const b = await storeSource(paths, 'beta', v1);
    assert.equal(a.digest, b.digest);
    assert.deepEqual(await readdir(join(paths.mcpDir, a.digest)).then((n) => n.sort()), [
      'project-alpha',
      'project-beta',
    ]);
    const v2 = await storeSource(paths, 'alpha', bigDefinition('v2'));
    assert.notEqual(v2.digest, a.digest);
    await assertComplete(a.dir, v1);
    assert.equal((await readdir(paths.mcpDir)).length, 2);
  });

  test('many stores of one definition at once in one process all succeed with one result', async (t) => {
    const paths = await openProject(await tempDir(t), 'p');
    const definition = bigDefinition('together');
    const results = await Promise.all(Array.from({ length: 4 }, () => storeSource(paths, 'big', definition)));
    assert.equal(new Set(results.map((r) => `${r.digest} ${r.dir}`)).size, 1);
    assert.equal(results.filter((r) => r.written).length, 1);
    await assertComplete(results[0]!.dir, definition);
    assert.deepEqual(await readdir(paths.mcpDir), [results[0]!.digest]);
  });

  test('two child processes storing the same definition at once both succeed with one result', async (t) => {
    const dataDir = await tempDir(t);
    const paths = await openProject(dataDir, 'p');
    const children = [0, 1].map(() => start(t, 'storesOnSignal.ts', [dataDir, 'p', 'race']));
    await Promise.all(children.map((c) => c.waitForLine((l) => l === 'ready')));
    for (const c of children) c.process.stdin!.write('go\n');
    const results = await Promise.all(
      children.map(async (c) => JSON.parse(await c.waitForLine((l) => l.startsWith('{'))) as Record<string, unknown>),
    );
    for (const c of children) {
      assert.deepEqual(await c.exited, { code: 0, signal: null }, c.stderr());
      await assertGone(c.pid);
    }
    const definition = bigDefinition('race');
    const expected = {
      digest: definitionDigest(definition),
      dir: paths.sourceDir(definitionDigest(definition), 'big'),
    };
    for (const r of results) assert.deepEqual({ digest: r.digest, dir: r.dir }, expected);
    assert.deepEqual(results.map((r) => r.written).sort(), [false, true], 'exactly one of them wrote it');
    await assertComplete(expected.dir, definition);
    assert.deepEqual(await readdir(paths.mcpDir), [expected.digest], 'no temporary directory left behind');
  });

  test('a reader polling while a child writes never sees a partial version directory', async (t) => {
    const dataDir = await tempDir(t);
    const paths = await openProject(dataDir, 'p');
    const count = 8;
    const writer = start(t, 'storesInLoop.ts', [dataDir, 'p', 'poll', String(count)]);
    const seen = new Set<string>();
    let polls = 0;
    let done = false;
    void writer.exited.then(() => {
      done = true;
    });
    while (!done) {
      await checkVisibleVersions(paths, seen);
      polls++;
      await sleep(2);
    }
    assert.deepEqual(await writer.exited, { code: 0, signal: null }, writer.stderr());
    await assertGone(writer.pid);
    await checkVisibleVersions(paths, seen);
    assert.equal(seen.size, count, 'every version was checked');
    assert.ok(polls >= 2, `the reader polled during the writes (${polls} polls)`);
  });

  test('a writer SIGKILLed mid-write leaves no visible partial version, and the next store works', async (t) => {
    const dataDir = await tempDir(t);
    const paths = await openProject(dataDir, 'p');
    // Kill points: right as a definition starts, a little into it, further in, and after one completed.
    const killPoints: Array<{ at: number; delayMs: number }> = [
      { at: 0, delayMs: 0 },
      { at: 0, delayMs: 4 },
      { at: 0, delayMs: 15 },
      { at: 1, delayMs: 8 },
    ];
    const interrupted: string[] = [];
    for (const [round, point] of killPoints.entries()) {
      const writer = start(t, 'storesInLoop.ts', [dataDir, 'p', `crash${round}`]);
      const seed = `crash${round}-${point.at}`;
      await writer.waitForLine((l) => l === `writing ${seed}`);
      if (point.delayMs > 0) await sleep(point.delayMs);
      await killChild(writer);
      assert.equal((await writer.exited).signal, 'SIGKILL');
      await assertGone(writer.pid);
      interrupted.push(seed);
      const { hidden } = await checkVisibleVersions(paths);
      for (const name of hidden) assert.match(name, /^\.tmp-/, 'only the temporary directories of writers are hidden');
    }
    // Storing what each writer was writing when it died now works, completely.
    for (const seed of interrupted) {
      const definition = bigDefinition(seed);
      const stored = await storeSource(paths, 'big', definition);
      assert.equal(stored.digest, definitionDigest(definition));
      await assertComplete(stored.dir, definition);
    }
    await checkVisibleVersions(paths);
    // The dead writers' temporary directories were removed by the next store.
    const leftovers = (await readdir(paths.mcpDir)).filter((name) => name.startsWith('.tmp-'));
    assert.deepEqual(leftovers, [], "no dead writer's temporary directory is left");
  });
});

test("a store removes dead writers' temporary directories and leaves a live one's", async (t) => {
  const dataDir = await tempDir(t);
  const paths = await openProject(dataDir, 'p');
  await mkdir(join(paths.mcpDir, '.tmp-999999-abcdef', 'sub'), { recursive: true });
  // The parent of this test process is alive: its directory must stay.
  const live = `.tmp-${process.ppid}-0123ab`;
  await mkdir(join(paths.mcpDir, live), { recursive: true });
  await storeSource(paths, 'x', {
    entrypoint: 'a.cjs',
    files: { 'a.cjs': '1' },
    command: 'node',
    args: [],
    envFrom: {},
  });
  const hidden = (await readdir(paths.mcpDir)).filter((name) => name.startsWith('.'));
  assert.deepEqual(hidden, [live]);
});
