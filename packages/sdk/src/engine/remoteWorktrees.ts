/**
 * Git-on across machines (queue workers): a role's worktree is a clone of the run's git remote in the
 * worker's own data dir. Each attempt fetches the role's branch (created from the remote's default branch
 * when the remote has none), works on it, commits, and pushes it back — never forced: a push the remote
 * refuses (another machine pushed first) fails the attempt, naming the branch.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makePrivateDir } from '../fileModes.js';
import { simpleGit } from 'simple-git';
import { SdkError } from '../errors.js';
import { redactText, redactUrl, redactUrlsIn } from '../redact.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { RoleWorktrees, roleBranch } from './worktrees.js';

/** The run's git remote as a job names it: the coordinator workspace's `origin`, or the workspace itself. */
export async function runGitRemote(workspace: string): Promise<string> {
  try {
    const url = (await simpleGit(workspace).remote(['get-url', 'origin'])) ?? '';
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
  await simpleGit(workspace).raw(['fetch', remote, `+refs/heads/${branch}:refs/remotes/origin/${branch}`]);
  const local = await simpleGit(workspace).branchLocal();
  // The role's local branch follows the remote unless it is checked out somewhere (then `status` shows it).
  if (!local.all.includes(branch) || local.current !== branch) {
    await simpleGit(workspace)
      .raw(['branch', '-f', branch, `origin/${branch}`])
      .catch(() => {});
  }
}

/** The worker's worktrees: one clone of the remote per role, under `<project>/clones/<agent>`. */
export class RemoteRoleWorktrees extends RoleWorktrees {
  /** Roles whose clone this attempt already prepared (a later call must not reset the work). */
  private readonly prepared = new Map<string, Promise<string>>();

  constructor(
    paths: ProjectPaths,
    /** The run's git remote (URL or path). */
    readonly remote: string,
  ) {
    super(paths, remote);
  }

  override worktree(agent: string): Promise<string> {
    let found = this.prepared.get(agent);
    if (found === undefined) {
      found = this.prepare(agent);
      found.catch(() => this.prepared.delete(agent));
      this.prepared.set(agent, found);
    }
    return found;
  }

  private async prepare(agent: string): Promise<string> {
    const dir = join(this.paths.root, 'clones', agent);
    const branch = roleBranch(this.paths, agent);
    try {
      if (!existsSync(join(dir, '.git'))) {
        await rm(dir, { recursive: true, force: true });
        await makePrivateDir(join(this.paths.root, 'clones'));
        await simpleGit().clone(this.remote, dir);
      }
      const git = simpleGit(dir);
      await git.raw(['remote', 'set-url', 'origin', this.remote]);
      await git.fetch(['origin', '--prune']);
      const remoteBranches = await git.branch(['-r']);
      const start = remoteBranches.all.includes(`origin/${branch}`) ? `origin/${branch}` : 'origin/HEAD';
      // A fresh attempt starts from what the remote holds: leftovers of a dead attempt are dropped.
      await git.raw(['checkout', '-f', '-B', branch, start]);
      await git.raw(['clean', '-fdx']);
      return dir;
    } catch (error) {
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
    const dir = join(this.paths.root, 'clones', agent);
    try {
      // Never forced: when another machine pushed the branch first, the remote refuses and the attempt fails.
      await simpleGit(dir).push('origin', `${branch}:${branch}`);
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
