/** `scienceevolve validate <workflow.json> [--json]`: validates without touching anything. */
import { readFileSync } from 'node:fs';
import { SdkError, validateWorkflowText } from '@scienceevolve/sdk/workflow';
import { parseCommand } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

export async function validateCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('validate'), argv);
  if (positionals.length !== 1)
    throw usageError('validate takes exactly one workflow file', 'scienceevolve validate <workflow.json>');
  const file = positionals[0]!;
  let text: string;
  try {
    // Synchronous: one small file, and `node:fs/promises` would cost the light path a few ms to load.
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new SdkError('io_error', `could not read ${file}: ${(error as Error).message}`, { remedy: 'check the path' });
  }
  const result = validateWorkflowText(text);
  if (values.json) {
    printJson(io, { ok: result.ok, errors: result.errors });
  } else if (result.ok) {
    const w = result.workflow;
    io.stdout(
      `ok: ${file} is a valid workflow (${plural(Object.keys(w.agents).length, 'agent')}, ${plural(Object.keys(w.mcpDefinitions).length, 'project service')})\n`,
    );
  } else {
    io.stdout(`${file}: ${result.errors.length} error${result.errors.length === 1 ? '' : 's'}\n`);
    for (const e of result.errors) io.stdout(`  ${e.code} at ${e.path}: ${e.message}\n`);
  }
  return result.ok ? EXIT.ok : EXIT.failed;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
