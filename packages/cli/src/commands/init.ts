/** `scienceevolve init`: a small working workflow folder to start from. */
import { INIT_HARNESSES, type InitHarness, initFolder } from '@scienceevolve/sdk/workflow';
import { parseCommand } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

export async function initCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('init'), argv);
  if (positionals.length > 1)
    throw usageError('init takes at most one folder', 'scienceevolve init my-flow --harness openai');
  const harness = values.harness ?? 'scripted';
  if (!(INIT_HARNESSES as readonly string[]).includes(harness)) {
    throw usageError(`--harness takes one of ${INIT_HARNESSES.join(', ')}, not "${harness}"`);
  }
  const dir = positionals[0] ?? '.';
  const result = await initFolder({ dir, harness: harness as InitHarness });
  if (values.json) {
    printJson(io, { dir: result.dir, harness: result.harness, files: result.files, env: result.env });
  } else {
    io.stdout(`wrote a workflow folder in ${result.dir} (harness ${result.harness}):\n`);
    for (const file of result.files) io.stdout(`  ${file}\n`);
    if (result.env.length > 0) io.stdout(`set ${result.env.join(', ')} before \`run\`\n`);
    io.stdout(`next: read ${dir === '.' ? '' : `${dir}/`}README.md, then \`scienceevolve workflow pack ${dir}\`\n`);
  }
  return EXIT.ok;
}
