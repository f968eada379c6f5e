/**
 * Git-on workspaces (SPEC §10.4): the workspace is a git repository and each role works in its own
 * worktree, on a branch of its own, under the project's data (`<projectRoot>/worktrees/<agent>`). At the
 * end of each invocation the role's changes are committed on its branch with the invocation id.
 */
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { makePrivateDir } from '../fileModes.js';
import { type SimpleGit, simpleGit } from 'simple-git';
import { SdkError } from '../errors.js';
import type { ProjectPaths } from '../store/projectStore.js';

/** The author used when the repository has no `user.name`/`user.email` of its own. */
const FALLBACK_AUTHOR = ['user.name=ScienceEvolve', 'user.email=scienceevolve@localhost'];

/** The branch of a role: `scienceevolve/<projectId>/<agent>`. */
export function roleBranch(paths: ProjectPaths, agent: string): string {
  return `scienceevolve/${paths.projectId}/${agent}`;
}

/** The worktree of a role. */
export function roleWorktree(paths: ProjectPaths, agent: string): string {
  return join(paths.root, 'worktrees', agent);
}

/** Throws `not_a_git_repo` unless `workspace` is the top of a git repository with at least one commit. */
export async function checkGitWorkspace(workspace: string): Promise<void> {
  const problem = (reason: string) =>
    new SdkError('not_a_git_repo', `orchestration.git is true, but the workspace ${workspace} ${reason}`, {
      remedy:
        'make the workspace a git repository with a first commit (`git init && git commit --allow-empty -m init`), or set orchestration.git to false',
      data: { workspace },
    });
  if (!existsSync(workspace)) throw problem('does not exist');
  const git = simpleGit(workspace);
  let top: string;
  try {
    top = (await git.revparse(['--show-toplevel'])).trim();
  } catch {
    throw problem('is not a git repository');
  }
  if (top === '') throw problem('is not a git repository');
  if (realpathSync(top) !== realpathSync(workspace)) throw problem(`is not the top of its git repository (${top})`);
  try {
    await git.revparse(['--verify', 'HEAD']);
  } catch {
    throw problem('is a git repository without any commit');
  }
}

/** The worktrees of one run's roles, created on first use and reused by later invocations and runs. */
export class RoleWorktrees {
  private readonly ready = new Map<string, Promise<string>>();

  constructor(
    readonly paths: ProjectPaths,
    /** The repository (the run's workspace). */
    readonly workspace: string,
  ) {}

  /** The role's worktree, created (with its branch from the workspace's HEAD) when missing. */
  worktree(agent: string): Promise<string> {
    let found = this.ready.get(agent);
    if (found === undefined) {
      found = this.create(agent);
      // A failed creation is tried again by the next invocation.
      found.catch(() => this.ready.delete(agent));
      this.ready.set(agent, found);
    }
    return found;
  }

  private async create(agent: string): Promise<string> {
    const dir = roleWorktree(this.paths, agent);
    const branch = roleBranch(this.paths, agent);
    const repo = simpleGit(this.workspace);
    // `git worktree prune` forgets worktrees whose directory was removed, so the branch can be checked out again.
    await repo.raw(['worktree', 'prune']);
    if (existsSync(join(dir, '.git'))) return dir;
    await makePrivateDir(join(this.paths.root, 'worktrees'));
    const branches = await repo.branchLocal();
    if (branches.all.includes(branch)) await repo.raw(['worktree', 'add', dir, branch]);
    else await repo.raw(['worktree', 'add', '-b', branch, dir, 'HEAD']);
    return dir;
  }

  /**
   * Commits every change of the role's worktree on its branch, the invocation id in the message.
   * Resolves with the commit hash, or null when nothing changed.
   */
  async commit(agent: string, invocationId: string, task: string): Promise<string | null> {
    const dir = await this.worktree(agent);
    const git = await withAuthor(simpleGit(dir));
    await git.add(['-A']);
    const status = await git.status();
    if (status.isClean()) return null;
    const title = task.split('\n')[0]!.slice(0, 60);
    await git.commit(`scienceevolve: ${agent} invocation ${invocationId}\n\n${title}`);
    return (await git.revparse(['HEAD'])).trim();
  }
}

async function withAuthor(git: SimpleGit): Promise<SimpleGit> {
  const email = await git.getConfig('user.email');
  if (email.value) return git;
  return simpleGit({ baseDir: (await git.revparse(['--show-toplevel'])).trim(), config: FALLBACK_AUTHOR });
}
