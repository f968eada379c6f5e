// Writes the option tables of docs/cli.md from the CLI's option table (packages/cli/src/optionTable.ts):
// every block between `<!-- options: <command> -->` and `<!-- /options -->`. Run after `npm run build`:
//   node scripts/cli-docs.mjs          rewrite docs/cli.md
//   node scripts/cli-docs.mjs --check  exit 1 when docs/cli.md is out of date (test/cli/optionTable.test.ts checks the same)
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const { updateCliDocs } = await import('../packages/cli/dist/help.js');
const path = fileURLToPath(new URL('../docs/cli.md', import.meta.url));
const before = readFileSync(path, 'utf8');
const after = updateCliDocs(before);
if (process.argv.includes('--check')) {
  if (after !== before) {
    process.stderr.write('docs/cli.md is out of date: run `npm run build && node scripts/cli-docs.mjs`\n');
    process.exitCode = 1;
  }
} else if (after !== before) {
  writeFileSync(path, after);
  process.stdout.write('docs/cli.md: option tables rewritten\n');
} else {
  process.stdout.write('docs/cli.md: up to date\n');
}
