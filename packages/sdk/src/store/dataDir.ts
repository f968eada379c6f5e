/**
 * The data dir (SPEC §4): the one directory that holds everything the SDK persists, with its layout's
 * format version in `format.json`.
 */
import { constants } from 'node:fs';
import { access, readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { makePrivateDir, pseudoFilesystemOf, tightenDir } from '../fileModes.js';
import { SdkError, toSdkError } from '../errors.js';
import { type RecordSource, parseRecord, recordError } from '../schemas/parseRecord.js';
import { type FormatFile, FormatFileSchema } from '../schemas/store.js';
import { readJsonFile, writeJsonAtomic } from './atomicFile.js';

/**
 * The layout version this SDK writes and reads. Format 2 (this one) keeps the workflow store as a hash
 * chain and gives services `service-data/`; format 1 had neither (`scienceevolve migrate` upgrades it).
 * @internal
 */
export const DATA_DIR_FORMAT = 2;

/** The library's default data dir: `~/.scienceevolve/data`. The CLI always requires `--data-dir`. @internal */
export function defaultDataDir(): string {
  return join(homedir(), '.scienceevolve', 'data');
}

export type { FormatFile } from '../schemas/store.js';

/**
 * A data dir that cannot be used, as `io_error`: its path, what is wrong (from `makeDirs`' or the checks'
 * error) and the fix, which always says how to choose another (`--data-dir`, `SCIENCEEVOLVE_DATA_DIR`).
 */
function dataDirProblem(root: string, error: unknown): SdkError {
  const cause = toSdkError(error, 'io_error');
  const why = cause.message.replace(`could not create the directory ${root}: `, '');
  const own =
    cause.remedy === undefined
      ? ''
      : `${cause.remedy.replace(/^choose a directory/, 'choose a data dir').replace(/, or choose another directory$/, '')}; `;
  return new SdkError('io_error', `the data dir ${root} cannot be used: ${why}`, {
    remedy: `${own}pass another with --data-dir, or set it once with SCIENCEEVOLVE_DATA_DIR (e.g. ~/.scienceevolve/data)`,
    data: { ...cause.data, path: root },
    cause: error,
  });
}

/**
 * Opens a data dir for use: creates it (and `format.json`) when new; refuses one of a newer format
 * (`data_dir_too_new`) or an older one (`data_dir_needs_migration`: run `scienceevolve migrate`).
 * Returns the absolute path.
 * @internal
 */
export async function openDataDir(dataDir: string): Promise<string> {
  const root = resolve(dataDir);
  try {
    await makePrivateDir(root);
    const pseudo = pseudoFilesystemOf(root);
    if (pseudo !== undefined) {
      throw new SdkError('io_error', `${root} is on a pseudo-filesystem (${pseudo}), which cannot hold files`, {
        data: { path: root, filesystem: pseudo },
      });
    }
    await access(root, constants.W_OK | constants.X_OK).catch((error: NodeJS.ErrnoException) => {
      throw new SdkError('io_error', `this user may not write in ${root} (${error.code ?? error.message})`, {
        remedy: `give this user write permission on ${root} (chmod u+rwx, or chown it), or choose a data dir this user owns`,
        data: { path: root, ...(error.code === undefined ? {} : { errno: error.code }) },
        cause: error,
      });
    });
  } catch (error) {
    throw dataDirProblem(root, error);
  }
  // A data dir made before files were private (or by hand) is narrowed to 0700: what is inside is then
  // reachable by this user alone, whatever the modes of older files in it.
  await tightenDir(root);
  const path = join(root, 'format.json');
  const found = await readFormatFile(path);
  if (found === undefined) {
    if (await hasProjects(root)) {
      // Projects written before format.json existed: their stores predate the hash chain.
      throw new SdkError('data_dir_needs_migration', `the data dir ${root} has projects but no format.json`, {
        remedy: `run \`scienceevolve migrate --data-dir ${root}\` once`,
        data: { path },
      });
    }
    await writeJsonAtomic(path, { format: DATA_DIR_FORMAT, createdBy: 'scienceevolve' } satisfies FormatFile);
    return root;
  }
  checkFormat(found, path);
  return root;
}

/**
 * Checks a data dir's `format.json` without creating or changing anything (for readers such as `status`):
 * throws as {@link openDataDir} does for a damaged, newer or older format. A data dir without the file
 * passes (nothing was written there yet). Returns the absolute path.
 * @internal
 */
export async function checkDataDir(dataDir: string): Promise<string> {
  const root = resolve(dataDir);
  const path = join(root, 'format.json');
  const found = await readFormatFile(path);
  if (found !== undefined) checkFormat(found, path);
  return root;
}

/**
 * Reads `format.json`; `undefined` when it does not exist; a file that is not JSON or not a format record
 * (`FormatFileSchema`) is `io_error` naming the file and the field.
 */
export async function readFormatFile(path: string): Promise<FormatFile | undefined> {
  const source: RecordSource = {
    file: path,
    code: 'io_error',
    what: 'a data dir format record {"format": <number>}',
    remedy: `if this is a ScienceEvolve data dir, write {"format": ${DATA_DIR_FORMAT}} into it; otherwise pass another --data-dir`,
  };
  let value: unknown;
  try {
    value = await readJsonFile<unknown>(path);
  } catch (error) {
    throw recordError(source, `it is damaged (${(error as Error).message})`, error);
  }
  return value === undefined ? undefined : parseRecord(FormatFileSchema, value, source);
}

async function hasProjects(root: string): Promise<boolean> {
  try {
    return (await readdir(join(root, 'projects'))).length > 0;
  } catch {
    return false;
  }
}

/** Throws unless `found` is this SDK's format. */
export function checkFormat(found: FormatFile, path: string): void {
  if (found.format > DATA_DIR_FORMAT) {
    throw new SdkError(
      'data_dir_too_new',
      `the data dir ${path} has format ${found.format}; this SDK reads format ${DATA_DIR_FORMAT}`,
      { remedy: 'upgrade ScienceEvolve, or use another --data-dir', data: { path, format: found.format } },
    );
  }
  if (found.format < DATA_DIR_FORMAT) {
    throw new SdkError(
      'data_dir_needs_migration',
      `the data dir ${path} has the older format ${found.format}; this SDK reads format ${DATA_DIR_FORMAT}: run \`scienceevolve migrate --data-dir ${dirname(path)}\` once`,
      {
        remedy: 'run `scienceevolve migrate --data-dir <dir>` once (it writes the hash chain over the stored versions)',
        data: { path, format: found.format },
      },
    );
  }
}
