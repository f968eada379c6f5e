/**
 * Accepted workflow versions (SPEC §4): `workflow/versions/<n>.json` for every version and
 * `workflow/accepted.json` for the one in force, each written atomically. Sources are stored before a
 * version names them, and the version file before the accepted pointer, so a crash at any point leaves
 * the old version in force or the new one complete.
 */
import { readdir } from 'node:fs/promises';
import { SdkError } from '../errors.js';
import { type WorkflowDiff, diffWorkflows } from '../workflow/diff.js';
import { parseWorkflow } from '../workflow/validate.js';
import type { Workflow } from '../workflow/workflowSchema.js';
import { readJsonFile, writeJsonAtomic } from './atomicFile.js';
import { withFileLock } from './fileLock.js';
import type { ProjectPaths } from './projectStore.js';
import { storeSource } from './sourceStore.js';

/** Who accepted a version. */
export type AcceptedBy = 'operator' | 'main';

/** One accepted version as stored. */
export interface WorkflowVersion {
  /** 1, 2, … */
  version: number;
  /** ISO 8601 time of acceptance. */
  acceptedAt: string;
  by: AcceptedBy;
  /** Definition name → digest. */
  digests: Record<string, string>;
  /** What changed against the previous version. */
  changedMcps: string[];
  changedAgents: string[];
  /** The complete workflow, defaults filled. */
  workflow: Workflow;
}

/** The result of {@link acceptWorkflow}. */
export interface AcceptResult extends WorkflowDiff {
  /** The version in force afterwards. */
  version: number;
  /** The version in force before (0: none). */
  previousVersion: number;
  /** Definition name → digest of the version in force. */
  digests: Record<string, string>;
}

/** Options of {@link acceptWorkflow}. */
export interface AcceptOptions {
  by?: AcceptedBy;
  /**
   * Checks the new workflow against the version in force, inside the lock, before anything is written;
   * throws to refuse. `apply_workflow` uses it for its rules about accepted definitions.
   */
  check?: (current: WorkflowVersion | undefined, next: Workflow) => void;
  /** Milliseconds to wait for another writer's lock. Default 30,000. */
  lockTimeoutMs?: number;
}

/** The version in force, or `undefined` when none was accepted yet. */
export async function readAccepted(paths: ProjectPaths): Promise<WorkflowVersion | undefined> {
  return readJsonFile<WorkflowVersion>(paths.acceptedPath);
}

/**
 * The version in force; throws `unknown_project` when the project has none (it was never loaded, or the
 * project id is mistyped).
 */
export async function requireAccepted(paths: ProjectPaths): Promise<WorkflowVersion> {
  const version = await readAccepted(paths);
  if (version === undefined) {
    throw new SdkError('unknown_project', `project ${paths.projectId} has no accepted workflow in ${paths.dataDir}`, {
      remedy:
        'load one with `scienceevolve workflow load <workflow.json> --data-dir D --project P`, or pass --workflow W to `run` (`services` too)',
      data: { project: paths.projectId },
    });
  }
  return version;
}

/** One version by number; `unknown_version` when there is none. */
export async function readVersion(paths: ProjectPaths, version: number): Promise<WorkflowVersion> {
  const found =
    Number.isInteger(version) && version > 0
      ? await readJsonFile<WorkflowVersion>(paths.versionPath(version))
      : undefined;
  if (found === undefined) {
    throw new SdkError('unknown_version', `project ${paths.projectId} has no workflow version ${version}`, {
      remedy: 'pass a version from 1 to the accepted one (`workflow show` without --version prints it)',
      data: { project: paths.projectId, version },
    });
  }
  return found;
}

/** Every version number stored, ascending. Versions above the accepted one (a crash before the pointer moved) are left out. */
export async function listVersions(paths: ProjectPaths): Promise<number[]> {
  const accepted = (await readAccepted(paths))?.version ?? 0;
  let names: string[];
  try {
    names = await readdir(paths.versionsDir);
  } catch {
    return [];
  }
  return names
    .map((n) => /^(\d+)\.json$/.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .filter((n) => n <= accepted)
    .sort((a, b) => a - b);
}

/**
 * Accepts a workflow as the project's new version when anything differs from the version in force
 * (otherwise the current version is returned with `changed: false`). Serialized per project by a lock
 * file a dead holder does not keep.
 */
export async function acceptWorkflow(
  paths: ProjectPaths,
  input: Workflow | unknown,
  options: AcceptOptions = {},
): Promise<AcceptResult> {
  const workflow = parseWorkflow(input);
  return withFileLock(
    paths.workflowLockPath,
    async () => {
      const current = await readAccepted(paths);
      options.check?.(current, workflow);
      const diff = diffWorkflows(current?.workflow, workflow);
      const digests: Record<string, string> = {};
      for (const [name, definition] of Object.entries(workflow.mcpDefinitions)) {
        digests[name] = (await storeSource(paths, name, definition)).digest;
      }
      const previousVersion = current?.version ?? 0;
      if (current !== undefined && !diff.changed) {
        return { ...diff, version: current.version, previousVersion, digests };
      }
      const record: WorkflowVersion = {
        version: previousVersion + 1,
        acceptedAt: new Date().toISOString(),
        by: options.by ?? 'operator',
        digests,
        changedMcps: diff.changedMcps,
        changedAgents: diff.changedAgents,
        workflow,
      };
      // A version file above the accepted one is a leftover of a crash before the pointer moved: it was
      // never in force, so writing over it is correct.
      await writeJsonAtomic(paths.versionPath(record.version), record);
      await writeJsonAtomic(paths.acceptedPath, record);
      return { ...diff, version: record.version, previousVersion, digests };
    },
    { timeoutMs: options.lockTimeoutMs },
  );
}
