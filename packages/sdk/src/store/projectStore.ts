import { isAbsolute, join, relative, resolve } from 'node:path';
import { makePrivateDir } from '../fileModes.js';
import { SdkError } from '../errors.js';
import { isPathId } from '../schemas/pathId.js';
import { NAME_PATTERN } from '../workflow/limits.js';
import { openDataDir } from './dataDir.js';
import { checkProjectId } from './projectId.js';

const DIGEST = /^[0-9a-f]{64}$/;

function unsafe(message: string, data: Record<string, unknown>): SdkError {
  return new SdkError('unsafe_path', message, {
    remedy: 'a stored name or id was edited outside ScienceEvolve; run `scienceevolve workflow verify` for the project',
    data,
  });
}

/** The paths of one project. Pure path arithmetic; {@link openProject} creates the project. @internal */
export class ProjectPaths {
  /** `<dataDir>/projects/<projectId>` */
  readonly root: string;

  constructor(
    /** The absolute data dir. */
    readonly dataDir: string,
    readonly projectId: string,
  ) {
    this.root = join(dataDir, 'projects', projectId);
  }

  get workflowDir(): string {
    return join(this.root, 'workflow');
  }
  /** The accepted workflow. */
  get acceptedPath(): string {
    return join(this.workflowDir, 'accepted.json');
  }
  get versionsDir(): string {
    return join(this.workflowDir, 'versions');
  }
  versionPath(version: number): string {
    return join(this.versionsDir, `${version}.json`);
  }
  /** The lock that serializes accepting versions. */
  get workflowLockPath(): string {
    return join(this.workflowDir, '.lock');
  }
  get mcpDir(): string {
    return join(this.root, 'mcp');
  }
  /**
   * The persistent, immutable source of a definition. `digest` must be a sha256 hex digest and `name` a
   * definition name (§3.4); anything else (a stored name edited to `../../x`) is `unsafe_path`, never a path.
   */
  sourceDir(digest: string, name: string): string {
    if (!DIGEST.test(digest)) throw unsafe(`"${digest}" is not a sha256 hex digest`, { digest });
    if (!NAME_PATTERN.test(name)) throw unsafe(`"${name}" is not a definition name`, { definition: name });
    return this.inside(join(this.mcpDir, digest, `project-${name}`));
  }
  get runsDir(): string {
    return join(this.root, 'runs');
  }
  /** A run's directory; a run id that is not one directory name is `unsafe_path`. */
  runDir(runId: string): string {
    if (!isPathId(runId)) throw unsafe(`"${runId}" is not a run id`, { run: runId });
    return this.inside(join(this.runsDir, runId));
  }
  /** An invocation's runtimePath; an id that is not one directory name is `unsafe_path`. */
  invocationDir(runId: string, invocationId: string): string {
    if (!isPathId(invocationId))
      throw unsafe(`"${invocationId}" is not an invocation id`, { invocation: invocationId });
    return this.inside(join(this.runDir(runId), 'invocations', invocationId));
  }
  /** Asserts that `path` lies inside the project's directory (and so inside the data dir). */
  inside(path: string): string {
    const rel = relative(this.root, resolve(path));
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
      throw unsafe(`${path} is outside the project directory ${this.root}`, { path });
    }
    return path;
  }
  /**
   * `service-data/`: the directory for the services' own data, handed to them as
   * `SCIENCEEVOLVE_PROJECT_ROOT`. It holds none of the SDK's control files.
   */
  get serviceDataDir(): string {
    return join(this.root, 'service-data');
  }
  /** Supervisor logs. */
  get supervisorDir(): string {
    return join(this.root, 'supervisor');
  }
}

/** Opens (creating as needed) a project of a data dir, checking the data dir's format first. @internal */
export async function openProject(dataDir: string, projectId: string): Promise<ProjectPaths> {
  const root = await openDataDir(dataDir);
  const paths = new ProjectPaths(root, checkProjectId(projectId));
  await makePrivateDir(paths.workflowDir);
  return paths;
}
