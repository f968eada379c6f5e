// Writes what is generated from the zod schemas of packages/sdk/src/schemas/: one JSON Schema per document
// in docs/schemas/, and the `--json` table of docs/cli.md (between its json-shapes markers). Run after
// `npm run build`:
//   node scripts/generate-schemas.mjs          rewrite them
//   node scripts/generate-schemas.mjs --check  exit 1 when one is out of date (test/sdk/schemas/generated.test.ts checks the same)
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const { jsonSchemaFiles, updateShapeTable } = await import('../packages/sdk/dist/schemas/documents.js');
const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
const stale = [];

const dir = join(root, 'docs', 'schemas');
mkdirSync(dir, { recursive: true });
const files = jsonSchemaFiles();
for (const [name, text] of files) {
  const path = join(dir, name);
  let before;
  try {
    before = readFileSync(path, 'utf8');
  } catch {
    before = undefined;
  }
  if (before === text) continue;
  stale.push(`docs/schemas/${name}`);
  if (!check) writeFileSync(path, text);
}
for (const name of readdirSync(dir)) {
  if (name.endsWith('.schema.json') && !files.has(name)) {
    stale.push(`docs/schemas/${name} (no such document)`);
    if (!check) rmSync(join(dir, name));
  }
}

const page = join(root, 'docs', 'cli.md');
const before = readFileSync(page, 'utf8');
const after = updateShapeTable(before);
if (after !== before) {
  stale.push('docs/cli.md (the --json table)');
  if (!check) writeFileSync(page, after);
}

if (check && stale.length > 0) {
  process.stderr.write(
    `out of date: ${stale.join(', ')}; run \`npm run build && node scripts/generate-schemas.mjs\`\n`,
  );
  process.exitCode = 1;
} else {
  process.stdout.write(stale.length === 0 ? 'generated files: up to date\n' : `rewritten: ${stale.join(', ')}\n`);
}
