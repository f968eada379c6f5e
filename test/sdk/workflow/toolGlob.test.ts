/**
 * What a tool pattern means, decided from patterns alone: intersection and containment of `*` globs
 * checked against every name of a small alphabet (exhaustive up to a length), and filterNarrows case by case.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { filterNarrows, globMatches, globsIntersect } from '../../../packages/sdk/src/workflow/toolGlob.js';
import type { ToolFilter } from '../../../packages/sdk/src/workflow/workflowSchema.js';

/** Every string over `a`, `b` up to `length` characters. */
function names(length: number): string[] {
  const out = [''];
  let layer = [''];
  for (let i = 0; i < length; i += 1) {
    layer = layer.flatMap((s) => [`${s}a`, `${s}b`]);
    out.push(...layer);
  }
  return out;
}

/** Every pattern over `a`, `b`, `*` up to `length` characters. */
function patterns(length: number): string[] {
  const out: string[] = [];
  let layer = [''];
  for (let i = 0; i < length; i += 1) {
    layer = layer.flatMap((s) => [`${s}a`, `${s}b`, `${s}*`]);
    out.push(...layer);
  }
  return out;
}

// Names up to 7 characters witness every intersection and non-containment of patterns up to 3 characters.
const NAMES = names(7);
const PATTERNS = patterns(3);

test('globsIntersect is exact: true exactly when some name matches both', () => {
  for (const a of PATTERNS) {
    for (const b of PATTERNS) {
      const truth = NAMES.some((n) => globMatches(a, n) && globMatches(b, n));
      assert.equal(globsIntersect(a, b), truth, `${a} ∩ ${b}`);
    }
  }
});

test('globMatches(outer, inner) is exact containment of patterns', () => {
  for (const outer of PATTERNS) {
    for (const inner of PATTERNS) {
      const truth = NAMES.filter((n) => globMatches(inner, n)).every((n) => globMatches(outer, n));
      assert.equal(globMatches(outer, inner), truth, `${inner} ⊆ ${outer}`);
    }
  }
});

test('filterNarrows: a table of proposed and allowed filters', () => {
  const cases: Array<[ToolFilter | undefined, ToolFilter | undefined, boolean]> = [
    [undefined, undefined, true],
    [{ exclude: ['delete_*'] }, undefined, true],
    [undefined, { exclude: ['delete_*'] }, false],
    [{ exclude: [] }, { exclude: ['delete_*'] }, false],
    [{ exclude: ['delete_*'] }, { exclude: ['delete_*'] }, true],
    [{ exclude: ['delete_*', 'write'] }, { exclude: ['delete_*'] }, true],
    [{ exclude: ['delete*'] }, { exclude: ['delete_*'] }, true],
    [{ exclude: ['*'] }, { exclude: ['delete_*'] }, true],
    [{ exclude: ['delete_all'] }, { exclude: ['delete_*'] }, false],
    [{ exclude: ['write'] }, { exclude: ['delete_*', 'write'] }, false],
    [{ include: ['read'] }, { exclude: ['delete_*'] }, true],
    [{ include: ['read_*', 'list'] }, { exclude: ['delete_*'] }, true],
    [{ include: ['delete_all'] }, { exclude: ['delete_*'] }, false],
    [{ include: ['*_all'] }, { exclude: ['delete_*'] }, false],
    [{ include: ['*'] }, { exclude: ['delete_*'] }, false],
    [{ include: ['read'] }, { include: ['read', 'list'] }, true],
    [{ include: ['read_one'] }, { include: ['read_*'] }, true],
    [{ include: ['read_*'] }, { include: ['read_one'] }, false],
    [{ include: ['write'] }, { include: ['read', 'list'] }, false],
    [undefined, { include: ['read'] }, false],
    [{ exclude: ['x'] }, { include: ['read'] }, false],
    [undefined, { include: ['**'] }, true],
    [undefined, { exclude: [] }, true],
  ];
  for (const [proposed, allowed, narrows] of cases) {
    assert.equal(
      filterNarrows(proposed, allowed),
      narrows,
      `${JSON.stringify(proposed)} within ${JSON.stringify(allowed)}`,
    );
  }
});

test('an exhausted step budget answers the cautious way (not narrower)', () => {
  const many = { exclude: Array.from({ length: 256 }, (_, i) => `${'*a'.repeat(60)}${i}`) };
  const proposed = { include: Array.from({ length: 256 }, (_, i) => `${'b*'.repeat(60)}${i}`) };
  assert.equal(filterNarrows(proposed, many, { left: 10_000 }), false);
  assert.equal(filterNarrows({ exclude: many.exclude }, many, { left: 0 }), true, 'verbatim patterns need no steps');
});
