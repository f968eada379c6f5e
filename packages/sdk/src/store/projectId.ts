/** Project ids (SPEC §2): given with `--project`, or derived from the workspace's real path. */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { SdkError } from '../errors.js';

/** A project id: 1–100 of `A-Z a-z 0-9 - _ .`, starting with a letter or digit. */
export const PROJECT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The project id of a workspace: `<basename>-<first 12 hex of sha256(realpath)>`. The basename is
 * lowercased and every character outside `a-z 0-9 - _ .` becomes `-`, so the id is always a safe
 * directory name; the hash keeps two workspaces of the same name apart.
 * @internal
 */
export function projectIdForWorkspace(workspace: string): string {
  let real: string;
  try {
    real = realpathSync(resolve(workspace));
  } catch (error) {
    throw new SdkError('usage', `the workspace ${workspace} does not exist`, {
      remedy: 'create the workspace directory first, or pass --project',
      data: { workspace },
      cause: error,
    });
  }
  const base = (basename(real) || 'root')
    .toLowerCase()
    .replace(/[^a-z0-9._-]/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 60);
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 12);
  return `${base || 'workspace'}-${hash}`;
}

/** Throws `usage` unless `id` is a valid project id. */
export function checkProjectId(id: string): string {
  if (!PROJECT_ID_PATTERN.test(id)) {
    throw new SdkError('usage', `"${id}" is not a valid project id`, {
      remedy: 'use 1–100 characters of letters, digits, ".", "-" and "_", starting with a letter or digit',
      data: { project: id },
    });
  }
  return id;
}

/** The project id from `--project` or, failing that, `--workspace`. @internal */
export function resolveProjectId(options: { project?: string | undefined; workspace?: string | undefined }): string {
  if (options.project !== undefined) return checkProjectId(options.project);
  if (options.workspace !== undefined) return projectIdForWorkspace(options.workspace);
  throw new SdkError('usage', 'no project given', { remedy: 'pass --project ID or --workspace DIR' });
}
