/**
 * `network` (SPEC §3.1) joins a definition's digest only when it is not the default, so the digests of
 * definitions stored before the setting existed stay what they were.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseWorkflow } from '../../../packages/sdk/src/index.js';
import { definitionDigest } from '../../../packages/sdk/src/internal.js';

const stored = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../fixtures/store/versionBeforeSandbox.json', import.meta.url)), 'utf8'),
) as { digests: Record<string, string>; workflow: unknown };

test('a version stored before `network` existed: every digest it recorded is still the digest of its definition', () => {
  const workflow = parseWorkflow(stored.workflow);
  assert.deepEqual(Object.keys(stored.digests).sort(), ['py', 'tools']);
  for (const [name, digest] of Object.entries(stored.digests)) {
    const definition = workflow.mcpDefinitions[name]!;
    assert.equal(definition.network, undefined, 'the default is not written into the stored form');
    assert.equal(definitionDigest(definition), digest, name);
    // Writing the default out changes nothing either.
    assert.equal(definitionDigest({ ...definition, network: true }), digest, `${name} with network: true`);
  }
  assert.equal(workflow.orchestration.sandbox, undefined, 'orchestration.sandbox stays absent (auto) when not written');
});

test('network: false is part of the digest, after files, as fast-json-stable-stringify orders it', () => {
  const def = { entrypoint: 'server.cjs', files: { 'server.cjs': 'x' }, network: false };
  assert.equal(
    definitionDigest(def),
    createHash('sha256')
      .update(
        '{"args":[],"command":"node","entrypoint":"server.cjs","envFrom":{},"files":{"server.cjs":"x"},"network":false}',
      )
      .digest('hex'),
  );
  assert.notEqual(definitionDigest(def), definitionDigest({ ...def, network: true }));
});

test('network and sandbox take only their own values', () => {
  const base = () => ({
    agents: { main: { mcpServers: [{ name: 't', project: 't' }] } },
    mcpDefinitions: { t: { entrypoint: 's.cjs', files: { 's.cjs': 'x' } } },
  });
  const cases: [string, (d: ReturnType<typeof base> & Record<string, unknown>) => void, boolean][] = [
    ['network false', (d) => Object.assign(d.mcpDefinitions.t, { network: false }), true],
    ['network "no"', (d) => Object.assign(d.mcpDefinitions.t, { network: 'no' }), false],
    ['sandbox off', (d) => Object.assign(d, { orchestration: { sandbox: 'off' } }), true],
    ['sandbox required', (d) => Object.assign(d, { orchestration: { sandbox: 'required' } }), true],
    ['sandbox "always"', (d) => Object.assign(d, { orchestration: { sandbox: 'always' } }), false],
    ['sandbox true', (d) => Object.assign(d, { orchestration: { sandbox: true } }), false],
  ];
  for (const [title, change, ok] of cases) {
    const doc = base() as ReturnType<typeof base> & Record<string, unknown>;
    change(doc);
    if (ok) parseWorkflow(doc);
    else
      assert.throws(
        () => parseWorkflow(doc),
        (e: { code?: string }) => e.code === 'invalid_workflow',
        title,
      );
  }
});

test('"sandbox": false (the opt-out) is part of the digest, after network; true or absent is not', () => {
  const def = { entrypoint: 'server.cjs', files: { 'server.cjs': 'x' } };
  const head = '{"args":[],"command":"node","entrypoint":"server.cjs","envFrom":{},"files":{"server.cjs":"x"}';
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  assert.equal(definitionDigest({ ...def, sandbox: false }), sha(`${head},"sandbox":false}`));
  assert.equal(
    definitionDigest({ ...def, network: false, sandbox: false }),
    sha(`${head},"network":false,"sandbox":false}`),
  );
  assert.equal(definitionDigest({ ...def, sandbox: true }), definitionDigest(def));
  assert.equal(
    parseWorkflow({ agents: { main: {} }, mcpDefinitions: { d: { ...def, sandbox: false } } }).mcpDefinitions.d
      ?.sandbox,
    false,
  );
  assert.throws(
    () => parseWorkflow({ agents: { main: {} }, mcpDefinitions: { d: { ...def, sandbox: 'no' } } }),
    (e: { code: string; message: string }) => e.code === 'invalid_workflow' && /sandbox/.test(e.message),
  );
});
