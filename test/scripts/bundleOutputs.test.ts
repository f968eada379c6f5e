/**
 * A bundle build's outputs reach the disk only after its checks, each written under `<file>.tmp` and renamed
 * over its real name, source maps first and the code last (scripts/lib/bundleOutputs.mjs): a build stopped
 * on the way never leaves a bundle cut short, or one its checks did not pass, under the name the bin runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
// @ts-expect-error: a plain ES module without types (the bundle builds' output writer)
import { bundleOutputs } from '../../scripts/lib/bundleOutputs.mjs';
import { tempDir } from '../fixtures/store/tempDir.js';

/** An esbuild output file held in memory, as `write: false` gives it. */
function output(path: string, text: string): { path: string; text: string; contents: Uint8Array } {
  return { path, text, contents: new TextEncoder().encode(text) };
}

const MAP = JSON.stringify({
  version: 3,
  sources: ['../src/a.ts', '../../../node_modules/zod/x.js'],
  mappings: 'AAAA;ACAA',
});

test('the maps go first, the bundle last, each by a rename; the map keeps our own sources only', async (t) => {
  const dir = await tempDir(t);
  const bundle = join(dir, 'x.bundle.cjs');
  writeFileSync(bundle, '/* an earlier build */');
  const { write } = bundleOutputs('test-build', [bundle, `${bundle}.map`]);
  write([output(bundle, 'module.exports = 1;\n'), output(`${bundle}.map`, MAP)]);
  assert.equal(readFileSync(bundle, 'utf8'), 'module.exports = 1;\n');
  assert.deepEqual(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')).sources, ['../src/a.ts']);
  assert.deepEqual(readdirSync(dir).sort(), ['x.bundle.cjs', 'x.bundle.cjs.map'], 'no temporary file is left');
});

test('a write that fails at the map leaves no bundle: the code is written after every map', async (t) => {
  const dir = await tempDir(t);
  const bundle = join(dir, 'x.bundle.cjs');
  // The map's temporary name is taken by a directory: its write fails before the bundle is reached.
  const { write } = bundleOutputs('test-build', [bundle, `${bundle}.map`]);
  mkdirSync(`${bundle}.map.tmp`);
  assert.throws(() => write([output(bundle, 'module.exports = 1;\n'), output(`${bundle}.map`, MAP)]), /EISDIR/);
  assert.equal(existsSync(bundle), false, 'the bundle was not written');
});

test('clear removes the outputs and a temporary one left by a stopped build; an undeclared output is refused', async (t) => {
  const dir = await tempDir(t);
  const bundle = join(dir, 'x.bundle.cjs');
  for (const name of [bundle, `${bundle}.map`, `${bundle}.tmp`]) writeFileSync(name, 'x');
  const { clear, write } = bundleOutputs('test-build', [bundle, `${bundle}.map`]);
  clear();
  assert.deepEqual(readdirSync(dir), []);
  assert.throws(() => write([output(join(dir, 'other.cjs'), 'x')]), /an output not declared/);
  assert.deepEqual(readdirSync(dir), []);
});
