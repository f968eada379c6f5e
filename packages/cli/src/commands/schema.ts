/** `scienceevolve schema`: the JSON Schema of `workflow.json`, for editors. */
import { writeFile } from 'node:fs/promises';
import { SdkError } from '@scienceevolve/sdk/errors';
import { workflowJsonSchemaText } from '@scienceevolve/sdk/workflow';
import { parseCommand } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

/** Prints the schema (it is itself the JSON document on stdout), or writes it to `--out`. */
export async function schemaCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('schema'), argv);
  if (positionals.length > 0)
    throw usageError('schema takes no positional arguments', 'scienceevolve schema --out workflow.schema.json');
  const text = workflowJsonSchemaText();
  if (values.out === undefined) {
    io.stdout(text);
    return EXIT.ok;
  }
  try {
    await writeFile(values.out, text);
  } catch (error) {
    throw new SdkError('io_error', `could not write ${values.out}: ${(error as Error).message}`, {
      remedy: 'check that the folder of --out exists and is writable',
      data: { out: values.out },
      cause: error,
    });
  }
  if (values.json) printJson(io, { out: values.out, bytes: Buffer.byteLength(text) });
  else io.stdout(`wrote ${values.out}\n`);
  return EXIT.ok;
}
