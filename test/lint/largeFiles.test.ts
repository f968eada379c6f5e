/**
 * The rule of docs/decisions/large-files.md: a source file of packages/<pkg>/src over 400 lines is split, or
 * named in that note with what it holds and where it would split. Counted as `wc -l` counts (newlines).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const ROOT = new URL('../../', import.meta.url).pathname;
const LIMIT = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.isFile() && entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('every source file over 400 lines has its paragraph in docs/decisions/large-files.md', () => {
  const note = readFileSync(join(ROOT, 'docs/decisions/large-files.md'), 'utf8');
  const packages = readdirSync(join(ROOT, 'packages'));
  const large = packages
    .flatMap((pkg) => sourceFiles(join(ROOT, 'packages', pkg, 'src')))
    .filter((file) => (readFileSync(file, 'utf8').match(/\n/g) ?? []).length > LIMIT)
    .map((file) => relative(join(ROOT, 'packages'), file));
  assert.ok(large.length > 0, 'the count found no large file at all: the walk is broken');
  const unnoted = large.filter((file) => !note.includes(`**\`${file}\`**`));
  assert.deepEqual(unnoted, [], 'split these files, or give each a paragraph in docs/decisions/large-files.md');
});
