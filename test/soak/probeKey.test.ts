/**
 * The fuzzer probes one accepted document per probe key, so the key must change with everything a probe
 * starts (or the soak would skip a distinct start and call it covered) and stay put for what it does not
 * start (or the dedupe would not hold).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonical, probeKey, probedAgent } from '../../soak/probeKey.ts';

interface Def {
  entrypoint: string;
  files: Record<string, string>;
  args?: string[];
  envFrom?: Record<string, string>;
  command?: string;
  network?: boolean;
}
interface Agent {
  harness?: unknown;
  instructions: string;
  mcpServers: Array<{ name: string; project?: string; url?: string }>;
}
interface Doc {
  orchestration: Record<string, unknown>;
  agents: { main?: Agent; analyst: Agent };
  mcpDefinitions: Record<string, Def>;
}

function doc(): Doc {
  return {
    orchestration: { allowMainReconfiguration: true, sandbox: 'auto' },
    agents: {
      main: {
        harness: { type: 'scripted' },
        instructions: 'work',
        mcpServers: [
          { name: 'svc-0', project: 'tools-0' },
          { name: 'remote', url: 'http://127.0.0.1:8000/mcp' },
        ],
      },
      analyst: { instructions: 'read', mcpServers: [{ name: 'svc-1', project: 'tools-1' }] },
    },
    mcpDefinitions: {
      'tools-0': { entrypoint: 'server.cjs', files: { 'server.cjs': 'a' }, args: ['--flag'], envFrom: { K: 'V' } },
      'tools-1': { entrypoint: 'server.cjs', files: { 'server.cjs': 'b' } },
    },
  };
}

test('what a probe does not start leaves the key as it is', () => {
  const base = probeKey(doc());
  const same: Array<[string, (d: Doc) => void]> = [
    ['instructions', (d) => (d.agents.main!.instructions = 'other')],
    ['harness', (d) => (d.agents.main!.harness = { type: 'openai', model: 'm' })],
    ['another agent', (d) => (d.agents.analyst.mcpServers = [])],
    ['a definition main does not use', (d) => (d.mcpDefinitions['tools-1']!.files['server.cjs'] = 'c')],
    ['a new unused definition', (d) => (d.mcpDefinitions['tools-9'] = { entrypoint: 'x', files: { x: 'y' } })],
    [
      'key order',
      (d) => {
        const def = d.mcpDefinitions['tools-0'] as Def;
        d.mcpDefinitions['tools-0'] = {
          envFrom: def.envFrom,
          args: def.args,
          files: def.files,
          entrypoint: 'server.cjs',
        };
      },
    ],
  ];
  for (const [what, change] of same) {
    const d = doc();
    change(d);
    assert.equal(probeKey(d), base, what);
  }
});

test('everything a probe starts changes the key', () => {
  const base = probeKey(doc());
  const differ: Array<[string, (d: Doc) => void]> = [
    ['a file of a used definition', (d) => (d.mcpDefinitions['tools-0']!.files['server.cjs'] = 'z')],
    ['a file added', (d) => (d.mcpDefinitions['tools-0']!.files['lib/x.cjs'] = 'z')],
    ['args', (d) => (d.mcpDefinitions['tools-0']!.args = [])],
    ['envFrom', (d) => (d.mcpDefinitions['tools-0']!.envFrom = { K: 'W' })],
    ['command', (d) => (d.mcpDefinitions['tools-0']!.command = 'node')],
    ['network', (d) => (d.mcpDefinitions['tools-0']!.network = false)],
    ['entrypoint', (d) => (d.mcpDefinitions['tools-0']!.entrypoint = 'other.cjs')],
    ['a service name', (d) => (d.agents.main!.mcpServers[0]!.name = 'svc-x')],
    ['a URL', (d) => (d.agents.main!.mcpServers[1]!.url = 'http://127.0.0.1:8001/mcp')],
    ['the order of services', (d) => d.agents.main!.mcpServers.reverse()],
    ['a service added', (d) => d.agents.main!.mcpServers.push({ name: 'svc-1', project: 'tools-1' })],
    [
      'the definition a service names (same content, other name)',
      (d) => {
        const name: string = 'constructor';
        d.mcpDefinitions[name] = d.mcpDefinitions['tools-0'] as Def;
        d.agents.main!.mcpServers[0]!.project = 'constructor';
      },
    ],
    ['the sandbox policy', (d) => (d.orchestration.sandbox = 'required')],
    ['any orchestration setting', (d) => (d.orchestration.invocationRetries = 2)],
    ['no main: the first agent is probed', (d) => delete d.agents.main],
  ];
  const seen = new Set([base]);
  for (const [what, change] of differ) {
    const d = doc();
    change(d);
    const key = probeKey(d);
    assert.notEqual(key, base, what);
    seen.add(key);
  }
  assert.equal(seen.size, differ.length + 1, 'each change gives its own key');
});

test('prototype names are keys like any other', () => {
  const a = doc();
  Object.defineProperty(a.mcpDefinitions['tools-0']!.envFrom, '__proto__', {
    value: 'HOME',
    enumerable: true,
    writable: true,
    configurable: true,
  });
  assert.notEqual(probeKey(a), probeKey(doc()));
  // From JSON text, as the fuzzer reads documents.
  const text = JSON.stringify(doc()).replace('"K":"V"', '"K":"V","__proto__":"HOME"');
  assert.equal(probeKey(JSON.parse(text)), probeKey(a));
});

test('the probed agent: main, else the first, else none', () => {
  assert.equal(probedAgent(doc()), 'main');
  const d = doc();
  delete d.agents.main;
  assert.equal(probedAgent(d), 'analyst');
  assert.equal(probedAgent({ agents: {} }), undefined);
  assert.equal(probedAgent({ agents: [] }), undefined);
  assert.equal(probedAgent(null), undefined);
  assert.equal(typeof probeKey(null), 'string');
});

test('canonical form sorts object keys and keeps arrays in order', () => {
  assert.deepEqual(canonical({ b: 1, a: [2, { d: 3, c: 4 }] }), [
    'o',
    ['a', ['a', 2, ['o', ['c', 4], ['d', 3]]]],
    ['b', 1],
  ]);
  assert.notDeepEqual(canonical([1, 2]), canonical([2, 1]));
  assert.notDeepEqual(canonical({ a: [] }), canonical({ a: {} }));
});
