/**
 * Which definitions Main proposed (SPEC §3.3 `sandbox: "auto"`): a definition counts as Main's when its
 * digest was first stored by a version that Main accepted (`by: "main"`, an `apply_workflow`). The
 * versions already record who accepted them, so no other record is kept: the history is read once per
 * process and project, and only the versions added since are read again.
 */
import type { ProjectPaths } from '../store/projectStore.js';
import { readVersion, type WorkflowVersion } from '../store/workflowVersions.js';

interface Authorship {
  /** The highest version read. */
  upTo: number;
  /** Every digest seen in versions 1..upTo. */
  seen: Set<string>;
  /** The digests whose first version was Main's. */
  main: Set<string>;
  /** `acceptedAt` of each version read (index n − 1): a data dir replaced under the same path is noticed. */
  acceptedAt: string[];
}

/** Per project root: versions are append-only, so what was learnt stays true. */
const authorship = new Map<string, Authorship>();

/**
 * The digests Main proposed, up to and including `version`: each digest is attributed to the version that
 * first stored it. Reads each version of the project once per process.
 *
 * @throws SdkError `unknown_version` (or what the store says of a damaged version) when the history cannot be read
 */
export async function mainProposedDigests(paths: ProjectPaths, version: WorkflowVersion): Promise<ReadonlySet<string>> {
  let known = authorship.get(paths.root);
  // An older version than the last read needs nothing new: a digest it holds was first stored by then.
  // One whose time differs from what was read belongs to another history (a data dir made anew at this path).
  const read = known?.acceptedAt[version.version - 1];
  if (known === undefined || (read !== undefined && read !== version.acceptedAt)) {
    known = { upTo: 0, seen: new Set(), main: new Set(), acceptedAt: [] };
    authorship.set(paths.root, known);
  }
  for (let n = known.upTo + 1; n <= version.version; n++) {
    const record = n === version.version ? version : await readVersion(paths, n);
    for (const digest of Object.values(record.digests ?? {})) {
      if (known.seen.has(digest)) continue;
      known.seen.add(digest);
      if (record.by === 'main') known.main.add(digest);
    }
    known.acceptedAt[n - 1] = record.acceptedAt;
    known.upTo = n;
  }
  return known.main;
}
