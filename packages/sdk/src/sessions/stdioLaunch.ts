/**
 * Launching a project service's process (SPEC §5.4): its stderr log opened first, its command resolved on
 * the service's own PATH, and the leader spawned detached so it leads its own process group — inside the
 * sandbox when one was decided for it (the one place a service's launch line is wrapped in `bwrap`). Each
 * step fails with an SdkError that names the service, its launch line and its log.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { SdkError } from '../errors.js';
import type { EraMemory } from './eraCache.js';
import type { CollectionPreference, SupervisedGroup } from '../processes/processGroup.js';
import type { ProcessRegistry } from '../processes/processRegistry.js';
import { resolveCommand } from '../processes/resolveCommand.js';
import { type ServiceSandbox, sandboxCommand } from '../processes/sandbox.js';
import { type ServiceIdentity, serviceError } from './serviceDiagnostics.js';
import { StderrLog } from '../processes/stderrLog.js';

/** What to launch and how (the invocation layer fills it from the plan and the copy). */
export interface StdioServiceSpec {
  /** The service name the agent sees. */
  serviceName: string;
  /** Every name the session serves under (aliases of one definition). Default `[serviceName]`. */
  aliases?: readonly string[];
  /** The definition it runs (`mcpDefinitions.<name>`). */
  definitionName: string;
  /** The definition's digest. */
  digest: string;
  /** `node` (the SDK's own Node), an executable on the env's `PATH`, or a path. */
  command: string;
  /** The absolute path of the copied entrypoint. */
  entrypointPath: string;
  /** Arguments after the entrypoint. Default `[]`. */
  args?: readonly string[];
  /** The working directory (the invocation's task workspace). */
  cwd: string;
  /** The complete environment (see `buildServiceEnv`); nothing else of the host's reaches the service. */
  env: Readonly<Record<string, string>>;
  /** Where the capped stderr log goes (`mcp/<name>.stderr.log`). */
  stderrLogPath: string;
  /**
   * Values its stderr tail must never show in an error (the values its `envFrom` maps): each is replaced by
   * `REDACTED` in `data.stderrTail` (see `redactText`). Default none.
   */
  secretValues?: readonly string[];
  /** The invocation's marker; must also be `env.SCIENCEEVOLVE_MARKER` for the sweep to find strays. */
  marker: string;
  /** Told of the marker before the spawn and of the group right after (the supervisor client). */
  registry?: ProcessRegistry;
  /** Milliseconds between SIGTERM and SIGKILL on stop. Default 2,000. */
  graceMs?: number;
  /**
   * Where the protocol era of this digest is remembered (the invocation: `projects/<p>/cache/eras/<digest>.json`).
   * With it, the first start negotiates in place and remembers the verdict, later starts connect in that
   * era without a probe. Without it, every start negotiates in place.
   */
  eraMemory?: EraMemory;
  /**
   * Whether it runs sandboxed, and why (see `decideSandbox`). With `bwrap` set, the leader is bubblewrap and
   * the service runs inside it; without this field, or without `bwrap`, it runs as the host user directly.
   */
  sandbox?: ServiceSandbox;
  /**
   * How its processes are collected: `auto` (default) runs it in a control group of its own where the host
   * supports one, `process-group` never does (see `collectionMechanism`).
   */
  collection?: CollectionPreference | undefined;
  /** `pids.max` of its control group: processes and threads it may have at once. Default 512. */
  pidsMax?: number | undefined;
}

/** Who `spec` is, for its errors: the launch line starts with the command as given. */
export function identityOf(spec: StdioServiceSpec): ServiceIdentity {
  return {
    service: spec.serviceName,
    definition: spec.definitionName,
    digest: spec.digest,
    launch: { command: spec.command, entrypoint: spec.entrypointPath, args: [...(spec.args ?? [])] },
    log: spec.stderrLogPath,
  };
}

/** Opens the capped stderr log, or throws `io_error`. */
export function openStderrLog(identity: ServiceIdentity, capBytes: number | undefined): StderrLog {
  try {
    return new StderrLog(identity.log, capBytes === undefined ? {} : { capBytes });
  } catch (error) {
    throw serviceError('io_error', identity, 'cannot open its stderr log', {
      cause: error,
      remedy: 'Check that the log directory is writable.',
    });
  }
}

/**
 * The absolute command `spec` runs (`node` is the SDK's own Node), written into `identity`'s launch line;
 * or throws `command_not_found`.
 */
export function resolveLaunchCommand(spec: StdioServiceSpec, identity: ServiceIdentity): string {
  const command = resolveCommand(spec.command, spec.env.PATH, spec.cwd);
  if (command === undefined) {
    const where = spec.command.includes('/') ? 'does not exist or is not executable' : "is not on the service's PATH";
    throw serviceError('command_not_found', identity, `cannot start: command "${spec.command}" ${where}`, {
      stderrTail: [],
      extra: { command: spec.command },
    });
  }
  identity.launch.command = command;
  return command;
}

/**
 * Spawns the leader through `group` (the supervised-spawn path: a new process group, tracked and registered)
 * with pipes on stdin, stdout and stderr. Resolves with a child that has a pid, or rejects: `io_error` (no
 * working directory, or the system refused the spawn), `command_not_found`.
 */
export async function spawnLeader(
  group: SupervisedGroup,
  command: string,
  spec: StdioServiceSpec,
  identity: ServiceIdentity,
): Promise<ChildProcess & { pid: number }> {
  const argv = [spec.entrypointPath, ...(spec.args ?? [])];
  const bwrap = spec.sandbox?.decision.sandboxed === true ? spec.sandbox.bwrap : undefined;
  // Sandboxed, bubblewrap leads the group: its PID-namespace init and the service stay in that group (no
  // --new-session), so the group kill and the marker sweep reach them as they reach an unsandboxed service.
  // With a control group, the group's spawn joins it before bubblewrap runs (bwrap's namespaces stay inside).
  const launch =
    bwrap === undefined
      ? { file: command, args: argv }
      : sandboxCommand({
          bwrap,
          command,
          args: argv,
          cwd: spec.cwd,
          env: spec.env,
          network: spec.sandbox?.decision.network !== false,
          ...(spec.sandbox?.hide === undefined ? {} : { hide: spec.sandbox.hide }),
          ...(spec.sandbox?.readOnly === undefined ? {} : { readOnly: spec.sandbox.readOnly }),
        });
  const child = group.spawn(launch.file, launch.args, {
    cwd: spec.cwd,
    env: { ...spec.env },
    stdio: ['pipe', 'pipe', 'pipe'],
    shell: false,
    windowsHide: true,
  });
  const spawnError = new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
  // Later 'error' events (a failed kill) must not become uncaught exceptions.
  child.on('error', () => {});
  if (child.pid !== undefined) return child as ChildProcess & { pid: number };
  const error = await spawnError;
  throw spawnFailure(error, spec, identity);
}

function spawnFailure(error: NodeJS.ErrnoException, spec: StdioServiceSpec, identity: ServiceIdentity): SdkError {
  if (!existsSync(spec.cwd)) {
    return serviceError('io_error', identity, `cannot start: its working directory ${spec.cwd} does not exist`, {
      cause: error,
    });
  }
  if (error.code === 'ENOENT' || error.code === 'EACCES') {
    return serviceError('command_not_found', identity, `cannot start: spawn failed (${error.code})`, { cause: error });
  }
  return serviceError('io_error', identity, `cannot start: spawn failed (${error.code ?? error.message})`, {
    cause: error,
    remedy: 'The system refused to start a process (too many processes or open files?); retry when it has room.',
  });
}
