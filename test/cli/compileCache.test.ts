/**
 * The CLI's own compile cache (issue 14): on Node ≥ 22.1 the bin enables Node's module compile cache under
 * the user cache directory (`$XDG_CACHE_HOME/scienceevolve/compile` here), a `NODE_COMPILE_CACHE` of the
 * user's wins, `NODE_DISABLE_COMPILE_CACHE` turns it off; on Node 20 only the light bundle's code cache is
 * written (docs/decisions/cli-light-bundle.md) and the CLI works.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import nodeModule from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { cliCompileCacheDir } from '../../packages/cli/src/entry.ts';
import { assertGone } from '../fixtures/store/children.js';
import { tempDir } from '../fixtures/store/tempDir.js';
import { BIN, ROOT, workflowFixture } from './runCli.js';

const HAS_COMPILE_CACHE = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';

function fileCount(dir: string): number {
  if (!existsSync(dir)) return 0;
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).length;
}

/** Runs `validate` on the minimal workflow with `env` added; asserts exit 0 and that the process is gone. */
async function validateWith(env: Record<string, string>): Promise<void> {
  const base = { ...process.env };
  delete base.NODE_COMPILE_CACHE;
  delete base.NODE_DISABLE_COMPILE_CACHE;
  const child = spawn(process.execPath, [BIN, 'validate', workflowFixture('minimal.json')], {
    cwd: ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  await assertGone(child.pid!);
  assert.equal(code, 0, stderr);
}

describe(`the CLI's compile cache (${HAS_COMPILE_CACHE ? 'this runtime has one' : 'this runtime has none'})`, () => {
  test('cliCompileCacheDir: XDG_CACHE_HOME, ~/.cache, macOS and Windows', () => {
    assert.equal(
      cliCompileCacheDir({ XDG_CACHE_HOME: '/c', HOME: '/h' }, 'linux'),
      join('/c', 'scienceevolve', 'compile'),
    );
    assert.equal(cliCompileCacheDir({ HOME: '/h' }, 'linux'), join('/h', '.cache', 'scienceevolve', 'compile'));
    assert.equal(
      cliCompileCacheDir({ HOME: '/h' }, 'darwin'),
      join('/h', 'Library', 'Caches', 'scienceevolve', 'compile'),
    );
    assert.equal(
      cliCompileCacheDir({ LOCALAPPDATA: 'C:\\L', HOME: '/h' }, 'win32'),
      join('C:\\L', 'scienceevolve', 'compile'),
    );
  });

  test('validate fills the user cache directory; NODE_COMPILE_CACHE wins; NODE_DISABLE_COMPILE_CACHE turns it off', async (t) => {
    const dir = await tempDir(t);
    const xdg = join(dir, 'xdg');
    const own = join(dir, 'own');
    const off = join(dir, 'off');
    await validateWith({ XDG_CACHE_HOME: xdg });
    await validateWith({ XDG_CACHE_HOME: join(dir, 'unused'), NODE_COMPILE_CACHE: own });
    await validateWith({ XDG_CACHE_HOME: off, NODE_DISABLE_COMPILE_CACHE: '1' });
    const defaultDir = join(xdg, 'scienceevolve', 'compile');
    if (HAS_COMPILE_CACHE) {
      assert.ok(fileCount(defaultDir) > 0, `the CLI wrote its compile cache under ${defaultDir}`);
      assert.ok(fileCount(own) > 0, 'a NODE_COMPILE_CACHE of the user is used');
      assert.equal(fileCount(join(dir, 'unused')), 0, 'and the default directory is not');
    } else {
      // Node 20 has no module compile cache: only the light bundle's own code cache (entry.ts) is written.
      const light = `light-validate-${process.version}-${process.arch}.cache`;
      assert.deepEqual(readdirSync(defaultDir), [light], 'Node 20: the light code cache alone');
      assert.deepEqual(readdirSync(own), [light], 'Node 20: the light code cache goes where NODE_COMPILE_CACHE says');
      assert.equal(fileCount(join(dir, 'unused')), 0, 'and the default directory is not used');
    }
    assert.equal(fileCount(off), 0, 'NODE_DISABLE_COMPILE_CACHE: nothing written');
  });
});
