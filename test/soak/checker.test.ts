/**
 * The soak's independent checker must catch each rule it holds, or the fuzz figure "0 accepted documents
 * break a rule" could not fail. Also: the SDK's validator and the checker agree on hand-made documents.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateWorkflow } from '../../packages/sdk/dist/internal.js';
import { independentCheck } from '../../soak/checker.ts';
import { Rng } from '../../soak/common.ts';
import { mutate } from '../../soak/fuzz.ts';

interface Doc {
  agents: { main: { mcpServers: Array<{ name: string; project: string }>; instructions?: string } };
  mcpDefinitions: { tools: { entrypoint: string; files: Record<string, string>; args: string[]; command?: string } };
}

function valid(): Doc {
  return {
    agents: { main: { mcpServers: [{ name: 'svc', project: 'tools' }] } },
    mcpDefinitions: { tools: { entrypoint: 'server.cjs', files: { 'server.cjs': 'x', 'lib/a.cjs': 'y' }, args: [] } },
  };
}

test('a valid document breaks no rule, and the SDK accepts it', () => {
  assert.deepEqual(independentCheck(valid()).broken, []);
  assert.equal(validateWorkflow(valid()).ok, true);
});

const breakers: Array<[string, (d: Doc) => void, RegExp]> = [
  [
    'agent named __proto__',
    (d) => Object.defineProperty(d.agents, '__proto__', { value: {}, enumerable: true }),
    /bad agent name/,
  ],
  ['.. segment', (d) => (d.mcpDefinitions.tools.files['a/../b'] = 'x'), /"\.\." segment/],
  ['absolute path', (d) => (d.mcpDefinitions.tools.files['/etc/x'] = 'x'), /absolute/],
  ['file and directory', (d) => (d.mcpDefinitions.tools.files.lib = 'x'), /file and dir/],
  ['65 arguments', (d) => (d.mcpDefinitions.tools.args = Array(65).fill('a')), /more than 64/],
  ['an argument of 4,097', (d) => (d.mcpDefinitions.tools.args = ['a'.repeat(4097)]), /args\[0\]: bad/],
  ['a file of 500,001', (d) => (d.mcpDefinitions.tools.files['server.cjs'] = 'a'.repeat(500_001)), /too long/],
  ['a shell command', (d) => (d.mcpDefinitions.tools.command = 'node -e 1'), /not one executable/],
  [
    'a name of 65',
    (d) => ((d.agents.main.mcpServers[0] as { name: string }).name = 'a'.repeat(65)),
    /bad service name/,
  ],
  [
    'the fixed catalog name',
    (d) => ((d.agents.main.mcpServers[0] as { name: string }).name = 'scienceevolve'),
    /fixed catalog/,
  ],
  [
    'a reference to a prototype name',
    (d) => ((d.agents.main.mcpServers[0] as { project: string }).project = 'constructor'),
    /no such definition/,
  ],
  ['an entrypoint from the prototype', (d) => (d.mcpDefinitions.tools.entrypoint = 'toString'), /entrypoint/],
];

for (const [what, breakIt, expected] of breakers) {
  test(`the checker flags ${what}, and the SDK refuses it too`, () => {
    const doc = valid();
    breakIt(doc);
    const { broken } = independentCheck(JSON.parse(JSON.stringify(doc)));
    assert.ok(
      broken.some((b) => expected.test(b)),
      `${what}: ${broken.join('; ')}`,
    );
    assert.equal(validateWorkflow(JSON.parse(JSON.stringify(doc))).ok, false, what);
  });
}

test('the checker flags a lone surrogate apart from the rules', () => {
  const doc = valid();
  doc.agents.main.instructions = 'a\ud800b';
  const r = independentCheck(doc);
  assert.deepEqual(r.broken, []);
  assert.equal(r.surrogates.length, 1);
});

test('the fuzzer is deterministic for a seed and makes every kind of mutation', () => {
  const a = new Rng(7);
  const b = new Rng(7);
  const kinds = new Set<string>();
  for (let i = 0; i < 300; i++) {
    const x = mutate(a);
    assert.deepEqual(x, mutate(b));
    kinds.add(x.kind.split('/')[0] as string);
  }
  for (const k of [
    'type',
    'length',
    'path',
    'unicode',
    'nesting',
    'number',
    'duplicate-key',
    'proto-name',
    'count',
    'valid',
  ])
    assert.ok(kinds.has(k), k);
});
