/**
 * The JSON Schema of workflow.json: the shipped file is the generated one, and it agrees with the zod
 * schema over the test corpus and its invalid mutations — a document valid for one is valid for the other.
 * The only disagreements allowed are the zod refinements a JSON Schema is not given (docs/workflow-json.md,
 * "What the JSON Schema does not check"): zod refuses, the schema lets through, and every zod issue is
 * one of those refinements.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { WorkflowSchema } from '../../../packages/sdk/src/index.js';
import { workflowJsonSchema } from '../../../packages/sdk/src/internal.js';
import { type Doc, fullWorkflow, minimalWorkflow } from '../../fixtures/workflows/documents.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// ajv-formats is CommonJS: its default export arrives wrapped under tsx.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => void;

/**
 * The zod refinements the JSON Schema does not carry, by message: each is a `superRefine` across keys of
 * one object. A JSON Schema could say some of them (oneOf/not), but zod's conversion drops refinements.
 */
const REFINEMENTS = [
  /give "include" or "exclude", never both/, // tools: include and exclude together
  /give "include" \(the tools to offer\) or "exclude"/, // tools: {}
  /either "project" or "url", never both/, // an mcpServers entry with both
  /give "project" \(a name in mcpDefinitions\) or "url"/, // an mcpServers entry with neither
  /must not carry a user name or password/, // a remote URL with userinfo
  /give "preset" .* or "command"/, // a command harness with neither
];

function validator() {
  // Lengths in code points, as zod 4 counts them (the astral-character mutation below holds it).
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(workflowJsonSchema());
}

const repeat = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i));

/** Changes that make a valid document invalid (or keep it valid), applied to a fresh copy each. */
const MUTATIONS: Array<[string, (d: Doc) => void]> = [
  ['no agents', (d) => delete d.agents],
  ['unknown top key', (d) => (d.extra = 1)],
  ['$schema a string', (d) => (d.$schema = './workflow.schema.json')],
  ['$schema a number', (d) => (d.$schema = 5)],
  ['git a string', (d) => (d.orchestration = { git: 'yes' })],
  ['retries too many', (d) => (d.orchestration = { invocationRetries: 11 })],
  ['retries negative', (d) => (d.orchestration = { invocationRetries: -1 })],
  ['retries fractional', (d) => (d.orchestration = { invocationRetries: 1.5 })],
  ['unknown orchestration key', (d) => (d.orchestration = { nope: true })],
  ['allowed URL not a URL', (d) => (d.orchestration = { allowedRemoteUrls: ['not a url'] })],
  ['allowed URL ftp', (d) => (d.orchestration = { allowedRemoteUrls: ['ftp://example.com/'] })],
  ['allowed URL HTTPS upper case', (d) => (d.orchestration = { allowedRemoteUrls: ['HTTPS://example.com/'] })],
  ['agent name upper case', (d) => (d.agents.Bad = {})],
  ['agent name too long', (d) => (d.agents[`a${'b'.repeat(64)}`] = {})],
  ['agent name constructor', (d) => (d.agents.constructor = {})],
  ['harness type unknown', (d) => (d.agents.main.harness = { type: 'nope' })],
  ['openai without model', (d) => (d.agents.main.harness = { type: 'openai' })],
  ['openai temperature 3', (d) => (d.agents.main.harness = { type: 'openai', model: 'm', temperature: 3 })],
  ['openai responses', (d) => (d.agents.main.harness = { type: 'openai', model: 'm', api: 'responses' })],
  ['openai baseUrl ftp', (d) => (d.agents.main.harness = { type: 'openai', model: 'm', baseUrl: 'ftp://x/v1' })],
  ['timeout 0', (d) => (d.agents.main.harness = { type: 'command', preset: 'claude', timeoutMs: 0 })],
  ['timeout over 2^31-1', (d) => (d.agents.main.harness = { type: 'command', preset: 'claude', timeoutMs: 2 ** 31 })],
  ['command harness neither', (d) => (d.agents.main.harness = { type: 'command' })],
  ['command harness preset unknown', (d) => (d.agents.main.harness = { type: 'command', preset: 'vim' })],
  ['instructions a number', (d) => (d.agents.main.instructions = 5)],
  ['entry neither project nor url', (d) => (d.agents.main.mcpServers = [{ name: 'x' }])],
  ['entry both', (d) => (d.agents.main.mcpServers = [{ name: 'x', project: 'tools', url: 'http://a/mcp' }])],
  ['entry userinfo', (d) => (d.agents.main.mcpServers = [{ name: 'x', url: 'http://u:p@a/mcp' }])],
  ['entry name bad', (d) => (d.agents.main.mcpServers = [{ name: '-x', project: 'tools' }])],
  ['33 entries', (d) => (d.agents.main.mcpServers = repeat(33, (i) => ({ name: `e${i}`, project: 'tools' })))],
  [
    'tools both',
    (d) => (d.agents.main.mcpServers = [{ name: 'x', project: 'tools', tools: { include: ['a'], exclude: ['b'] } }]),
  ],
  ['tools empty object', (d) => (d.agents.main.mcpServers = [{ name: 'x', project: 'tools', tools: {} }])],
  [
    'tools empty include',
    (d) => (d.agents.main.mcpServers = [{ name: 'x', project: 'tools', tools: { include: [] } }]),
  ],
  [
    'tools empty pattern',
    (d) => (d.agents.main.mcpServers = [{ name: 'x', project: 'tools', tools: { exclude: [''] } }]),
  ],
  ['definition without entrypoint', (d) => delete d.mcpDefinitions.tools.entrypoint],
  ['definition without files', (d) => delete d.mcpDefinitions.tools.files],
  ['definition unknown key', (d) => (d.mcpDefinitions.tools.typo = 1)],
  ['definition name bad', (d) => (d.mcpDefinitions._x = d.mcpDefinitions.tools)],
  ['command a shell line', (d) => (d.mcpDefinitions.tools.command = 'node --inspect')],
  ['command empty', (d) => (d.mcpDefinitions.tools.command = '')],
  ['65 args', (d) => (d.mcpDefinitions.tools.args = repeat(65, () => 'a'))],
  ['arg of 4097', (d) => (d.mcpDefinitions.tools.args = ['a'.repeat(4097)])],
  ['arg of 4096', (d) => (d.mcpDefinitions.tools.args = ['a'.repeat(4096)])],
  ['envFrom key bad', (d) => (d.mcpDefinitions.tools.envFrom = { '1A': 'X' })],
  ['envFrom value bad', (d) => (d.mcpDefinitions.tools.envFrom = { A: 'X-Y' })],
  ['file of 500,001', (d) => (d.mcpDefinitions.tools.files['big.txt'] = 'x'.repeat(500_001))],
  // 250,001 astral characters: 500,002 UTF-16 code units but 250,001 code points; 500,001 code points refused.
  ['file of astral characters', (d) => (d.mcpDefinitions.tools.files['big.txt'] = '🙂'.repeat(250_001))],
  ['file of 500,001 astral characters', (d) => (d.mcpDefinitions.tools.files['big.txt'] = '🙂'.repeat(500_001))],
  ['file content a number', (d) => (d.mcpDefinitions.tools.files['n.txt'] = 5)],
];

async function corpus(): Promise<Array<[string, unknown]>> {
  const docs: Array<[string, unknown]> = [];
  const files = [
    'examples/workflows/workspace-tools.json',
    'examples/workflows/alias-and-remote.json',
    'examples/workflows/demo/workflow.json',
    'test/fixtures/workflows/minimal.json',
    'test/fixtures/workflows/severalFaults.json',
  ];
  for (const file of files) docs.push([file, JSON.parse(await readFile(join(ROOT, file), 'utf8'))]);
  const script = JSON.parse(await readFile(join(ROOT, 'examples/workflows/demo/script.json'), 'utf8'));
  docs.push(['the demo proposal', script.agents.main[2].arguments.workflow]);
  docs.push(['fullWorkflow', fullWorkflow()]);
  docs.push(['minimalWorkflow', minimalWorkflow()]);
  for (const [title, mutate] of MUTATIONS) {
    for (const [baseName, base] of [
      ['fullWorkflow', fullWorkflow],
      ['minimalWorkflow', minimalWorkflow],
    ] as const) {
      const doc = base();
      mutate(doc);
      docs.push([`${baseName}: ${title}`, doc]);
    }
  }
  return docs;
}

test('the shipped workflow.schema.json is the generated schema (regenerate: scienceevolve schema --out …)', async () => {
  const shipped = JSON.parse(await readFile(join(ROOT, 'packages/sdk/workflow.schema.json'), 'utf8'));
  assert.deepEqual(
    shipped,
    workflowJsonSchema(),
    'run `npm run build && node packages/cli/bin/scienceevolve.js schema --out packages/sdk/workflow.schema.json && npx biome format --write packages/sdk/workflow.schema.json`',
  );
});

test('the JSON Schema and the zod schema accept the same documents, over the corpus and its mutations', async () => {
  const validate = validator();
  const tally = { bothValid: 0, bothInvalid: 0, refinementOnly: 0 };
  for (const [name, doc] of await corpus()) {
    const zod = WorkflowSchema.safeParse(doc);
    const schemaOk = validate(doc);
    if (zod.success) {
      assert.ok(schemaOk, `${name}: valid for zod, refused by the JSON Schema: ${JSON.stringify(validate.errors)}`);
      tally.bothValid++;
    } else if (!schemaOk) {
      tally.bothInvalid++;
    } else {
      const unexplained = zod.error.issues.filter(
        (i) => i.code !== 'custom' || !REFINEMENTS.some((r) => r.test(i.message)),
      );
      assert.deepEqual(unexplained, [], `${name}: refused by zod, valid for the JSON Schema`);
      tally.refinementOnly++;
    }
  }
  // The corpus reaches every branch: the test can fail either way.
  assert.ok(tally.bothValid >= 10, JSON.stringify(tally));
  assert.ok(tally.bothInvalid >= 60, JSON.stringify(tally));
  assert.ok(tally.refinementOnly >= 6, JSON.stringify(tally));
});
