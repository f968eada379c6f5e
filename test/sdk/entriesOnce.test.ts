/**
 * The light entries (`@scienceevolve/sdk/workflow`, `/store`, `/status`, `/harness-config`,
 * `/agent-services`) load fewer modules than the package root; they define nothing of their own. Every
 * runtime export of an entry is the very same value as the root's export of that name (public) or
 * `internal.ts`'s (internal), and every name an entry lists, type or value, is listed by one of the two:
 * a name added to an entry alone would be neither public nor internal.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as agentServicesEntry from '../../packages/sdk/src/agentServicesEntry.js';
import * as harnessConfigEntry from '../../packages/sdk/src/harnessConfigEntry.js';
import * as sdk from '../../packages/sdk/src/index.js';
import * as internal from '../../packages/sdk/src/internal.js';
import * as statusEntry from '../../packages/sdk/src/statusEntry.js';
import * as storeEntry from '../../packages/sdk/src/storeEntry.js';
import * as workflowEntry from '../../packages/sdk/src/workflowEntry.js';

const SRC = new URL('../../packages/sdk/src/', import.meta.url);
const ENTRIES: Record<string, Record<string, unknown>> = {
  workflowEntry,
  storeEntry,
  statusEntry,
  harnessConfigEntry,
  agentServicesEntry,
};

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

test('every name a light entry lists is public (index.ts) or internal (internal.ts)', () => {
  const listed = new Set([...listedNames('index.ts'), ...listedNames('internal.ts')]);
  for (const entry of Object.keys(ENTRIES)) {
    const entryNames = listedNames(`${entry}.ts`);
    assert.ok(entryNames.length > 0, `${entry}.ts lists its exports`);
    const neither = entryNames.filter((name) => !listed.has(name));
    assert.deepEqual(neither, [], `${entry}.ts exports names that are neither public nor internal`);
  }
});

test('every runtime export of a light entry is the root or internal export of the same value', () => {
  const root = sdk as Record<string, unknown>;
  const inner = internal as Record<string, unknown>;
  for (const [entry, module] of Object.entries(ENTRIES)) {
    for (const [name, value] of Object.entries(module)) {
      const owner = Object.hasOwn(root, name) ? root : Object.hasOwn(inner, name) ? inner : undefined;
      assert.ok(owner !== undefined, `${entry} exports ${name}, which neither the root nor internal.ts does`);
      assert.equal(owner[name], value, `${name} of ${entry} is the same value`);
    }
  }
});
