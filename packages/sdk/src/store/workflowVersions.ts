/**
 * Accepted workflow versions (SPEC §4): `workflow/versions/<n>.json` for every version and
 * `workflow/accepted.json` naming the one in force, each written atomically and linked
 * by digests into a hash chain (storeChain.ts), checked on every read. Sources are stored before a
 * version names them, and the version file before the accepted pointer, so a crash at any point leaves
 * the old version in force or the new one complete.
 */
import { SdkError } from '../errors.js';
import { type WorkflowDiff, diffWorkflows } from '../workflow/diff.js';
import { parseWorkflow } from '../workflow/validate.js';
import type { Workflow } from '../workflow/workflowSchema.js';
import { writeFileAtomic } from './atomicFile.js';
import { withFileLock } from './fileLock.js';
import type { ProjectPaths } from './projectStore.js';
import { storeSource } from './sourceStore.js';
import {
  type AcceptedBy,
  type AcceptedPointer,
  type WorkflowVersion,
  storedText,
  readChainFrom,
  readHead,
  recordDigest,
  workflowDigest,
} from './storeChain.js';

export type { AcceptedBy, AcceptedPointer, WorkflowVersion } from './storeChain.js';

/** The result of {@link acceptWorkflow}. @internal */
export interface AcceptResult extends WorkflowDiff {
  /** The version in force afterwards. */
  version: number;
  /** The version in force before (0: none). */
  previousVersion: number;
  /** Definition name → digest of the version in force. */
  digests: Record<string, string>;
}

/** Options of {@link acceptWorkflow}. @internal */
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

/**
 * The version in force, or `undefined` when none was accepted yet. Checked as it is read: `accepted.json`
 * and the version file it names against their schemas and the digest `accepted.json` names;
 * `store_tampered` naming the file otherwise.
 * @internal
 */
export async function readAccepted(paths: ProjectPaths): Promise<WorkflowVersion | undefined> {
  return (await readHead(paths))?.record;
}

/**
 * The version in force; throws `unknown_project` when the project has none (it was never loaded, or the
 * project id is mistyped), `store_tampered` when the store was changed outside the SDK.
 * @internal
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

/**
 * One version by number, checked along the hash chain from the version in force down to it;
 * `unknown_version` when there is none (a version above the one in force was never in force).
 * @internal
 */
export async function readVersion(paths: ProjectPaths, version: number): Promise<WorkflowVersion> {
  const head = await readHead(paths);
  if (head === undefined || !Number.isInteger(version) || version < 1 || version > head.record.version) {
    throw new SdkError('unknown_version', `project ${paths.projectId} has no workflow version ${version}`, {
      remedy: 'pass a version from 1 to the accepted one (`workflow show` without --version prints it)',
      data: { project: paths.projectId, version },
    });
  }
  return (await readChainFrom(paths, head, version))[0]!;
}

/**
 * Every version from 1 to the one in force, ascending, with the whole chain checked: each file against
 * its schema and each link. Empty when nothing was accepted yet.
 * @internal
 */
export async function readVersions(paths: ProjectPaths): Promise<WorkflowVersion[]> {
  const head = await readHead(paths);
  if (head === undefined) return [];
  return readChainFrom(paths, head, 1);
}

/** Every version number from 1 to the one in force, ascending, the chain checked ({@link readVersions}). @internal */
export async function listVersions(paths: ProjectPaths): Promise<number[]> {
  return (await readVersions(paths)).map((v) => v.version);
}

/**
 * Accepts a workflow as the project's new version when anything differs from the version in force
 * (otherwise the current version is returned with `changed: false`). Serialized per project by a lock
 * file a dead holder does not keep.
 * @internal
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
      const head = await readHead(paths);
      const current = head?.record;
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
        previous: head?.digest ?? null,
        workflowDigest: workflowDigest(workflow),
        workflow,
      };
      // A version file above the accepted one is a leftover of a crash before the pointer moved: it was
      // never in force, so writing over it is correct.
      await writeFileAtomic(paths.versionPath(record.version), storedText(record));
      const pointer: AcceptedPointer = { version: record.version, digest: recordDigest(record) };
      await writeFileAtomic(paths.acceptedPath, storedText(pointer));
      return { ...diff, version: record.version, previousVersion, digests };
    },
    { timeoutMs: options.lockTimeoutMs },
  );
}
