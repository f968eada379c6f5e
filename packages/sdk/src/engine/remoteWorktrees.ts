/**
 * Git-on across machines (queue workers): a role's worktree is a clone of the run's git remote in the
 * worker's own data dir. Each attempt fetches the role's branch (created from the remote's default branch
 * when the remote has none), works on it, commits, and pushes it back — never forced: a push the remote
 * refuses (another machine pushed first) fails the attempt, naming the branch.
 *
 * The clone's git dir is not in the clone: `git clone --separate-git-dir` puts it at
 * `<project>/clone-gitdirs/<agent>`, out of the tree the services see, and the clone's `.git` is only the
 * pointer to it, checked before every use. Every command goes through {@link hostGit}.
 */
import { existsSync, realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { SdkError, isSdkError } from '../errors.js';
import { makePrivateDir } from '../fileModes.js';
import { redactText, redactUrl, redactUrlsIn } from '../redact.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { type GitRepo, checkGitPointer, hostGit, hostGitAsks } from './hostGit.js';
import { RoleWorktrees, roleBranch, workspaceRepo } from './worktrees.js';

/** The run's git remote as a job names it: the coordinator workspace's `origin`, or the workspace itself. */
export async function runGitRemote(workspace: string): Promise<string> {
  try {
    const url = await hostGit(await workspaceRepo(workspace), ['remote', 'get-url', 'origin']);
    if (url.trim() !== '') return url.trim();
  } catch {
    // no origin: the workspace repository is the remote (a path every worker must reach)
  }
  return workspace;
}

/**
 * A remote as errors may show it: a URL without its user information and query values (an `origin` such as
 * `https://x-access-token:TOKEN@host/repo` carries a credential), a path or `host:repo` as it is.
 */
function shownRemote(remote: string): string {
  return isUrl(remote) ? redactUrl(remote) : remote;
}

/**
 * `text` (git's own message) with every spelling of the remote's URL and its password redacted, and any
 * other URL in it (a redirect, an `insteadOf` rewrite) without its user information.
 */
function shownText(text: string, remote: string): string {
  if (!isUrl(remote)) return redactUrlsIn(text);
  const { username, password } = new URL(remote);
  return redactUrlsIn(
    redactText(text, {
      urls: [remote],
      values: [password, decodeURIComponentSafe(password), username, decodeURIComponentSafe(username)],
    }),
  );
}

function isUrl(remote: string): boolean {
  try {
    return new URL(remote).host !== '';
  } catch {
    return false;
  }
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** After a worker pushed a role's branch to `remote`, brings it into the coordinator's workspace repository. */
export async function fetchRoleBranch(workspace: string, remote: string, branch: string): Promise<void> {
  if (remote === workspace) return;
  const repo = await workspaceRepo(workspace);
  await hostGit(
    repo,
    ['fetch', '--no-recurse-submodules', remote, `+refs/heads/${branch}:refs/remotes/origin/${branch}`],
    {
      network: true,
    },
  );
  const current = await hostGit(repo, ['symbolic-ref', '--quiet', 'HEAD']).catch(() => '');
  // The role's local branch follows the remote unless it is checked out somewhere (then `status` shows it).
  if (current.trim() !== `refs/heads/${branch}`) {
    await hostGit(repo, ['branch', '-f', branch, `origin/${branch}`]).catch(() => {});
  }
}

/** The git dir of a role's clone, out of the clone (the services' cwd). */
export function cloneGitDir(paths: ProjectPaths, agent: string): string {
  return join(paths.root, 'clone-gitdirs', agent);
}

/** True when `dir` is a clone the host made with its git dir at `gitDir` (its `.git` is our pointer). */
function isOurClone(dir: string, gitDir: string): boolean {
  if (!existsSync(gitDir)) return false;
  try {
    checkGitPointer(dir, realpathSync(gitDir), 'clone');
    return true;
  } catch {
    return false;
  }
}

/** The worker's worktrees: one clone of the remote per role, under `<project>/clones/<agent>`. */
export class RemoteRoleWorktrees extends RoleWorktrees {
  protected override readonly kind = 'clone';

  constructor(
    paths: ProjectPaths,
    /** The run's git remote (URL or path). */
    readonly remote: string,
  ) {
    super(paths, remote);
  }

  /** Prepares the role's clone, once per attempt (the base class keeps it: a later call must not reset the work). */
  protected override create(agent: string): Promise<GitRepo> {
    return this.prepare(agent);
  }

  private async prepare(agent: string): Promise<GitRepo> {
    const dir = join(this.paths.root, 'clones', agent);
    const gitDir = cloneGitDir(this.paths, agent);
    const branch = roleBranch(this.paths, agent);
    try {
      // A clone is a cache of the remote: one that is not as the host made it (missing, the earlier layout
      // with `.git/` inside, a `.git` changed by a dead attempt's services) is dropped and made again.
      if (!isOurClone(dir, gitDir)) {
        await rm(dir, { recursive: true, force: true });
        await rm(gitDir, { recursive: true, force: true });
        await makePrivateDir(join(this.paths.root, 'clones'));
        await makePrivateDir(join(this.paths.root, 'clone-gitdirs'));
        await hostGit(
          null,
          ['clone', '--no-recurse-submodules', `--separate-git-dir=${gitDir}`, '--', this.remote, dir],
          {
            network: true,
            // As before: a relative remote is relative to where the worker runs.
            cwd: process.cwd(),
          },
        );
      }
      const repo = { gitDir, workTree: dir };
      await hostGit(repo, ['remote', 'set-url', 'origin', this.remote]);
      await hostGit(repo, ['fetch', '--no-recurse-submodules', '--prune', 'origin'], { network: true });
      const start = (await hostGitAsks(repo, ['show-ref', '--quiet', '--verify', `refs/remotes/origin/${branch}`]))
        ? `origin/${branch}`
        : 'origin/HEAD';
      // A fresh attempt starts from what the remote holds: leftovers of a dead attempt are dropped, nested
      // repositories included (`-ff`).
      await hostGit(repo, ['checkout', '--quiet', '-f', '-B', branch, start]);
      await hostGit(repo, ['clean', '-ffdxq']);
      return repo;
    } catch (error) {
      if (isSdkError(error)) throw error;
      throw new SdkError(
        'io_error',
        `could not fetch branch ${branch} of the run's git remote ${shownRemote(this.remote)}: ${shownText((error as Error).message, this.remote)}`,
        {
          remedy:
            "make the remote reachable from this worker (a path it can read and write, or a URL with its credentials in git's own configuration)",
          data: { remote: shownRemote(this.remote), branch },
        },
      );
    }
  }

  override async commit(agent: string, invocationId: string, task: string): Promise<string | null> {
    const commit = await super.commit(agent, invocationId, task);
    if (commit === null) return null;
    const branch = roleBranch(this.paths, agent);
    const repo = await this.checked(agent);
    try {
      // Never forced: when another machine pushed the branch first, the remote refuses and the attempt fails.
      await hostGit(repo, ['push', '--quiet', '--recurse-submodules=no', 'origin', `${branch}:${branch}`], {
        network: true,
      });
    } catch (error) {
      throw new SdkError(
        'io_error',
        `the remote ${shownRemote(this.remote)} refused branch ${branch} (commit ${commit.slice(0, 12)}): ${shownText((error as Error).message, this.remote)}`,
        {
          remedy: "another push to the role's branch came first: look at the branch, merge by hand, and resume the run",
          data: { remote: shownRemote(this.remote), branch, commit },
        },
      );
    }
    return commit;
  }
}
