/** `scienceevolve ui`: the run viewer, a read-only page on 127.0.0.1 with a token in its URL. */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SdkError } from '@scienceevolve/sdk';
import { DATA_DIR_FORMAT } from '@scienceevolve/sdk/internal';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';
import { untilSignal } from '../signals.js';
import { startViewer } from '../ui/viewerServer.js';

export async function uiCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('ui'), argv);
  if (positionals.length > 0) throw usageError('ui takes no positional arguments');
  const dataDir = resolve(
    required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state'),
  );
  const port = values.port;
  if (values.host !== undefined && values.host !== '127.0.0.1') {
    throw usageError(
      `--host takes only 127.0.0.1, not "${values.host}"`,
      'leave --host out; reach it from elsewhere with ssh -L',
    );
  }
  if (!existsSync(dataDir)) {
    // The viewer never creates anything: a mistyped --data-dir is an error, not a new empty data dir.
    throw new SdkError('io_error', `the data dir ${dataDir} does not exist`, {
      remedy: 'pass the --data-dir your runs used',
      data: { dataDir },
    });
  }
  refuseNewerFormat(dataDir);
  const signals = untilSignal();
  try {
    const viewer = await startViewer({ dataDir, ...(port === undefined ? {} : { port }) });
    try {
      if (values.json) printJson(io, { url: viewer.url, port: viewer.port, dataDir });
      else io.stdout(`${viewer.url}\n`);
      io.stderr(
        `viewer of ${dataDir} on 127.0.0.1:${viewer.port}; open the URL above (it holds the token). Ctrl-C stops it.\n`,
      );
      await signals.wait();
    } finally {
      await viewer.close();
    }
  } finally {
    signals.dispose();
  }
  return EXIT.ok;
}

/**
 * Refuses a data dir of a newer layout than this CLI reads (`data_dir_too_new`), checked by reading only:
 * `openDataDir` would create `format.json` where it is missing, and the viewer writes nothing. An older
 * or unmarked data dir is shown as it is.
 */
function refuseNewerFormat(dataDir: string): void {
  let format: unknown;
  try {
    format = (JSON.parse(readFileSync(join(dataDir, 'format.json'), 'utf8')) as { format?: unknown }).format;
  } catch {
    return;
  }
  if (typeof format === 'number' && format > DATA_DIR_FORMAT) {
    throw new SdkError(
      'data_dir_too_new',
      `the data dir ${dataDir} has format ${format}; this viewer reads format ${DATA_DIR_FORMAT}`,
      { remedy: 'upgrade ScienceEvolve, or use another --data-dir', data: { path: dataDir, format } },
    );
  }
}
