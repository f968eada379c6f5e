/**
 * Each export of a light entry (`@scienceevolve/sdk/workflow`, `/store`, `/status`, `/harness-config`) is
 * listed once, in its entry: the package root re-exports the entries whole and names none of their exports
 * again (two lists drift: a name added to one is missing from the other). Every runtime export of an entry
 * is the root's very same value.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as harnessConfigEntry from '../../packages/sdk/src/harnessConfigEntry.js';
import * as sdk from '../../packages/sdk/src/index.js';
import * as statusEntry from '../../packages/sdk/src/statusEntry.js';
import * as storeEntry from '../../packages/sdk/src/storeEntry.js';
import * as workflowEntry from '../../packages/sdk/src/workflowEntry.js';

const SRC = new URL('../../packages/sdk/src/', import.meta.url);
const ENTRIES = ['workflowEntry', 'storeEntry', 'statusEntry', 'harnessConfigEntry'];

/** The names a module's source lists in `export { … }` and `export type { … }` (re-exports included). */
function listedNames(file: string): string[] {
  const source = readFileSync(new URL(file, SRC), 'utf8');
  const names: string[] = [];
  for (const match of source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of (match[1] ?? '').split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop();
      if (name !== undefined && name !== '') names.push(name);
    }
  }
  return names;
}

test('the root names no export of a light entry again, and re-exports each entry whole', () => {
  const root = listedNames('index.ts');
  const rootSource = readFileSync(new URL('index.ts', SRC), 'utf8');
  for (const entry of ENTRIES) {
    assert.ok(rootSource.includes(`export * from './${entry}.js';`), `index.ts re-exports ${entry}.ts`);
    const twice = listedNames(`${entry}.ts`).filter((name) => root.includes(name));
    assert.deepEqual(twice, [], `listed both in ${entry}.ts and in index.ts`);
  }
});

test('every runtime export of a light entry is the root export of the same value', () => {
  const entries: Record<string, Record<string, unknown>> = {
    workflowEntry,
    storeEntry,
    statusEntry,
    harnessConfigEntry,
  };
  const root = sdk as Record<string, unknown>;
  for (const [entry, module] of Object.entries(entries)) {
    for (const [name, value] of Object.entries(module)) {
      assert.ok(Object.hasOwn(root, name), `${entry} exports ${name}, the root does not`);
      assert.equal(root[name], value, `${name} of ${entry} is the root's`);
    }
  }
});
