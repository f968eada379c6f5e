/** `scienceevolve migrate --data-dir D`: the explicit upgrade of a data dir's layout. */
import { migrateDataDir } from '@scienceevolve/sdk/store';
import { parse, required } from '../args.js';
import { EXIT, type Io, printJson } from '../output.js';

export const MIGRATE_HELP = 'migrate --data-dir D [--json]        upgrade a data dir of an older layout';

export async function migrateCommand(argv: string[], io: Io): Promise<number> {
  const { values } = parse(argv, { 'data-dir': { type: 'string' } });
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
