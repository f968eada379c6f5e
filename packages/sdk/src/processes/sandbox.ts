/**
 * Sandboxed services (SPEC §3.3 `sandbox`, §3.1 `network`): a project service run inside bubblewrap
 * (`bwrap`) with the whole filesystem read-only, the invocation's workspace and the services' own data dir
 * writable, its source copy read-only, a private `/tmp`, its own PID namespace and `/proc` (the host's
 * processes and their environments are out of reach), no capabilities, and no network when its definition
 * says `"network": false`. Which services run so is decided here ({@link decideSandbox}); the launch wraps
 * the service's command line in {@link sandboxCommand}. Why bubblewrap, and why these flags and not others
 * (`--die-with-parent`, `--new-session`): docs/decisions/sandbox.md.
 */
import { execFile } from 'node:child_process';
import { delimiter, isAbsolute, resolve, sep } from 'node:path';
import { SdkError } from '../errors.js';
import { resolveCommand } from './resolveCommand.js';

/** The host variable that names the bubblewrap executable (a path, or a name looked up on the host's PATH). Default `bwrap`. */
export const BWRAP_ENV = 'SCIENCEEVOLVE_BWRAP';

/** `orchestration.sandbox`: where services run sandboxed. Absent means `auto`. */
export type SandboxPolicy = 'off' | 'auto' | 'required';

/**
 * Why a service runs sandboxed or not:
 * - `policy_off`: `orchestration.sandbox` is `off`;
 * - `operator_definition`: `auto`, and the definition is the operator's (first stored by an operator version);
 * - `proposed_by_main`: `auto`, and Main proposed the definition (it was first stored by an `apply_workflow`): sandboxed;
 * - `unavailable`: `auto`, Main proposed it, but no working sandbox is available: runs unsandboxed (`detail` says why);
 * - `required`: `orchestration.sandbox` is `required`: sandboxed.
 */
export type SandboxReason = 'policy_off' | 'operator_definition' | 'proposed_by_main' | 'unavailable' | 'required';

/** Whether one project service runs sandboxed, and why. */
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
}

/** Whether bubblewrap works on this machine: its path, or why not. */
export type SandboxAvailability = { ok: true; bwrap: string } | { ok: false; detail: string };

/** Milliseconds the one probe run of bubblewrap may take before the sandbox counts as unavailable: 10,000. */
export const SANDBOX_PROBE_TIMEOUT_MS = 10_000;

/** Probe results per requested executable and PATH: each is probed once per process. */
const probes = new Map<string, Promise<SandboxAvailability>>();

/**
 * Whether a sandbox is available: bubblewrap (`SCIENCEEVOLVE_BWRAP`, default `bwrap` on the host's PATH)
 * found, and one real run of it with every flag a service launch uses (a new PID, IPC and network namespace,
 * the binds, no capabilities) succeeded. Probed once per process and executable; never rejects.
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
  // The SDK's own Node under /tmp (a runtime unpacked there) would be hidden by the private /tmp: bound as
  // a service's command is (see sandboxCommand).
  const node = resolve(process.execPath);
  const args = [
    ...sandboxFlags({ network: false }),
    ...(node.startsWith(`/tmp${sep}`) ? ['--ro-bind-try', node, node] : []),
    '--die-with-parent',
    '--',
    node,
    '--version',
  ];
  return new Promise((resolveProbe) => {
    execFile(
      bwrap,
      args,
      { timeout: SANDBOX_PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', env: {}, maxBuffer: 64 * 1024 },
      (error, stdout, stderr) => {
        if (error === null && stdout.startsWith('v')) {
          resolveProbe({ ok: true, bwrap });
          return;
        }
        const said = firstLine(stderr) ?? error?.message ?? 'no output';
        resolveProbe({ ok: false, detail: `${bwrap} does not run a sandbox here: ${said}` });
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
  /** The service name and definition, for the error of `required` without a sandbox. */
  service: string;
  definition: string;
  /** Asked only when a sandbox is wanted. */
  availability: () => Promise<SandboxAvailability>;
}

/**
 * Decides whether one project service runs sandboxed (SPEC §3.3): `off` never; `auto` the definitions Main
 * proposed, when a sandbox is available (else unsandboxed, saying why); `required` every one.
 *
 * @throws SdkError `sandbox_unavailable` when the policy is `required` and no sandbox is available
 */
export async function decideSandbox(question: SandboxQuestion): Promise<ServiceSandbox> {
  const policy = question.policy ?? 'auto';
  const wantsNoNetwork = question.network === false;
  const unsandboxed = (reason: SandboxReason, detail?: string): ServiceSandbox => {
    const notes = [detail, wantsNoNetwork ? '"network": false has no effect outside the sandbox' : undefined];
    const note = notes.filter((n) => n !== undefined).join('; ');
    return { decision: { sandboxed: false, reason, network: true, ...(note === '' ? {} : { detail: note }) } };
  };
  if (policy === 'off') return unsandboxed('policy_off');
  if (policy === 'auto' && !question.proposedByMain) return unsandboxed('operator_definition');
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
  return {
    decision: {
      sandboxed: true,
      reason: policy === 'required' ? 'required' : 'proposed_by_main',
      network: !wantsNoNetwork,
    },
    bwrap: available.bwrap,
  };
}

/** The namespace and capability flags of every sandbox, without binds. */
function sandboxFlags(options: { network: boolean }): string[] {
  return [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    // A PID namespace with its own /proc: the host's processes, and so their environments, are not there.
    '--unshare-pid',
    '--proc',
    '/proc',
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
}

/**
 * The argv that runs a service inside the sandbox: `bwrap <flags> <binds> --chdir <cwd> -- <command> <args>`.
 * Writable: the workspace (`SCIENCEEVOLVE_WORKSPACE` and the cwd) and the services' own data dir
 * (`SCIENCEEVOLVE_PROJECT_ROOT`); read-only: the source copy (`SCIENCEEVOLVE_MCP_SOURCE_DIR`) and
 * everything else. Paths that `/tmp`'s private tmpfs would hide (the command, `NODE_PATH`) are bound
 * read-only at their place. Binds are ordered from the outermost path in, so a read-only source copy inside
 * a writable workspace stays read-only.
 */
export function sandboxCommand(launch: SandboxLaunch): { file: string; args: string[] } {
  const binds: { flag: string; path: string }[] = [];
  const add = (flag: string, path: string | undefined) => {
    if (path === undefined || path === '' || !isAbsolute(path)) return;
    const at = resolve(path);
    if (!binds.some((b) => b.flag === flag && b.path === at)) binds.push({ flag, path: at });
  };
  for (const path of [launch.command, ...(launch.env.NODE_PATH ?? '').split(delimiter)]) {
    if (resolve(path).startsWith(`/tmp${sep}`)) add('--ro-bind-try', path);
  }
  add('--bind', launch.env.SCIENCEEVOLVE_PROJECT_ROOT);
  add('--bind', launch.env.SCIENCEEVOLVE_WORKSPACE);
  add('--bind', launch.cwd);
  add('--ro-bind', launch.env.SCIENCEEVOLVE_MCP_SOURCE_DIR);
  const depth = (path: string) => path.split(sep).filter((s) => s !== '').length;
  // Stable: at one depth, the order above (a path bound twice keeps the later, stricter flag last).
  const ordered = binds.map((b, i) => ({ ...b, i })).sort((a, b) => depth(a.path) - depth(b.path) || a.i - b.i);
  return {
    file: launch.bwrap,
    args: [
      ...sandboxFlags({ network: launch.network }),
      ...ordered.flatMap((b) => [b.flag, b.path, b.path]),
      '--chdir',
      launch.cwd,
      '--',
      launch.command,
      ...launch.args,
    ],
  };
}
