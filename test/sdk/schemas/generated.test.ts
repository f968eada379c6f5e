/**
 * What is generated from the zod schemas is up to date: one JSON Schema per document in docs/schemas/ and
 * the `--json` table of docs/cli.md (regenerate: `npm run build && node scripts/generate-schemas.mjs`).
 */
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { CLI_DOCUMENTS } from '../../../packages/sdk/src/schemas/cliDocuments.js';
import {
  allDocuments,
  cliDocumentFile,
  jsonSchemaFiles,
  notation,
  updateShapeTable,
} from '../../../packages/sdk/src/schemas/documents.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const REGENERATE = 'run `npm run build && node scripts/generate-schemas.mjs`';

test('docs/schemas/ holds exactly the generated JSON Schemas, each up to date', async () => {
  const files = jsonSchemaFiles();
  const dir = join(ROOT, 'docs', 'schemas');
  const present = (await readdir(dir)).filter((name) => name.endsWith('.schema.json')).sort();
  assert.deepEqual(present, [...files.keys()].sort(), `the files of docs/schemas/ differ: ${REGENERATE}`);
  for (const [name, text] of files) {
    assert.equal(await readFile(join(dir, name), 'utf8'), text, `docs/schemas/${name} is stale: ${REGENERATE}`);
  }
  // Every CLI document has its file.
  for (const command of Object.keys(CLI_DOCUMENTS)) assert.ok(files.has(`${cliDocumentFile(command)}.schema.json`));
});

test("docs/cli.md's --json table is the one generated from the schemas", async () => {
  const page = await readFile(join(ROOT, 'docs', 'cli.md'), 'utf8');
  assert.equal(updateShapeTable(page), page, `docs/cli.md's --json table is stale: ${REGENERATE}`);
  assert.throws(() => updateShapeTable('# no markers\n'), /no <!-- json-shapes/);
});

test('each JSON Schema compiles and agrees with its zod schema on a valid and an invalid document', () => {
  const ajv = new Ajv({ strict: false });
  const samples: Record<string, [unknown, unknown]> = {
    'cli-validate': [{ ok: true, errors: [] }, { ok: true }],
    'cli-migrate': [
      { from: null, to: 2 },
      { from: 1.5, to: 2 },
    ],
    'accepted-pointer': [
      { version: 1, digest: 'a'.repeat(64) },
      { version: 1, digest: 'x' },
    ],
    'format-file': [{ format: 2, createdBy: 'scienceevolve' }, { format: '2' }],
    'era-record': [
      { format: 2, digest: 'd', era: 'legacy', listed: { tools: 1, resources: 0, resourceTemplates: 0, prompts: 0 } },
      { format: 2, digest: 'd', era: 'modern', listed: { tools: 1, resources: 0, resourceTemplates: 0, prompts: 0 } },
    ],
  };
  for (const [stem, entry] of allDocuments()) {
    const schema = JSON.parse(jsonSchemaFiles().get(`${stem}.schema.json`)!);
    const validate = ajv.compile(schema);
    const sample = samples[stem];
    if (sample === undefined) continue;
    const [valid, invalid] = sample;
    assert.equal(entry.schema.safeParse(valid).success, true, `${stem}: the valid sample parses`);
    assert.equal(validate(valid), true, `${stem}: the JSON Schema accepts the valid sample`);
    assert.equal(entry.schema.safeParse(invalid).success, false, `${stem}: the invalid sample is refused`);
    assert.equal(validate(invalid), false, `${stem}: the JSON Schema refuses the invalid sample`);
  }
});

test('the notation says what the schema says', () => {
  assert.equal(notation(CLI_DOCUMENTS.migrate), '{ from: integer | null, to: integer }');
  assert.equal(notation(CLI_DOCUMENTS.worker), '{ worker: string, stopped: "drained" | "forced" }');
  assert.match(notation(CLI_DOCUMENTS['workflow show']), /workflow: \{ … \}/);
  assert.match(notation(CLI_DOCUMENTS['workflow load']), /digests: \{ \[definition\]: string \}/);
  assert.match(notation(CLI_DOCUMENTS['services probe']), /url\?: string/);
});
