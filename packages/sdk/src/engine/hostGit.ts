/**
 * The one way the host runs git (security issue, finding 1). A role's worktree is written by its services,
 * and git reads programs to run from the tree it works on: the `.git` file names the repository, whose
 * config names hooks (`core.hooksPath`), an fsmonitor, filter drivers and transports. So every git the host
 * runs on a worktree or clone:
 *
 * - names its git dir and work tree (`--git-dir`, `--work-tree`), as the host created them: git never looks
 *   for a repository in the tree, and a `.git` a service wrote is not read (it is checked, see
 *   {@link checkGitPointer});
 * - runs with hooks, fsmonitor and submodule recursion off, and the `ext::` transport refused, on the
 *   command line (which wins over every config file), and without the system config;
 * - gets a minimal environment (no host secret is there for a program to read), no terminal prompt;
 * - runs the `git` found on the host's `PATH` (absolute entries only), from a directory the host owns.
 *
 * What git still reads from the work tree is data: `.gitignore`, and `.gitattributes`, which may pick a
 * filter driver, but a driver's command comes only from config (the user's own and the repository's, in git
 * dirs the host owns). The host runs no porcelain command that looks into nested repositories (`status`).
 */
import { execFile } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { SdkError } from '../errors.js';

/** A repository as the host names it: its git dir, and the work tree (absent for a command on the git dir alone). */
export interface GitRepo {
  /** The git dir the host created (a linked worktree's is `<common>/worktrees/<id>`). */
  gitDir: string;
  /** The work tree the services see. */
  workTree?: string;
}

/** Options of {@link hostGit}. */
export interface HostGitOptions {
  /**
   * The command reaches a remote (clone, fetch, push): the environment also passes what reaching one may
   * need (SSH agent, askpass, proxies, CA files). Default false.
   */
  network?: boolean;
  /** More `-c name=value` settings, after the safe ones (never one of theirs: they are checked). */
  config?: readonly string[];
}

/**
 * Settings on every git command line. Command-line settings win over every config file, and git hands them
 * on to the git processes it starts itself (`GIT_CONFIG_PARAMETERS`).
 */
export const SAFE_GIT_CONFIG: readonly string[] = [
  // No hook of any kind (pre-commit, post-commit, reference-transaction, pre-push, post-checkout, …).
  'core.hooksPath=/dev/null',
  // No fsmonitor program, and no untracked cache that one would feed.
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.pager=cat',
  // The `ext::` transport runs a command named in the URL.
  'protocol.ext.allow=never',
  // Nothing recurses into a nested repository, whose config a service wrote.
  'submodule.recurse=false',
  'fetch.recurseSubmodules=false',
  'push.recurseSubmodules=no',
];

/** Host variables every git command gets, when set: enough to find git, the user's own config and a temp dir. */
const BASE_ENV = ['PATH', 'HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL', 'TMPDIR'] as const;

/** Host variables a command that reaches a remote also gets: credentials by agent or askpass, proxies, CAs. */
const NETWORK_ENV = [
  'SSH_AUTH_SOCK',
  'GIT_SSH',
  'GIT_SSH_COMMAND',
  'GIT_SSH_VARIANT',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'http_proxy',
  'https_proxy',
  'all_proxy',
  'no_proxy',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'ALL_PROXY',
  'NO_PROXY',
] as const;

/** The environment of one host git command: named host variables only, then git's own switches. */
export function hostGitEnv(
  hostEnv: Readonly<Record<string, string | undefined>>,
  network: boolean,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of network ? [...BASE_ENV, ...NETWORK_ENV] : BASE_ENV) {
    const value = Object.hasOwn(hostEnv, key) ? hostEnv[key] : undefined;
    if (value !== undefined) env[key] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
  };
}

/**
 * Runs `git <safe settings> [--git-dir D --work-tree W] <args>` and resolves with its stdout. `repo` null
 * is for the one command that must find a repository itself: {@link discoverRepo}, on the user's workspace.
 * Rejects with git's stderr as the message (callers wrap it in their coded error).
 */
export async function hostGit(
  repo: GitRepo | null,
  args: readonly string[],
  options: HostGitOptions & { cwd?: string } = {},
): Promise<string> {
  const settings = [...SAFE_GIT_CONFIG, ...(options.config ?? [])];
  for (const extra of options.config ?? []) {
    const name = extra.slice(0, extra.indexOf('=')).toLowerCase();
    if (SAFE_GIT_CONFIG.some((s) => s.slice(0, s.indexOf('=')).toLowerCase() === name)) {
      throw new Error(`hostGit: the setting ${name} is fixed`);
    }
  }
  const argv = [
    ...settings.flatMap((s) => ['-c', s]),
    ...(repo === null ? [] : [`--git-dir=${repo.gitDir}`]),
    ...(repo?.workTree === undefined ? [] : [`--work-tree=${repo.workTree}`]),
    ...args,
  ];
  // A directory the host owns: a relative path never resolves into a service's tree.
  const cwd = options.cwd ?? repo?.gitDir ?? '/';
  const git = gitExecutable();
  return await new Promise((resolve, reject) => {
    execFile(
      git,
      argv,
      {
        cwd,
        env: hostGitEnv(process.env, options.network ?? false),
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout);
        else reject(new Error(`git ${args[0] ?? ''} failed: ${stderr.trim() || error.message}`, { cause: error }));
      },
    );
  });
}

/** Like {@link hostGit}, but resolves false where git exits 1 (a `--quiet` question answered "no"). */
export async function hostGitAsks(repo: GitRepo, args: readonly string[]): Promise<boolean> {
  try {
    await hostGit(repo, args);
    return true;
  } catch (error) {
    if ((error as { cause?: { code?: unknown } }).cause?.code === 1) return false;
    throw error;
  }
}

/** The user's repository at `dir` as git finds it: its git dir, common dir and top directory, absolute. */
export async function discoverRepo(dir: string): Promise<{ gitDir: string; commonDir: string; top: string }> {
  const out = await hostGit(
    null,
    ['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel'],
    {
      cwd: dir,
    },
  );
  const [gitDir, commonDir, top] = out.split('\n');
  if (!gitDir || !commonDir || !top) throw new Error(`git rev-parse answered ${JSON.stringify(out)}`);
  return { gitDir, commonDir, top };
}

let cachedGit: string | undefined;

/** `git` on the host's `PATH`, absolute entries only (an empty or relative entry would be a service's tree). */
function gitExecutable(): string {
  if (cachedGit !== undefined) return cachedGit;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const path = join(dir, 'git');
    try {
      if (statSync(path).isFile()) {
        cachedGit = path;
        return path;
      }
    } catch {
      // not here
    }
  }
  throw new SdkError('command_not_found', 'git is not on the PATH of the host (orchestration.git needs it)', {
    remedy: 'install git, or set orchestration.git to false',
  });
}

/** The longest `.git` file git writes is one line with a path; anything longer is not ours. */
const POINTER_MAX_BYTES = 8192;

/**
 * Checks that `<workTree>/.git` is a regular file (not a directory, not a symlink) holding exactly the line
 * git wrote when the host created the worktree or clone: `gitdir: <gitDir>`. Throws `worktree_tampered`
 * otherwise; the host then runs nothing there.
 */
export function checkGitPointer(workTree: string, gitDir: string, what = 'worktree'): void {
  const dotGit = join(workTree, '.git');
  const expected = `gitdir: ${gitDir}\n`;
  let found: string;
  try {
    // O_NOFOLLOW: a symlink planted at `.git` is refused by the open itself, never followed.
    const fd = openSync(dotGit, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) throw tampered(workTree, what, 'is not a file (a directory or a special file)');
      const buffer = Buffer.alloc(POINTER_MAX_BYTES + 1);
      const length = readSync(fd, buffer, 0, buffer.length, 0);
      found = buffer.subarray(0, length).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if (error instanceof SdkError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw tampered(workTree, what, 'is a symbolic link');
    if (code === 'ENOENT') throw tampered(workTree, what, 'is missing');
    if (code === 'EISDIR') throw tampered(workTree, what, 'is not a file (a directory or a special file)');
    throw tampered(workTree, what, `cannot be read (${code ?? (error as Error).message})`);
  }
  if (found !== expected) throw tampered(workTree, what, `does not name the git dir the host created (${gitDir})`);
}

/** `worktree_tampered`: the git state of a role's worktree or clone is not what the host made. */
export function tampered(workTree: string, what: string, reason: string): SdkError {
  return new SdkError(
    'worktree_tampered',
    `the ${what} ${workTree} was changed by something other than the host: its .git ${reason}; no git command was run there`,
    {
      remedy: `look at what the role's services wrote in ${workTree}, save what you need, then remove the directory (the next invocation of the role creates it again from its branch); and check the role's services`,
      data: { worktree: workTree },
    },
  );
}
