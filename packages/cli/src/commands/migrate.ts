/** `scienceevolve migrate --data-dir D`: the explicit upgrade of a data dir's layout. */
import { migrateDataDir } from '@scienceevolve/sdk/store';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson } from '../output.js';

export async function migrateCommand(argv: string[], io: Io): Promise<number> {
  const { values } = parseCommand(command('migrate'), argv);
  const dataDir = required(values['data-dir'], '--data-dir', 'the data dir to upgrade');
  const result = await migrateDataDir(dataDir);
  if (values.json) printJson(io, result);
  else
    io.stdout(
      result.from === result.to
        ? `data dir is at format ${result.to}; nothing to do\n`
        : `data dir upgraded from format ${result.from ?? 'none'} to ${result.to}\n`,
    );
  return EXIT.ok;
}
