/**
 * The one rule for ids that become one directory name (schemas/pathId.ts): the store's paths and the queue
 * job's schema take it from one place, so they agree on every edge case — a refusal in one is a refusal in
 * the other, with the code `unsafe_path`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSdkError } from '../../../packages/sdk/src/errors.js';
import { AttemptSpecSchema } from '../../../packages/sdk/src/schemas/attempt.js';
import { PATH_ID_MAX_CHARS, isPathId } from '../../../packages/sdk/src/schemas/pathId.js';
import { ProjectPaths } from '../../../packages/sdk/src/store/projectStore.js';

const SAFE = [
  'run-m3x9k2-0a1b2c3d',
  'inv-m3x9k2-0a1b2c3d-2',
  'a',
  '0',
  'a.b',
  'a..b',
  'a.',
  'A_b-C',
  'x'.repeat(PATH_ID_MAX_CHARS),
];

const UNSAFE: [string, string][] = [
  ['empty', ''],
  ['dot', '.'],
  ['dot dot', '..'],
  ['leading dot', '.hidden'],
  ['leading dash', '-rf'],
  ['leading underscore', '_x'],
  ['slash', 'a/b'],
  ['parent by slash', '../x'],
  ['backslash', 'a\\b'],
  ['space', 'a b'],
  ['NUL', 'a\0b'],
  ['newline', 'a\nb'],
  ['unicode letter', 'caf\u00e9'],
  ['look-alike', 'run-\u0430'],
  ['fullwidth dot dot', '\uff0e\uff0e'],
  ['one too long', 'x'.repeat(PATH_ID_MAX_CHARS + 1)],
];

function storeRefuses(id: string): boolean {
  const paths = new ProjectPaths('/data', 'project-1');
  const refusals = [() => paths.runDir(id), () => paths.invocationDir('run-1', id)].map((make) => {
    try {
      make();
      return false;
    } catch (error) {
      assert.ok(isSdkError(error) && error.code === 'unsafe_path', String(error));
      return true;
    }
  });
  assert.equal(refusals[0], refusals[1], `runDir and invocationDir agree on ${JSON.stringify(id)}`);
  return refusals[0]!;
}

/** The schema's verdict on `id` as a run id: true when it refuses it, with `unsafe_path` in the issue. */
function schemaRefuses(id: string): boolean {
  const parsed = AttemptSpecSchema.shape.run.safeParse(id);
  if (parsed.success) return false;
  const issue = parsed.error.issues[0];
  assert.equal(issue?.code, 'custom');
  assert.equal((issue as { params?: { code?: string } }).params?.code, 'unsafe_path');
  return true;
}

test('safe ids pass the rule, the store and the job schema alike', () => {
  for (const id of SAFE) {
    assert.equal(isPathId(id), true, id);
    assert.equal(storeRefuses(id), false, id);
    assert.equal(schemaRefuses(id), false, id);
  }
});

test('unsafe ids are refused by the rule, the store (unsafe_path) and the job schema (unsafe_path) alike', () => {
  for (const [what, id] of UNSAFE) {
    assert.equal(isPathId(id), false, what);
    assert.equal(storeRefuses(id), true, what);
    assert.equal(schemaRefuses(id), true, what);
  }
});

test('a value that is not a string is no path id', () => {
  for (const value of [undefined, null, 1, ['a'], { toString: () => 'a' }]) assert.equal(isPathId(value), false);
});
