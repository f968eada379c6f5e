/**
 * Git-on workspaces (SPEC §10.4): the workspace is a git repository and each role works in its own
 * worktree, on a branch of its own, under the project's data (`<projectRoot>/worktrees/<agent>`). At the
 * end of each invocation the role's changes are committed on its branch with the invocation id.
 *
 * Services write the worktree, its `.git` file included, so the host never lets git find the repository
 * there: every command goes through {@link hostGit} with the worktree's own git dir
 * (`<common git dir>/worktrees/<id>`, found from the repository's side), after {@link checkGitPointer}.
 */
import { existsSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { makePrivateDir } from '../fileModes.js';
import { SdkError } from '../errors.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { type GitRepo, checkGitPointer, discoverRepo, hostGit, hostGitAsks, tampered } from './hostGit.js';

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

/** The user's repository (the workspace) as the host names it. */
export interface WorkspaceRepo extends Required<GitRepo> {
  /** The common git dir (where `worktrees/<id>` live); the git dir unless the workspace is a linked worktree. */
  commonDir: string;
}

/** The workspace's repository: git finds it there once (the workspace is the user's, not a service's). */
export async function workspaceRepo(workspace: string): Promise<WorkspaceRepo> {
  const found = await discoverRepo(workspace);
  return { gitDir: found.gitDir, workTree: found.top, commonDir: found.commonDir };
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
  let repo: WorkspaceRepo;
  try {
    repo = await workspaceRepo(workspace);
  } catch {
    throw problem('is not a git repository');
  }
  if (realpathSync(repo.workTree) !== realpathSync(workspace)) {
    throw problem(`is not the top of its git repository (${repo.workTree})`);
  }
  if (!(await hostGitAsks(repo, ['rev-parse', '--quiet', '--verify', 'HEAD^{commit}']))) {
    throw problem('is a git repository without any commit');
  }
}

/**
 * The git dir of the linked worktree at `dir`, found from the repository's side: the entry of
 * `<commonDir>/worktrees/` whose `gitdir` file names `<dir>/.git` (git names entries after the directory,
 * with a number when taken: two projects' `main` roles are `main` and `main1`). Undefined when none does.
 */
function linkedGitDir(commonDir: string, dir: string): string | undefined {
  const admin = join(realpathSync(commonDir), 'worktrees');
  const want = join(realpathSync(dir), '.git');
  let entries: string[];
  try {
    entries = readdirSync(admin);
  } catch {
    return undefined;
  }
  for (const entry of entries) {
    try {
      if (readFileSync(join(admin, entry, 'gitdir'), 'utf8').trim() === want) return join(admin, entry);
    } catch {
      // not a worktree entry
    }
  }
  return undefined;
}

/** The worktrees of one run's roles, created on first use and reused by later invocations and runs. */
export class RoleWorktrees {
  private readonly ready = new Map<string, Promise<GitRepo>>();
  private repo: Promise<WorkspaceRepo> | undefined;

  constructor(
    readonly paths: ProjectPaths,
    /** The repository (the run's workspace). */
    readonly workspace: string,
  ) {}

  /**
   * The role's worktree, created (with its branch from the workspace's HEAD) when missing. Its `.git` is
   * checked at every call: `worktree_tampered` when it is not the pointer git wrote.
   */
  async worktree(agent: string): Promise<string> {
    const repo = await this.checked(agent);
    return repo.workTree!;
  }

  /** What {@link RoleWorktrees.create} makes, as `worktree_tampered` messages name it. */
  protected readonly kind: string = 'worktree';

  /**
   * The role's worktree and its git dir, made once ({@link RoleWorktrees.create}) and with the `.git` file
   * checked at every call: what every git command on the worktree runs with.
   */
  protected async checked(agent: string): Promise<GitRepo> {
    let found = this.ready.get(agent);
    if (found === undefined) {
      found = this.create(agent);
      // A failed creation is tried again by the next invocation.
      found.catch(() => this.ready.delete(agent));
      this.ready.set(agent, found);
    }
    const repo = await found;
    checkGitPointer(repo.workTree!, realpathSync(repo.gitDir), this.kind);
    return repo;
  }

  private workspaceRepo(): Promise<WorkspaceRepo> {
    if (this.repo === undefined) {
      this.repo = workspaceRepo(this.workspace);
      this.repo.catch(() => {
        this.repo = undefined;
      });
    }
    return this.repo;
  }

  /** Makes the role's worktree (with its branch from the workspace's HEAD). A subclass (queue clones) has its own. */
  protected async create(agent: string): Promise<GitRepo> {
    const dir = roleWorktree(this.paths, agent);
    const branch = roleBranch(this.paths, agent);
    const repo = await this.workspaceRepo();
    // `git worktree prune` forgets worktrees whose directory was removed, so the branch can be checked out again.
    await hostGit(repo, ['worktree', 'prune']);
    if (existsSync(dir)) {
      const gitDir = linkedGitDir(repo.commonDir, dir);
      // A directory the repository does not know as its worktree: not the host's to reuse, nor to remove.
      if (gitDir === undefined) throw tampered(dir, 'worktree', 'is not a worktree of the repository');
      return { gitDir, workTree: dir };
    }
    await makePrivateDir(join(this.paths.root, 'worktrees'));
    if (await hostGitAsks(repo, ['show-ref', '--quiet', '--verify', `refs/heads/${branch}`])) {
      await hostGit(repo, ['worktree', 'add', dir, branch]);
    } else {
      await hostGit(repo, ['worktree', 'add', '-b', branch, dir, 'HEAD']);
    }
    const gitDir = linkedGitDir(repo.commonDir, dir);
    if (gitDir === undefined) throw tampered(dir, 'worktree', 'was not made by `git worktree add`');
    return { gitDir, workTree: dir };
  }

  /**
   * Commits every change of the role's worktree on its branch, the invocation id in the message.
   * Resolves with the commit hash, or null when nothing changed.
   */
  async commit(agent: string, invocationId: string, task: string): Promise<string | null> {
    return commitAll(
      await this.checked(agent),
      `scienceevolve: ${agent} invocation ${invocationId}\n\n${task.split('\n')[0]!.slice(0, 60)}`,
    );
  }
}

/**
 * `git add -A` and a commit, hooks off (see {@link hostGit}). Whether anything changed is asked of the
 * index (`diff-index --cached`), never with `status`: `status` runs `git status` inside every nested
 * repository the index records, with that repository's own config. Resolves with the commit, or null.
 */
export async function commitAll(repo: GitRepo, message: string): Promise<string | null> {
  await hostGit(repo, ['add', '-A']);
  if (await hostGitAsks(repo, ['diff-index', '--cached', '--quiet', 'HEAD', '--'])) return null;
  const identity = (await hostGitAsks(repo, ['config', '--get', 'user.email'])) ? [] : FALLBACK_AUTHOR;
  await hostGit(repo, ['commit', '--quiet', '--no-verify', '-m', message], { config: identity });
  return (await hostGit(repo, ['rev-parse', 'HEAD'])).trim();
}
