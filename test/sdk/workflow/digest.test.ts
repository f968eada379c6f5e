/** The digest of a definition (SPEC §2), recomputed here independently of the SDK's own code. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import stableStringify from 'fast-json-stable-stringify';
import { parseWorkflow } from '../../../packages/sdk/src/index.js';
import { canonicalDefinitionJson, definitionDigest } from '../../../packages/sdk/src/internal.js';
import { type Doc, minimalWorkflow } from '../../fixtures/workflows/documents.js';

const written: Doc = {
  command: 'python3',
  entrypoint: 'src/server.py',
  args: ['--stdio', '--verbose'],
  envFrom: { API_KEY: 'TASK_MCP_API_KEY', REGION: 'AWS_REGION' },
  files: { 'src/server.py': 'print("hi")\n', 'src/util.py': '', 'README.md': '# x\n' },
};

/** The recipe of docs/data-dir.md, step by step. */
function recipe(def: Doc): string {
  const canonical = stableStringify({
    files: def.files,
    entrypoint: def.entrypoint,
    command: def.command ?? 'node',
    args: def.args ?? [],
    envFrom: def.envFrom ?? {},
  });
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** The same object with every key order reversed, recursively. */
function reversed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversed);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reversed(v)]),
  );
}

describe('definitionDigest', () => {
  test('is the sha256 hex of fast-json-stable-stringify of the five fields', () => {
    const digest = definitionDigest(written as never);
    assert.match(digest, /^[0-9a-f]{64}$/);
    assert.equal(digest, recipe(written));
    assert.equal(
      canonicalDefinitionJson(written as never),
      '{"args":["--stdio","--verbose"],"command":"python3","entrypoint":"src/server.py","envFrom":{"API_KEY":"TASK_MCP_API_KEY","REGION":"AWS_REGION"},"files":{"README.md":"# x\\n","src/server.py":"print(\\"hi\\")\\n","src/util.py":""}}',
    );
  });

  test('pins one known value, so that a change of recipe is noticed', () => {
    const def = { entrypoint: 'server.cjs', files: { 'server.cjs': 'x' } };
    assert.equal(
      createHash('sha256')
        .update('{"args":[],"command":"node","entrypoint":"server.cjs","envFrom":{},"files":{"server.cjs":"x"}}')
        .digest('hex'),
      definitionDigest(def),
    );
  });

  test('does not depend on key order', () => {
    const shuffled = reversed(written) as Doc;
    assert.notEqual(JSON.stringify(shuffled), JSON.stringify(written));
    assert.equal(definitionDigest(shuffled as never), definitionDigest(written as never));
  });

  test('does not depend on whether defaults were written out', () => {
    const bare = { entrypoint: 'server.cjs', files: { 'server.cjs': 'x' } };
    const spelled = { ...bare, command: 'node', args: [], envFrom: {} };
    assert.equal(definitionDigest(bare), definitionDigest(spelled));
    const workflow = parseWorkflow(minimalWorkflow());
    const def = workflow.mcpDefinitions.tools!;
    assert.equal(definitionDigest(def), definitionDigest(minimalWorkflow().mcpDefinitions.tools));
    assert.equal(definitionDigest(def), recipe(def));
  });

  const changes: Array<[string, (d: Doc) => void]> = [
    ['a file content', (d) => (d.files['src/util.py'] = ' ')],
    [
      'a file path',
      (d) => (d.files = { 'src/server.py': d.files['src/server.py'], 'src/utils.py': '', 'README.md': '# x\n' }),
    ],
    ['a file added', (d) => (d.files['LICENSE.txt'] = 'MIT')],
    ['a file removed', (d) => delete d.files['README.md']],
    ['the entrypoint', (d) => (d.entrypoint = 'src/util.py')],
    ['the command', (d) => (d.command = 'python3.12')],
    ['the command, to its default', (d) => delete d.command],
    ['an argument', (d) => (d.args = ['--stdio', '--quiet'])],
    ['the order of args', (d) => (d.args = ['--verbose', '--stdio'])],
    ['args emptied', (d) => (d.args = [])],
    ['an envFrom host variable', (d) => (d.envFrom.API_KEY = 'OTHER_KEY')],
    ['an envFrom service variable', (d) => (d.envFrom = { KEY: 'TASK_MCP_API_KEY', REGION: 'AWS_REGION' })],
    ['envFrom emptied', (d) => (d.envFrom = {})],
  ];
  for (const [what, change] of changes) {
    test(`changes when ${what} changes`, () => {
      const other = structuredClone(written);
      change(other);
      assert.notEqual(definitionDigest(other as never), definitionDigest(written as never));
      assert.equal(definitionDigest(other as never), recipe(other));
    });
  }

  test('does not change with the name: two names of one definition share a digest', () => {
    const workflow = parseWorkflow({
      agents: { main: {} },
      mcpDefinitions: { alpha: structuredClone(written), beta: structuredClone(written) },
    });
    assert.equal(definitionDigest(workflow.mcpDefinitions.alpha!), definitionDigest(workflow.mcpDefinitions.beta!));
  });
});

test('the digest streamed file by file equals sha256 of the whole canonical JSON, for awkward content', () => {
  const files: Record<string, string> = {
    a: '',
    Z: 'z',
    'é/ü.txt': '"quotes"\u2028\n\\ and 😀',
    'b/c': 'x'.repeat(70_000),
  };
  const definition = { files, entrypoint: 'Z', command: 'python3', args: ['-u', 'x"y'], envFrom: { B: 'X', A: 'Y' } };
  const expected = createHash('sha256').update(stableStringify(definition), 'utf8').digest('hex');
  assert.equal(definitionDigest(definition), expected);
});
