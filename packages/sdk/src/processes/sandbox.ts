/**
 * Sandboxed services (SPEC §3.3 `sandbox`, §3.1 `network`): a project service run inside bubblewrap
 * (`bwrap`) with the whole filesystem read-only, the kernel's tunables (`/proc/sys`, `/proc/sysrq-trigger`,
 * `/sys`) read-only, its own UTS, PID and IPC namespaces and `/proc` (the host's processes and their
 * environments are out of reach), a private `/tmp`, the data dir hidden except the service's own directories
 * (its source copy read-only, the services' data dir and its workspace writable, a Git-on worktree's `.git`
 * read-only), no capabilities, and no network when its definition says `"network": false`. Which services run
 * so is decided here ({@link decideSandbox}); the launch wraps the service's command line in
 * {@link sandboxCommand}; {@link sandboxAvailability} checks, with the launch's own flags, that the sandbox
 * really refuses what it must before any service is called sandboxed. Why bubblewrap, and why these flags:
 * docs/decisions/sandbox.md.
 */
import { execFile } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, resolve, sep } from 'node:path';
import { SdkError } from '../errors.js';
import { resolveCommand } from './resolveCommand.js';

/** The host variable that names the bubblewrap executable (a path, or a name looked up on the host's PATH). Default `bwrap`. */
export const BWRAP_ENV = 'SCIENCEEVOLVE_BWRAP';

/** `orchestration.sandbox`: where services run sandboxed. Absent means `auto`. */
export type SandboxPolicy = 'off' | 'auto' | 'required';

// Why a service runs sandboxed or not: one list, the schemas' (the journal and `services probe --json` carry it).
export type { SandboxReason } from '../schemas/states.js';
import type { SandboxReason } from '../schemas/states.js';

/** Whether one project service runs sandboxed, and why. @internal */
export interface SandboxDecision {
  /** True when the service runs inside bubblewrap. */
  sandboxed: boolean;
  /** Why (see {@link SandboxReason}). */
  reason: SandboxReason;
  /** False only when the service runs sandboxed without network (`"network": false`). */
  network: boolean;
  /** What made the sandbox unavailable (reason `unavailable`), or a note such as `network: false` having no effect. */
  detail?: string;
}

/** A project service's sandbox, as the launch needs it. */
export interface ServiceSandbox {
  decision: SandboxDecision;
  /** The bubblewrap executable (absolute); present exactly when `decision.sandboxed`. */
  bwrap?: string;
  /**
   * Directories the sandbox covers with an empty tmpfs (the data dir): the service's own directories inside
   * them are bound again, everything else of them is out of its reach. Default none.
   */
  hide?: readonly string[];
  /** Paths bound read-only at their place: a Git-on worktree's `.git`, the invocation's `node_modules` links. Default none. */
  readOnly?: readonly string[];
}

/** Whether bubblewrap works on this machine: its path, or why not. */
export type SandboxAvailability = { ok: true; bwrap: string } | { ok: false; detail: string };

/** Milliseconds the one probe run of bubblewrap may take before the sandbox counts as unavailable: 10,000. */
export const SANDBOX_PROBE_TIMEOUT_MS = 10_000;

/** Probe results per requested executable and PATH: each is probed once per process. */
const probes = new Map<string, Promise<SandboxAvailability>>();

/**
 * Whether a sandbox is available: bubblewrap (`SCIENCEEVOLVE_BWRAP`, default `bwrap` on the host's PATH)
 * found, and one real run of it with every flag a service launch uses showed a sandbox that holds (see
 * {@link probeSandbox}). Probed once per process and executable; never rejects.
 *
 * @param hostEnv where `SCIENCEEVOLVE_BWRAP` and `PATH` are read (usually `process.env`)
 */
export function sandboxAvailability(
  hostEnv: Readonly<Record<string, string | undefined>>,
): Promise<SandboxAvailability> {
  const requested = hostEnv[BWRAP_ENV] || 'bwrap';
  const key = `${requested}\0${hostEnv.PATH ?? ''}`;
  let probe = probes.get(key);
  if (probe === undefined) {
    probe = probeBwrap(requested, hostEnv.PATH);
    probes.set(key, probe);
  }
  return probe;
}

async function probeBwrap(requested: string, pathValue: string | undefined): Promise<SandboxAvailability> {
  const named = requested === 'bwrap' ? 'bubblewrap (bwrap)' : `${BWRAP_ENV}=${requested}`;
  const bwrap = resolveCommand(requested, pathValue, process.cwd());
  if (bwrap === undefined || requested === 'node') {
    const where = requested.includes('/') ? 'does not exist or is not executable' : 'is not on the PATH';
    return { ok: false, detail: `${named} ${where}` };
  }
  return probeSandbox(bwrap);
}

/**
 * The files the probe opens for writing inside the sandbox (opened and closed at once, never written): each
 * is a host-wide kernel setting a process with global uid 0 could change without any capability
 * (`core_pattern` names a program the kernel runs as root at the next crash; `uevent_helper` one it runs at
 * the next hot-plug event). A missing one counts as refused.
 */
const KERNEL_FILES = [
  '/proc/sys/kernel/core_pattern',
  '/proc/sys/kernel/hostname',
  '/proc/sysrq-trigger',
  '/sys/kernel/uevent_helper',
];

/**
 * What the probe runs inside the sandbox (the SDK's own Node, `-e`): it tries each of `KERNEL_FILES` with
 * `O_WRONLY` (open, close, nothing written), reads its mount table for a writable mount at or under
 * `/proc/sys`, `/proc/sysrq-trigger` and `/sys` (or a writable mount containing one of them), and prints its
 * UTS namespace, all as one JSON line.
 */
const PROBE_SCRIPT = `
const fs = require('fs');
const files = ${JSON.stringify(KERNEL_FILES)};
const out = { writable: [], mounts: [], uts: null };
for (const f of files) {
  try { fs.closeSync(fs.openSync(f, fs.constants.O_WRONLY)); out.writable.push(f); } catch {}
}
const unescape = (p) => p.replace(/\\\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n').filter(Boolean).map((line) => {
  const f = line.split(' ');
  return { at: unescape(f[4]), ro: f[5].split(',').includes('ro') };
});
const under = (p, root) => p === root || p.startsWith(root + '/');
for (const root of ['/proc/sys', '/proc/sysrq-trigger', '/sys']) {
  if (!fs.existsSync(root)) continue;
  let covering;
  for (const m of mounts) if (under(root, m.at) && (covering === undefined || m.at.length >= covering.at.length)) covering = m;
  for (const m of mounts) if ((m === covering || under(m.at, root)) && !m.ro) out.mounts.push(m.at);
}
out.uts = fs.readlinkSync('/proc/self/ns/uts');
process.stdout.write(JSON.stringify(out) + '\\n');
`;

/** Options of {@link probeSandbox}. */
export interface SandboxProbeOptions {
  /**
   * The namespace, mount and capability flags to probe, in place of the ones every launch uses (a seam for
   * tests: a weakened set must be refused). Default: the launch's own flags.
   */
  flags?: readonly string[];
}

/**
 * Runs `bwrap` once with a launch's flags and checks, from inside, what the sandbox allows: each of the
 * kernel's host-wide settings refuses to open for writing, no mount of `/proc/sys`, `/proc/sysrq-trigger` or
 * `/sys` is writable, and the UTS namespace is not the host's. A bubblewrap that leaves any of them open (as
 * bubblewrap 0.8 run as root leaves `/proc/sys` without the explicit cover) is no sandbox: the answer is
 * `ok: false` with what was found. Never rejects; nothing is written.
 *
 * @param bwrap the absolute bubblewrap executable
 */
export function probeSandbox(bwrap: string, options: SandboxProbeOptions = {}): Promise<SandboxAvailability> {
  // The SDK's own Node under /tmp (a runtime unpacked there) would be hidden by the private /tmp: bound as
  // a service's command is (see sandboxCommand).
  const node = resolve(process.execPath);
  const args = [
    ...(options.flags ?? sandboxFlags({ network: false })),
    ...(node.startsWith(`/tmp${sep}`) ? ['--ro-bind-try', node, node] : []),
    '--die-with-parent',
    '--',
    node,
    '-e',
    PROBE_SCRIPT,
  ];
  let hostUts: string | undefined;
  try {
    hostUts = readlinkSync('/proc/self/ns/uts');
  } catch {
    // No namespace links (not Linux's /proc): the sandbox's own UTS namespace cannot be checked.
  }
  return new Promise((resolveProbe) => {
    execFile(
      bwrap,
      args,
      { timeout: SANDBOX_PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', env: {}, maxBuffer: 64 * 1024 },
      (error, stdout, stderr) => {
        const refuse = (said: string) =>
          resolveProbe({ ok: false, detail: `${bwrap} does not run a sandbox that holds here: ${said}` });
        if (error !== null) {
          resolveProbe({
            ok: false,
            detail: `${bwrap} does not run a sandbox here: ${firstLine(stderr) ?? error.message}`,
          });
          return;
        }
        let seen: { writable: string[]; mounts: string[]; uts: string | null };
        try {
          seen = JSON.parse(stdout) as typeof seen;
        } catch {
          refuse(`its probe printed no report (${firstLine(stdout) ?? firstLine(stderr) ?? 'no output'})`);
          return;
        }
        const problems = [
          ...seen.writable.map((f) => `${f} opens for writing`),
          ...seen.mounts.map((m) => `${m} is mounted writable`),
          ...(hostUts === undefined || seen.uts !== hostUts ? [] : ["the host's UTS namespace (hostname) is shared"]),
        ];
        const more = problems.length > 6 ? [`and ${problems.length - 5} more`] : [];
        if (problems.length > 0) refuse([...problems.slice(0, more.length > 0 ? 5 : 6), ...more].join('; '));
        else resolveProbe({ ok: true, bwrap });
      },
    );
  });
}

function firstLine(text: string): string | undefined {
  const line = text.split('\n').find((l) => l.trim() !== '');
  return line === undefined ? undefined : line.trim().slice(0, 300);
}

/** Input of {@link decideSandbox}. */
export interface SandboxQuestion {
  /** `orchestration.sandbox`; `undefined` (absent) is `auto`. */
  policy: SandboxPolicy | undefined;
  /** True when Main proposed the definition (its digest was first stored by an `apply_workflow`). */
  proposedByMain: boolean;
  /** The definition's `network`; `undefined` (absent) is `true`. */
  network: boolean | undefined;
  /** The definition's `sandbox`; `false` is the operator's opt-out under `auto`. `undefined` (absent) is `true`. */
  sandbox?: boolean | undefined;
  /** The service name and definition, for the error of `required` without a sandbox. */
  service: string;
  definition: string;
  /** Asked only when a sandbox is wanted. */
  availability: () => Promise<SandboxAvailability>;
}

/**
 * Decides whether one project service runs sandboxed (SPEC §3.3): `off` never; `auto` every one when a
 * sandbox is available (else unsandboxed, saying why), except an operator's definition that says
 * `"sandbox": false`; `required` every one. A definition Main proposed is never opted out, whatever it says
 * (Main cannot propose the opt-out; this holds even for a stored version that was edited to carry one).
 *
 * @throws SdkError `sandbox_unavailable` when the policy is `required` and no sandbox is available
 */
export async function decideSandbox(question: SandboxQuestion): Promise<ServiceSandbox> {
  const policy = question.policy ?? 'auto';
  const wantsNoNetwork = question.network === false;
  const optsOut = question.sandbox === false;
  const unsandboxed = (reason: SandboxReason, detail?: string): ServiceSandbox => {
    const notes = [detail, wantsNoNetwork ? '"network": false has no effect outside the sandbox' : undefined];
    const note = notes.filter((n) => n !== undefined).join('; ');
    return { decision: { sandboxed: false, reason, network: true, ...(note === '' ? {} : { detail: note }) } };
  };
  if (policy === 'off') return unsandboxed('policy_off');
  if (policy === 'auto' && optsOut && !question.proposedByMain) {
    return unsandboxed('opted_out', 'the definition says "sandbox": false');
  }
  const available = await question.availability();
  if (!available.ok) {
    if (policy === 'required') {
      throw new SdkError(
        'sandbox_unavailable',
        `service "${question.service}" (definition "${question.definition}") cannot start: orchestration.sandbox is "required" and no sandbox is available (${available.detail})`,
        {
          remedy: `install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) or point ${BWRAP_ENV} at a working bwrap; or set orchestration.sandbox to "auto" or "off"`,
          data: { service: question.service, definition: question.definition, detail: available.detail },
        },
      );
    }
    return unsandboxed('unavailable', available.detail);
  }
  const ignored = !optsOut
    ? undefined
    : policy === 'required'
      ? '"sandbox": false has no effect under orchestration.sandbox "required"'
      : '"sandbox": false has no effect on a definition Main proposed';
  return {
    decision: {
      sandboxed: true,
      reason: policy === 'required' ? 'required' : 'auto',
      network: !wantsNoNetwork,
      ...(ignored === undefined ? {} : { detail: ignored }),
    },
    bwrap: available.bwrap,
  };
}

/**
 * The namespace, mount and capability flags of every sandbox, without the mounts of one service. The probe
 * checks exactly these ({@link probeSandbox}). Internal (not in the package's API): exported for its tests.
 */
export function sandboxFlags(options: { network: boolean }): string[] {
  return [
    '--ro-bind',
    '/',
    '/',
    // Explicit, though the read-only `/` already covers it: /sys holds host-wide settings (uevent_helper).
    '--ro-bind',
    '/sys',
    '/sys',
    '--dev',
    '/dev',
    // A PID namespace with its own /proc: the host's processes, and so their environments, are not there.
    '--unshare-pid',
    '--proc',
    '/proc',
    // bubblewrap covers these itself only when its access(W_OK) check of each passes, which as root it does
    // not for /proc/sys: writable, it would let global uid 0 set core_pattern (a program run as root at the
    // next crash). Read-only binds of the host's (the same kernel settings; /proc/sys/net shows the caller's).
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    '--ro-bind-try',
    '/proc/sysrq-trigger',
    '/proc/sysrq-trigger',
    '--ro-bind-try',
    '/proc/irq',
    '/proc/irq',
    '--ro-bind-try',
    '/proc/bus',
    '/proc/bus',
    // Its own hostname: even a writable kernel/hostname would not reach the host's.
    '--unshare-uts',
    '--unshare-ipc',
    ...(options.network ? [] : ['--unshare-net']),
    '--tmpfs',
    '/tmp',
    // As root, bwrap keeps every capability unless told otherwise (a process that could remount / read-write).
    '--cap-drop',
    'ALL',
  ];
}

/** What {@link sandboxCommand} wraps. */
export interface SandboxLaunch {
  /** The absolute bubblewrap executable. */
  bwrap: string;
  /** The service's resolved command (absolute). */
  command: string;
  /** Its argv after the command: the copied entrypoint, then the definition's `args`. */
  args: readonly string[];
  /** The service's cwd (the invocation's workspace). */
  cwd: string;
  /** The service's complete environment: the workspace, data dir and source copy are read from it. */
  env: Readonly<Record<string, string>>;
  /** False: no network namespace of the host's (only a loopback of its own). */
  network: boolean;
  /** Directories covered by an empty tmpfs (the data dir), see {@link ServiceSandbox.hide}. Default none. */
  hide?: readonly string[];
  /**
   * Paths bound read-only at their place when they exist: inside the writable binds (a Git-on worktree's `.git`)
   * or inside the hidden data dir (the invocation's `node_modules` links). Default none.
   */
  readOnly?: readonly string[];
}

/** One mount of a service's sandbox, besides the flags every sandbox has. */
interface Mount {
  flag: '--tmpfs' | '--ro-bind-try' | '--bind' | '--ro-bind';
  path: string;
}

/**
 * The argv that runs a service inside the sandbox: `bwrap <flags> <mounts> --chdir <cwd> -- <command> <args>`.
 * Hidden (an empty tmpfs): `/tmp` and `hide` (the data dir). Writable: the workspace (`SCIENCEEVOLVE_WORKSPACE`
 * and the cwd) and the services' own data dir (`SCIENCEEVOLVE_PROJECT_ROOT`); read-only: the source copy
 * (`SCIENCEEVOLVE_MCP_SOURCE_DIR`), the compile cache (`NODE_COMPILE_CACHE`: read, never poisoned for
 * another service), `readOnly` (a Git-on worktree's `.git`) and everything else. What a hidden directory holds
 * that the service needs to run is bound read-only at its place: `NODE_PATH`, and the command's installation
 * (see {@link commandTrees}: a venv's root, an interpreter's prefix). Mounts are ordered from the outermost
 * path in, so a read-only source copy inside a writable workspace stays read-only, and the data dir inside a
 * bound tree stays hidden.
 */
export function sandboxCommand(launch: SandboxLaunch): { file: string; args: string[] } {
  const mounts: Mount[] = [];
  const add = (flag: Mount['flag'], path: string | undefined) => {
    if (path === undefined || path === '' || !isAbsolute(path)) return;
    const at = realOrResolved(path);
    if (!mounts.some((m) => m.flag === flag && m.path === at)) mounts.push({ flag, path: at });
  };
  const hidden = ['/tmp', ...(launch.hide ?? []).map(realOrResolved)];
  for (const path of launch.hide ?? []) add('--tmpfs', path);
  for (const path of commandTrees(launch.command, hidden)) add('--ro-bind-try', path);
  for (const path of (launch.env.NODE_PATH ?? '').split(delimiter)) {
    if (path !== '' && hidden.some((root) => inside(realOrResolved(path), root))) add('--ro-bind-try', path);
  }
  const cache = launch.env.NODE_COMPILE_CACHE;
  if (cache !== undefined && hidden.some((root) => inside(realOrResolved(cache), root))) add('--ro-bind-try', cache);
  add('--bind', launch.env.SCIENCEEVOLVE_PROJECT_ROOT);
  add('--bind', launch.env.SCIENCEEVOLVE_WORKSPACE);
  add('--bind', launch.cwd);
  add('--ro-bind', launch.env.SCIENCEEVOLVE_MCP_SOURCE_DIR);
  for (const path of launch.readOnly ?? []) add('--ro-bind-try', path);
  const depth = (path: string) => path.split(sep).filter((s) => s !== '').length;
  // Stable: at one depth, the order above (a path mounted twice keeps the later, stricter mount last).
  const ordered = mounts.map((m, i) => ({ ...m, i })).sort((a, b) => depth(a.path) - depth(b.path) || a.i - b.i);
  return {
    file: launch.bwrap,
    args: [
      ...sandboxFlags({ network: launch.network }),
      ...ordered.flatMap((m) => (m.flag === '--tmpfs' ? [m.flag, m.path] : [m.flag, m.path, m.path])),
      '--chdir',
      launch.cwd,
      '--',
      launch.command,
      ...launch.args,
    ],
  };
}

/** `path` with its links resolved when it exists (a bind lands where the path really is), else resolved. */
function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** True when `path` is `root` or lies under it. */
function inside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/**
 * What of a command's installation lies in a hidden directory (`/tmp`, the data dir) and must be bound
 * read-only for it to run: for the command as named, its real path (a venv's `bin/python` is a link to the
 * interpreter) and the interpreter of its `#!` line (and that one's real path), the directory tree it belongs
 * to — the parent of `bin/` (a venv's root holds `pyvenv.cfg` and `lib/`; an interpreter's prefix its standard
 * library), else its own directory. A file whose tree would be a hidden directory itself is bound alone;
 * so is any command inside the data dir, whose tree holds the SDK's own records.
 */
export function commandTrees(command: string, hidden: readonly string[]): string[] {
  const paths = new Set<string>();
  const consider = (path: string) => {
    paths.add(resolve(path));
    paths.add(realOrResolved(path));
  };
  consider(command);
  const interpreter = shebangInterpreter(realOrResolved(command));
  if (interpreter !== undefined) consider(interpreter);
  const trees: string[] = [];
  for (const path of paths) {
    // The innermost hidden directory it lies in (a data dir under /tmp is the data dir's case).
    const root = hidden.filter((r) => inside(path, r) && path !== r).sort((a, b) => b.length - a.length)[0];
    if (root === undefined) continue;
    const dir = dirname(path);
    let tree = basename(dir) === 'bin' ? dirname(dir) : dir;
    // Only under /tmp: a tree in the data dir would be the SDK's records; a tree that is the hidden
    // directory itself would undo the hiding.
    if (root !== '/tmp' || !inside(tree, root) || tree === root) tree = path;
    if (!trees.includes(tree)) trees.push(tree);
  }
  return trees;
}

/** The absolute interpreter of a `#!` line (at most its first 256 bytes), or undefined. */
function shebangInterpreter(path: string): string | undefined {
  let fd: number | undefined;
  try {
    // Non-blocking and checked before reading: a FIFO planted at the command's path must not hang the start.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) return undefined;
    const head = Buffer.alloc(256);
    const n = readSync(fd, head, 0, head.length, 0);
    const text = head.subarray(0, n).toString('latin1');
    if (!text.startsWith('#!')) return undefined;
    const first = text
      .slice(2)
      .split('\n')[0]
      ?.trim()
      .split(/[ \t]+/)[0];
    return first !== undefined && isAbsolute(first) ? first : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
