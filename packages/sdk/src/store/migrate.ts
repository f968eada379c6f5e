/**
 * `scienceevolve migrate` (SPEC §4): the explicit upgrade of a data dir's layout to {@link DATA_DIR_FORMAT}.
 * Format 1 → 2 writes the hash chain over each project's stored versions (every version file rewritten
 * with its predecessor's digest and its workflow's digest, `accepted.json` as the
 * pointer to the version in force) and moves the services' data from `private/` to `service-data/`.
 * Every step is idempotent, and `format.json` is written last, so an interrupted migrate is run again.
 */
import { readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SdkError } from '../errors.js';
import { pathExists, readJsonFile, writeFileAtomic, writeJsonAtomic } from './atomicFile.js';
import { DATA_DIR_FORMAT, type FormatFile, checkFormat, openDataDir, readFormatFile } from './dataDir.js';
import { withFileLock } from './fileLock.js';
import { PROJECT_ID_PATTERN } from './projectId.js';
import { ProjectPaths } from './projectStore.js';
import {
  type AcceptedPointer,
  type WorkflowVersion,
  storedText,
  checkVersionRecord,
  recordDigest,
  tamperedError,
  workflowDigest,
} from './storeChain.js';

/** The result of {@link migrateDataDir}: the format found (null: no `format.json`) and the format now. @internal */
export interface MigrateResult {
  from: number | null;
  to: number;
}

/**
 * Upgrades a data dir to this SDK's format; a data dir already at it is left as it is. Refuses a newer
 * format (`data_dir_too_new`), and a stored version that does not validate or an `accepted.json` that is
 * not a copy of its version file (`store_tampered`): migrate never blesses an edited store.
 * @internal
 */
export async function migrateDataDir(dataDir: string): Promise<MigrateResult> {
  const root = resolve(dataDir);
  const path = join(root, 'format.json');
  const found = await readFormatFile(path);
  // A damaged or newer format.json is refused as openDataDir refuses it; an older one is what we upgrade.
  if (found !== undefined && !(typeof found.format === 'number' && found.format <= DATA_DIR_FORMAT)) {
    checkFormat(found, path);
  }
  const from = found?.format ?? null;
  if (from === null || from < DATA_DIR_FORMAT) {
    for (const project of await projectIds(root)) await migrateProject(new ProjectPaths(root, project));
    await writeJsonAtomic(path, { format: DATA_DIR_FORMAT, createdBy: 'scienceevolve' } satisfies FormatFile);
  }
  await openDataDir(root);
  return { from, to: DATA_DIR_FORMAT };
}

async function projectIds(root: string): Promise<string[]> {
  try {
    return (await readdir(join(root, 'projects'))).filter((n) => PROJECT_ID_PATTERN.test(n)).sort();
  } catch {
    return [];
  }
}

/** Fields a format-1 version record had. */
const V1_FIELDS = ['version', 'acceptedAt', 'by', 'digests', 'changedMcps', 'changedAgents', 'workflow'] as const;

async function migrateProject(paths: ProjectPaths): Promise<void> {
  await moveServiceData(paths);
  if (!(await pathExists(paths.workflowDir))) return;
  await withFileLock(paths.workflowLockPath, async () => {
    const accepted = await readJsonFile<Record<string, unknown>>(paths.acceptedPath);
    if (accepted === undefined) return;
    const head = accepted.version;
    if (typeof head !== 'number' || !Number.isSafeInteger(head) || head < 1) {
      throw tamperedError(
        paths,
        paths.acceptedPath,
        '"version" is not a positive integer; migrate cannot tell the version in force',
      );
    }
    let previous: string | null = null;
    let last: WorkflowVersion | undefined;
    for (let v = 1; v <= head; v++) {
      const file = paths.versionPath(v);
      const old = await readJsonFile<Record<string, unknown>>(file);
      if (old === undefined || typeof old !== 'object' || old === null) {
        throw tamperedError(paths, file, `the file is missing or not an object; versions 1 to ${head} must exist`);
      }
      const record: Record<string, unknown> = {};
      for (const key of V1_FIELDS) if (Object.hasOwn(old, key)) record[key] = old[key];
      record.previous = previous;
      record.workflowDigest = workflowDigest(old.workflow as WorkflowVersion['workflow']);
      last = checkVersionRecord(paths, file, record, v);
      await writeFileAtomic(file, storedText(last));
      previous = recordDigest(last);
    }
    // A format-1 accepted.json was a copy of its version file; the pointer of format 2 is checked as is.
    if (Object.hasOwn(accepted, 'workflow') && recordDigest(accepted.workflow) !== last?.workflowDigest) {
      throw tamperedError(paths, paths.acceptedPath, `its workflow differs from that of ${paths.versionPath(head)}`);
    }
    if (Object.hasOwn(accepted, 'digest') && !Object.hasOwn(accepted, 'workflow') && accepted.digest !== previous) {
      // A pointer written by an earlier, interrupted migrate names the same digest; anything else was edited.
      throw tamperedError(
        paths,
        paths.acceptedPath,
        `it names digest ${String(accepted.digest)}, version ${head} has ${previous}`,
      );
    }
    // Versions above the one in force were never in force (a crash before the pointer moved).
    for (const name of await readdir(paths.versionsDir)) {
      const n = Number(/^(\d+)\.json$/.exec(name)?.[1]);
      if (Number.isInteger(n) && n > head) await rm(join(paths.versionsDir, name), { force: true });
    }
    const pointer: AcceptedPointer = { version: head, digest: previous as string };
    await writeFileAtomic(paths.acceptedPath, storedText(pointer));
  });
}

/** Format 1 handed services `private/` as SCIENCEEVOLVE_PROJECT_ROOT; format 2 hands them `service-data/`. */
async function moveServiceData(paths: ProjectPaths): Promise<void> {
  const old = join(paths.root, 'private');
  if ((await pathExists(old)) && !(await pathExists(paths.serviceDataDir))) {
    try {
      await rename(old, paths.serviceDataDir);
    } catch (error) {
      throw new SdkError('io_error', `could not move ${old} to ${paths.serviceDataDir}: ${(error as Error).message}`, {
        remedy: 'check that the data dir is writable, then run migrate again',
        data: { path: old },
        cause: error,
      });
    }
  }
}
