/** One project's area of the data dir and the paths in it (SPEC §4). */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { openDataDir } from './dataDir.js';
import { checkProjectId } from './projectId.js';

/** The paths of one project. Pure path arithmetic; {@link openProject} creates the project. */
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
  /** The persistent, immutable source of a definition. */
  sourceDir(digest: string, name: string): string {
    return join(this.mcpDir, digest, `project-${name}`);
  }
  get runsDir(): string {
    return join(this.root, 'runs');
  }
  runDir(runId: string): string {
    return join(this.runsDir, runId);
  }
  /** An invocation's runtimePath. */
  invocationDir(runId: string, invocationId: string): string {
    return join(this.runDir(runId), 'invocations', invocationId);
  }
  /** The project's private SDK data handed to services as `SCIENCEEVOLVE_PROJECT_ROOT`. */
  get privateDir(): string {
    return join(this.root, 'private');
  }
  /** Supervisor logs. */
  get supervisorDir(): string {
    return join(this.root, 'supervisor');
  }
}

/** Opens (creating as needed) a project of a data dir, checking the data dir's format first. */
export async function openProject(dataDir: string, projectId: string): Promise<ProjectPaths> {
  const root = await openDataDir(dataDir);
  const paths = new ProjectPaths(root, checkProjectId(projectId));
  await mkdir(paths.workflowDir, { recursive: true });
  return paths;
}
