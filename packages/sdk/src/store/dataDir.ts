/**
 * The data dir (SPEC §4): the one directory that holds everything the SDK persists, with its layout's
 * format version in `format.json`.
 */
import { mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { SdkError } from '../errors.js';
import { readJsonFile, writeJsonAtomic } from './atomicFile.js';

/** The layout version this SDK writes and reads. */
export const DATA_DIR_FORMAT = 1;

/** The library's default data dir: `~/.scienceevolve/data`. The CLI always requires `--data-dir`. */
export function defaultDataDir(): string {
  return join(homedir(), '.scienceevolve', 'data');
}

interface FormatFile {
  format: number;
  createdBy?: string;
}

/**
 * Opens a data dir for use: creates it (and `format.json`) when new; refuses one of a newer format
 * (`data_dir_too_new`) or an older one (`data_dir_needs_migration`: run `scienceevolve migrate`).
 * Returns the absolute path.
 */
export async function openDataDir(dataDir: string): Promise<string> {
  const root = resolve(dataDir);
  await mkdir(root, { recursive: true });
  const path = join(root, 'format.json');
  const found = await readJsonFile<FormatFile>(path);
  if (found === undefined) {
    await writeJsonAtomic(path, { format: DATA_DIR_FORMAT, createdBy: 'scienceevolve' } satisfies FormatFile);
    return root;
  }
  checkFormat(found, path);
  return root;
}

/** Throws unless `found` is this SDK's format. */
function checkFormat(found: FormatFile, path: string): void {
  if (typeof found.format !== 'number') {
    throw new SdkError('io_error', `${path} has no format number`, {
      remedy: 'this directory is not a ScienceEvolve data dir; pass another --data-dir',
      data: { path },
    });
  }
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
      `the data dir ${path} has the older format ${found.format}; this SDK reads format ${DATA_DIR_FORMAT}`,
      { remedy: 'run `scienceevolve migrate --data-dir <dir>` once', data: { path, format: found.format } },
    );
  }
}

/**
 * Upgrades a data dir to this SDK's format. Format 1 is the first format, so there is nothing to convert
 * yet: it creates `format.json` where it is missing and reports the format found.
 */
export async function migrateDataDir(dataDir: string): Promise<{ from: number | null; to: number }> {
  const root = resolve(dataDir);
  const path = join(root, 'format.json');
  const found = await readJsonFile<FormatFile>(path);
  if (found !== undefined && found.format > DATA_DIR_FORMAT) checkFormat(found, path);
  if (found !== undefined && typeof found.format === 'number' && found.format < DATA_DIR_FORMAT) {
    // Format 1 is the first format: there is nothing to convert, only the record to bring up to date.
    await writeJsonAtomic(path, { format: DATA_DIR_FORMAT, createdBy: 'scienceevolve' } satisfies FormatFile);
  }
  await openDataDir(root);
  return { from: found?.format ?? null, to: DATA_DIR_FORMAT };
}
