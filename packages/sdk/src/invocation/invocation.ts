/**
 * One invocation's services (SPEC §5): plan (aliases share one process), copy each definition's source
 * to `runtimePath/mcp/<name>/`, build each environment, start everything in parallel under one startup
 * budget, and collect everything on close — or at once when any service fails to start.
 *
 * The session code (and through it the MCP client) loads only once a project service's leader is spawned
 * (or, for remote services, when one is planned): the service boots while the host loads the client.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { makePrivateDir } from '../fileModes.js';
import { collectMarked } from '@scienceevolve/supervisor/terminate';
import { formatMarker } from '@scienceevolve/supervisor/protocol';
import { processStartTime } from '@scienceevolve/supervisor/procfs';
import { SdkError, toSdkError } from '../errors.js';
import type { ProcessRegistry } from '../processes/processRegistry.js';
import {
  type CollectionMechanism,
  type CollectionPreference,
  collectionMechanism,
  MAX_PIDS_MAX,
  MIN_PIDS_MAX,
} from '../processes/processGroup.js';
import { sharedStartGate, type StartGate } from '../processes/admission.js';
import { decideSandbox, type SandboxDecision, type ServiceSandbox, sandboxAvailability } from '../processes/sandbox.js';
import { buildServiceEnv, linkServiceModules, serviceCompileCacheDir } from '../processes/serviceEnv.js';
import { DEFAULT_STARTUP_BUDGET_MS } from '../sessions/startBudget.js';
import type { ServiceEvent } from '../sessions/serviceEvents.js';
import type { ServiceSession } from '../sessions/serviceSession.js';
import { launchLeader, type StdioServiceSpec } from '../sessions/stdioLaunch.js';
import type { StdioServiceSession } from '../sessions/stdioService.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { checkSourceCopy } from '../store/sourceStore.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import { copySource } from './copySource.js';
import { eraFilePath, fileEraMemory } from './eraFile.js';
import { type PlannedProjectService, type PlannedService, planServices } from './plan.js';
import { mainProposedDigests } from './sandboxPolicy.js';
import { timerMs } from '../workflow/durations.js';

/** Milliseconds all of an invocation's services together have to be ready: 35,000 (SPEC §5.5). */
export { DEFAULT_STARTUP_BUDGET_MS };

/** Options of {@link startInvocationServices}. */
export interface InvocationOptions {
  paths: ProjectPaths;
  /** The accepted version the invocation runs. */
  version: WorkflowVersion;
  agent: string;
  /** The run the invocation belongs to (for probes: a probe id). */
  runId: string;
  /** Default: a new random id. */
  invocationId?: string;
  /** The task directory: every service's cwd and `SCIENCEEVOLVE_WORKSPACE`. */
  workspace: string;
  /** The supervisor (see `hostSupervisor`); without one, nothing covers a host crash. */
  registry?: ProcessRegistry;
  /**
   * Milliseconds for the services to be ready. Default 35,000. A project service's budget counts from its
   * admission (see `startGate`): time spent waiting for a turn to start is not taken from it.
   */
  startupBudgetMs?: number;
  /**
   * The admission gate project services' starts pass (a burst of starts queues instead of thrashing).
   * Default the process's gate, sized to the machine's cores.
   */
  startGate?: StartGate;
  /** Milliseconds a start may wait at the gate before it fails with `start_queue_timeout`. Default 300,000. */
  startQueueLimitMs?: number;
  /**
   * The digests Main proposed (for `sandbox: "auto"`), when the caller knows them from elsewhere (a queue
   * worker, from its job). Default: read from the project's version history.
   */
  mainProposed?: ReadonlySet<string>;
  /** Milliseconds between SIGTERM and SIGKILL on stop. Default 2,000. */
  graceMs?: number;
  /**
   * How project services' processes are collected: `auto` (default) runs each in a control group of its own
   * where the host supports one (root, or a delegated cgroup v2 subtree; see docs/supervision.md), so that
   * nothing escapes collection; `process-group` uses the process group and marker sweep only.
   */
  collection?: CollectionPreference;
  /** `pids.max` of each project service's control group (processes and threads at once). Default 512. */
  pidsMax?: number;
  /** Where `envFrom` reads host variables. Default `process.env` (never modified). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /** Receives every service event, with the invocation's ids added. */
  onEvent?: (event: ServiceEvent & { invocation: string; agent: string }) => void;
  /** Aborts the start. */
  signal?: AbortSignal;
  /**
   * When one service fails to start, cancel the starts still running instead of letting them run out the
   * budget (they then fail as cancelled). Default `false` here, so a probe reports every service's own
   * outcome; {@link startInvocation}, which only needs to know that the invocation cannot start, sets it.
   */
  cancelOnFailure?: boolean;
}

/** The outcome of one planned service. */
export interface ServiceOutcome {
  planned: PlannedService;
  /** Set when it is ready. */
  session?: ServiceSession;
  /** Set when it failed to start. */
  error?: SdkError;
  /** Whether a project service runs (or would have run) sandboxed, and why; absent for remote services. */
  sandbox?: SandboxDecision;
}

/** An invocation's started services. */
export interface InvocationServices {
  invocationId: string;
  /** `runs/<runId>/invocations/<invocationId>`. */
  runtimePath: string;
  marker: string;
  /** What collects the project services' processes (see `collectionMechanism`). */
  collection: CollectionMechanism;
  /** One per planned service, in plan order. */
  outcomes: ServiceOutcome[];
  /** The ready sessions. */
  sessions: ServiceSession[];
  /** The failures. */
  failures: SdkError[];
  /** Collects every service (idempotent); resolves when every process is gone. */
  close(): Promise<void>;
}

/** Refuses a `collection` or `pidsMax` the SDK cannot use (`usage`), before anything starts. */
function checkCollectionOptions(options: Pick<InvocationOptions, 'collection' | 'pidsMax'>): void {
  const { collection, pidsMax } = options;
  if (collection !== undefined && collection !== 'auto' && collection !== 'process-group') {
    throw new SdkError('usage', `collection must be "auto" or "process-group", not ${JSON.stringify(collection)}`, {
      remedy: 'leave it out (auto) or pass "process-group"',
    });
  }
  if (pidsMax !== undefined && !(Number.isInteger(pidsMax) && pidsMax >= MIN_PIDS_MAX && pidsMax <= MAX_PIDS_MAX)) {
    throw new SdkError(
      'usage',
      `pidsMax must be a whole number from ${MIN_PIDS_MAX} to ${MAX_PIDS_MAX}, not ${String(pidsMax)}`,
      { remedy: 'leave it out for the default (512), or pass a whole number in range' },
    );
  }
}

/** A new invocation id: time-ordered and unique. */
export function newInvocationId(): string {
  return `inv-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

/**
 * Starts every service of `agent` and reports each outcome. When any fails, the others that started are
 * collected before this resolves (their outcome keeps the session for reporting, already closed).
 * Use {@link startInvocation} to get a throw instead.
 */
export async function startInvocationServices(options: InvocationOptions): Promise<InvocationServices> {
  const { paths, version, agent } = options;
  checkCollectionOptions(options);
  const invocationId = options.invocationId ?? newInvocationId();
  const runtimePath = paths.invocationDir(options.runId, invocationId);
  const plan = planServices(version, agent);
  await makePrivateDir(join(runtimePath, 'mcp'));
  await makePrivateDir(paths.serviceDataDir);
  // `runtimePath/node_modules`: the SDK's MCP packages and zod for services' `import` (NODE_PATH covers only
  // `require`); an ancestor of every copy, so Node's own lookup finds them wherever the data dir lives. Only
  // project services run from copies: an invocation of remote services alone needs none.
  const hasProjectServices = plan.some((p) => p.kind === 'project');
  const moduleLinks = hasProjectServices ? await linkServiceModules(runtimePath) : undefined;
  const opencodeDir = await guardOpencodeConfig(version, options.workspace);

  const marker = formatMarker({
    projectId: paths.projectId,
    hostPid: process.pid,
    hostStart: processStartTime(process.pid) ?? '0',
    invocationId,
  });
  const budgetMs = options.startupBudgetMs ?? DEFAULT_STARTUP_BUDGET_MS;
  const deadline = Date.now() + budgetMs;
  // One abort for every start: the caller's signal, or the first failure when cancelOnFailure is set.
  const cancel = new AbortController();
  // Every start listens on this one signal (its wait at the gate, then its budget): an agent's 32 services
  // pass Node's default warning threshold of 10 listeners, which is no leak here.
  setMaxListeners(Math.max(10, 4 * plan.length), cancel.signal);
  const forwardAbort = () => cancel.abort(options.signal?.reason);
  if (options.signal?.aborted) forwardAbort();
  else options.signal?.addEventListener('abort', forwardAbort, { once: true });
  const onEvent = options.onEvent
    ? (event: ServiceEvent) => options.onEvent?.({ ...event, invocation: invocationId, agent })
    : undefined;
  const hostEnv = options.hostEnv ?? process.env;
  const policy = version.workflow.orchestration.sandbox;
  // Only `auto` asks who proposed a definition; the history is read only when there is a project service.
  const mainDigests =
    policy === 'off' || policy === 'required' || !hasProjectServices
      ? new Set<string>()
      : (options.mainProposed ?? (await mainProposedDigests(paths, version)));
  const sandboxOf = (planned: PlannedProjectService): Promise<ServiceSandbox> =>
    decideSandbox({
      policy,
      proposedByMain: mainDigests.has(planned.digest),
      network: planned.definition.network,
      sandbox: planned.definition.sandbox,
      service: planned.name,
      definition: planned.definitionName,
      availability: () => sandboxAvailability(hostEnv),
    });

  const outcomes: ServiceOutcome[] = await Promise.all(
    plan.map(async (planned): Promise<ServiceOutcome> => {
      let sandbox: ServiceSandbox | undefined;
      try {
        if (planned.kind === 'remote') {
          const [{ connectRemoteService }, { remoteCredentials }] = await Promise.all([
            import('../sessions/remoteService.js'),
            import('./remoteCredentials.js'),
          ]);
          const session = await connectRemoteService(
            {
              name: planned.name,
              aliases: planned.aliases,
              url: planned.url,
              workspace: options.workspace,
              ...remoteCredentials(planned, { dataDir: paths.dataDir, projectId: paths.projectId, hostEnv }),
            },
            { deadline, signal: cancel.signal, onEvent },
          );
          return { planned, session };
        }
        sandbox = await sandboxOf(planned);
        if (sandbox.decision.sandboxed) {
          // Inside, the data dir is hidden but for the service's own directories (bound again by the launch);
          // a Git-on worktree's `.git` is the host's to change (the host runs git on it), never the service's.
          sandbox = {
            ...sandbox,
            hide: [paths.dataDir],
            readOnly: [
              ...(moduleLinks === undefined ? [] : [moduleLinks]),
              ...(version.workflow.orchestration.git ? [join(options.workspace, '.git')] : []),
              ...(opencodeDir === undefined ? [] : [opencodeDir]),
            ],
          };
        }
        const sourceDir = join(runtimePath, 'mcp', planned.name);
        const storedDir = paths.sourceDir(planned.digest, planned.definitionName);
        await copySource(storedDir, sourceDir);
        // The copy is what runs: checked against the digest the accepted version names (docs/data-dir.md).
        await checkSourceCopy(sourceDir, storedDir, planned.definition, planned.digest);
        const env = buildServiceEnv({
          serviceName: planned.name,
          hostEnv,
          envFrom: planned.definition.envFrom,
          workspace: options.workspace,
          sourceDir,
          projectRoot: paths.serviceDataDir,
          marker,
          compileCacheDir: serviceCompileCacheDir(paths.dataDir),
        });
        // The budget counts from admission: the wait for a turn is reported apart (`queuedMs`).
        const admission = await (options.startGate ?? sharedStartGate())
          .admit({
            signal: cancel.signal,
            ...(options.startQueueLimitMs === undefined ? {} : { queueLimitMs: options.startQueueLimitMs }),
            what: `service "${planned.name}" of invocation ${invocationId}`,
          })
          .catch((error: unknown) => {
            if (!cancel.signal.aborted) throw error;
            // Cancelled in the queue (the run, or another service's failure): reported as any cancelled start.
            throw new SdkError(
              'startup_timeout',
              `service "${planned.name}" was cancelled while it waited for its turn to start`,
              {
                remedy: 'see the failure that cancelled the start, or resume the run',
                data: { service: planned.name, phase: 'queued', cancelled: true },
              },
            );
          });
        const spec: StdioServiceSpec = {
          serviceName: planned.name,
          aliases: planned.aliases,
          definitionName: planned.definitionName,
          digest: planned.digest,
          command: planned.definition.command,
          entrypointPath: join(sourceDir, ...planned.definition.entrypoint.split('/')),
          args: planned.definition.args,
          cwd: options.workspace,
          env,
          stderrLogPath: join(runtimePath, 'mcp', `${planned.name}.stderr.log`),
          // What envFrom mapped (a key, a token) never shows in an error's stderr tail.
          secretValues: Object.keys(planned.definition.envFrom ?? {}).flatMap((key) =>
            Object.hasOwn(env, key) ? [env[key]!] : [],
          ),
          marker,
          registry: options.registry,
          graceMs: options.graceMs,
          collection: options.collection,
          pidsMax: options.pidsMax,
          eraMemory: fileEraMemory(eraFilePath(paths.root, planned.digest), planned.digest),
          sandbox,
        };
        const startDeadline = admission.queuedMs > 0 ? Date.now() + budgetMs : deadline;
        // The leader first (announced, acknowledged, spawned, registered), then the session code: the service
        // boots while this process loads the MCP client. The session takes the launch over, failures included.
        const launched = launchLeader(spec, { signal: cancel.signal });
        await settledBy(launched.leader, startDeadline, cancel.signal);
        const session = await loadStdioSessions()
          .then(
            ({ startStdioService }) =>
              startStdioService(spec, {
                deadline: startDeadline,
                signal: cancel.signal,
                onEvent,
                queuedMs: admission.queuedMs,
                launched,
              }),
            async (error: unknown) => {
              // The session code did not load: nothing adopts the launch, so it is collected here.
              await launched.group.collect();
              throw error;
            },
          )
          .finally(() => admission.release());
        return { planned, session, sandbox: sandbox.decision };
      } catch (error) {
        if (options.cancelOnFailure) cancel.abort(new Error(`service "${planned.name}" failed to start`));
        return {
          planned,
          error: toSdkError(error),
          ...(sandbox === undefined ? {} : { sandbox: sandbox.decision }),
        };
      }
    }),
  );
  options.signal?.removeEventListener('abort', forwardAbort);

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      // Every session is closed even when one close throws; the first error is reported after all ran.
      const results = await Promise.allSettled(outcomes.map((o) => o.session?.close()));
      // Every group is gone; what still carries the marker is an orphan no single service could claim
      // while its siblings lived (a daemon whose parent exited): the invocation's own, so collected here.
      const orphans = await collectMarked({ matches: (m) => m === marker, graceMs: options.graceMs }).catch(
        () => undefined,
      );
      const survivors = [
        ...outcomes.flatMap((o) =>
          o.session?.kind === 'project' ? [...(o.session as StdioServiceSession).survivors] : [],
        ),
        ...(orphans?.survivors ?? []),
      ];
      if (survivors.length > 0) {
        // Not released: the supervisor keeps the marker and collects them when it can (or the next start-up sweep does).
        throw new SdkError(
          'collect_failed',
          `processes ${survivors.join(', ')} of invocation ${invocationId} outlived SIGKILL; they stay under the supervisor`,
          {
            remedy: 'look at them with `ps -o pid,stat,cmd -p <pid>` (state D: stuck in the kernel)',
            data: { survivors, marker },
          },
        );
      }
      options.registry?.releaseMarker?.(marker);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw toSdkError(failed.reason);
    })();
    return closed;
  };

  const failures = outcomes.flatMap((o) => (o.error ? [o.error] : []));
  if (failures.length > 0) await close();
  return {
    invocationId,
    runtimePath,
    marker,
    collection: collectionMechanism(options.collection),
    outcomes,
    sessions: outcomes.flatMap((o) => (o.session ? [o.session] : [])),
    failures,
    close,
  };
}

/**
 * Starts every service of `agent`, or throws when any fails to start (every other one collected first):
 * the SdkError of a single failure, or `startup_failed`-style aggregate with `data.failures` listing each.
 */
export async function startInvocation(options: InvocationOptions): Promise<InvocationServices> {
  const services = await startInvocationServices({ cancelOnFailure: true, ...options });
  if (services.failures.length === 0) return services;
  // The cause first: starts cancelled because of another failure are listed after it.
  const failures = [
    ...services.failures.filter((f) => f.data.cancelled !== true),
    ...services.failures.filter((f) => f.data.cancelled === true),
  ];
  if (failures.length === 1) throw failures[0]!;
  const first = failures[0]!;
  throw new SdkError(
    first.code,
    `${failures.length} services of agent "${options.agent}" failed to start:\n${failures.map((f) => `  - ${f.message}`).join('\n')}`,
    {
      remedy: "read each service's stderr log named above",
      data: { failures: failures.map((f) => f.toJSON()) },
    },
  );
}

/** The stdio session code (and the MCP client under it), loaded on first use. */
function loadStdioSessions(): Promise<typeof import('../sessions/stdioService.js')> {
  return import('../sessions/stdioService.js');
}

/**
 * Resolves once `work` settled, the deadline passed or the signal aborted, whichever is first; never
 * rejects (whoever awaits `work` itself sees its outcome).
 */
function settledBy(work: Promise<unknown>, deadline: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, timerMs(deadline - Date.now()));
    signal.addEventListener('abort', done, { once: true });
    if (signal.aborted) done();
    work.then(done, done);
  });
}

/** The pid and pgid of a project session, for reports. */
export function processFacts(session: ServiceSession | undefined): { pid?: number; pgid?: number } {
  if (session?.kind !== 'project') return {};
  const s = session as StdioServiceSession;
  return { pid: s.pid, pgid: s.pgid };
}

/**
 * OpenCode loads the plugins of a workspace's `.opencode/plugin(s)/` whatever its switches say. Where an agent
 * of the workflow runs the `opencode` preset, the workspace's `.opencode` is made (when missing, as an empty
 * directory) so that every sandboxed service gets it read-only: no service can plant a plugin there. Returns
 * its path, or undefined when no agent uses the preset or the path is not a plain directory (a link or a file
 * a service left: the preset refuses to start OpenCode then, see `harness/presetOpencode.ts`).
 */
async function guardOpencodeConfig(version: WorkflowVersion, workspace: string): Promise<string | undefined> {
  const usesOpencode = Object.values(version.workflow.agents).some(
    (agent) => agent.harness.type === 'command' && agent.harness.preset === 'opencode',
  );
  if (!usesOpencode) return undefined;
  const dir = join(workspace, '.opencode');
  try {
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  const stat = await lstat(dir).catch(() => undefined);
  return stat?.isDirectory() === true ? dir : undefined;
}
