/**
 * Launching a project service's process (SPEC §5.4): its stderr log opened first, its command resolved on
 * the service's own PATH, and the leader spawned detached so it leads its own process group — inside the
 * sandbox when one was decided for it (the one place a service's launch line is wrapped in `bwrap`). Each
 * step fails with an SdkError that names the service, its launch line and its log.
 *
 * Nothing here loads the MCP client: the invocation launches a project service's leader with
 * {@link launchLeader} before it loads the session code, so the service boots while the host loads the
 * client (docs/decisions/probe-start.md).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { SdkError } from '../errors.js';
import type { EraMemory } from './eraCache.js';
import { type CollectionPreference, SupervisedGroup } from '../processes/processGroup.js';
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

/** How a leader ended: its exit code, or the signal that ended it. */
export type ExitStatus = { code: number | null; signal: NodeJS.Signals | null };

/**
 * One service leader on its way up: the supervised group (there at once, so a start that fails at any
 * point collects it), the stderr log, and the spawn. The supervised-spawn order holds as in every start:
 * the marker is announced to the registry and acknowledged before the spawn, the group registered right
 * after it.
 */
export interface LeaderLaunch {
  /** Who the service is, for its errors (the launch line's command resolved once the launch got that far). */
  readonly identity: ServiceIdentity;
  /** The supervised group the leader is (or would have been) spawned in. */
  readonly group: SupervisedGroup;
  /** `Date.now()` when the launch began: a start's `startMs` counts from here. */
  readonly startedAt: number;
  /** The capped stderr log, once opened (undefined when opening it failed). */
  log(): StderrLog | undefined;
  /**
   * Resolves with the leader (stderr attached to the log) once it runs; rejects with an SdkError, or the
   * signal's reason when the signal aborted first. Nothing runs after a rejection: the group then refuses
   * a spawn once it is collected.
   */
  readonly leader: Promise<ChildProcess & { pid: number }>;
  /** Calls `listener` once the leader exited (at once when it already has). */
  onExit(listener: (status: ExitStatus) => void): void;
}

/** Options of {@link launchLeader}. */
export interface LaunchLeaderOptions {
  /** The identity errors name (default `identityOf(spec)`); its launch command is resolved in place. */
  identity?: ServiceIdentity;
  /** Bytes of stderr kept in the log file. Default 1 MiB. */
  stderrCapBytes?: number | undefined;
  /** Milliseconds to wait after SIGKILL for the processes to go. Default 5,000. */
  killWaitMs?: number | undefined;
  /** Aborts the launch before the spawn (the start's budget, or the invocation's cancel). */
  signal: AbortSignal;
}

/**
 * Starts launching `spec`'s leader: opens its stderr log, resolves its command, announces the marker (and
 * the control group) to the registry, waits for the acknowledgement, and spawns. Returns at once; the
 * outcome is {@link LeaderLaunch.leader}. Never throws: every failure is the leader's rejection.
 */
export function launchLeader(spec: StdioServiceSpec, options: LaunchLeaderOptions): LeaderLaunch {
  const identity = options.identity ?? identityOf(spec);
  const group = new SupervisedGroup({
    marker: spec.marker,
    registry: spec.registry,
    graceMs: spec.graceMs,
    killWaitMs: options.killWaitMs,
    cgroup: { name: spec.serviceName, pidsMax: spec.pidsMax, collection: spec.collection },
  });
  let log: StderrLog | undefined;
  let status: ExitStatus | undefined;
  const listeners: ((status: ExitStatus) => void)[] = [];
  const signal = options.signal;
  const leader = (async () => {
    log = openStderrLog(identity, options.stderrCapBytes);
    const command = resolveLaunchCommand(spec, identity);
    // The supervised-spawn path: the marker is announced before the spawn (a host killed between spawn and
    // register is still covered), the group registered right after it, and collected by the one kill path.
    await untilAborted(group.announce(), signal);
    signal.throwIfAborted();
    const child = await spawnLeader(group, command, spec, identity);
    child.on('exit', (code, exitSignal) => {
      status = { code, signal: exitSignal };
      for (const listener of listeners.splice(0)) listener(status);
    });
    log.attach(child.stderr!);
    return child;
  })();
  // Observed by whoever adopts the launch; a launch nobody adopts must not be an unhandled rejection.
  leader.catch(() => {});
  return {
    identity,
    group,
    startedAt: Date.now(),
    log: () => log,
    leader,
    onExit(listener) {
      if (status !== undefined) listener(status);
      else listeners.push(listener);
    },
  };
}

/** `work`, or a rejection with the signal's reason when it aborts first. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
