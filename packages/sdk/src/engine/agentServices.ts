/**
 * The operator's view of one agent's services, outside a run: `services probe` (start, list, collect) and
 * `services serve` (start and serve the agent's managed bridge). Both load the workflow when one is given,
 * sweep strays of earlier dead hosts of the project, and start every service under the host's supervisor.
 */
import { startTelemetry, telemetry } from '../events/telemetry.js';
import { randomBytes } from 'node:crypto';
import { makeDirs } from '../fileModes.js';
import { resolve } from 'node:path';
import type { Surface } from '../surface/surface.js';
import type { z } from 'zod';
import { SdkError } from '../errors.js';
import type { ServicesProbeDocumentSchema } from '../schemas/cliDocuments.js';
import { hostSupervisor, sweepProjectStrays } from '../invocation/hostSupervision.js';
import { type InvocationServices, processFacts, startInvocationServices } from '../invocation/invocation.js';
import { toolFiltersOf } from '../invocation/plan.js';
import type { CollectionPreference } from '../processes/processGroup.js';
import type { ServiceEvent } from '../sessions/serviceEvents.js';
import { resolveProjectId } from '../store/projectId.js';
import { type ProjectPaths, openProject } from '../store/projectStore.js';
import { loadWorkflow } from '../store/workflowLoad.js';
import type { Workflow } from '../workflow/workflowTypes.js';
import { type WorkflowVersion, requireAccepted } from '../store/workflowVersions.js';
import { agentSurface } from './agentSurface.js';
import { FIXED_CATALOG_SERVICE, fixedCatalog } from './fixedCatalog.js';
import { redactUrl } from '../redact.js';

/** Options of one agent's services outside a run: those of {@link serveAgentServices} (and of probes). @public */
export interface AgentServicesOptions {
  /** The data directory (see docs/data-dir.md). */
  dataDir: string;
  /** Default: derived from `workspace`. */
  project?: string | undefined;
  /** The task directory: every service's cwd. */
  workspace: string;
  /** A workflow file or document to load first (as `workflow load`); default: the accepted version. */
  workflow?: string | Workflow | Record<string, unknown> | undefined;
  /** The agent (role) whose services start. */
  agent: string;
  /** Milliseconds for every service together to be ready. Default 35,000. */
  startupBudgetMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL. Default 2,000. */
  graceMs?: number;
  /**
   * Milliseconds a call forwarded through the served surface may take before it is cancelled at the
   * service and answered `forward_timeout` (as a run's `forwardTimeoutMs`). Default 60,000. A probe
   * forwards no calls (it only lists), so it does not use it.
   */
  forwardTimeoutMs?: number;
  /**
   * How services' processes are collected: `auto` (default: a control group per service where the host
   * supports one) or `process-group` (never a control group).
   */
  collection?: CollectionPreference;
  /** `pids.max` of each service's control group (processes and threads at once). Default 512. */
  pidsMax?: number;
  /** Where `envFrom` reads host variables. Default `process.env`. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
}

/** Options of {@link probeServices}. @internal */
export interface ProbeOptions extends AgentServicesOptions {
  /** Receives service events. */
  onEvent?: (event: ServiceEvent & { invocation: string; agent: string }) => void;
}

// The report is the `services probe --json` document: its types are the schema's (`schemas/cliDocuments.ts`).
/** The `services probe --json` document. @internal */
export type ProbeReport = z.infer<typeof ServicesProbeDocumentSchema>;
/** One service of a probe report (one per `mcpServers` name; aliases share pid and lists). @internal */
export type ProbedService = ProbeReport['services'][number];

interface Prepared {
  paths: ProjectPaths;
  version: WorkflowVersion;
}

async function prepare(options: AgentServicesOptions): Promise<Prepared> {
  const projectId = resolveProjectId(options);
  if (options.workflow !== undefined) {
    await loadWorkflow({ dataDir: options.dataDir, project: projectId, workflow: options.workflow });
  }
  const paths = await openProject(options.dataDir, projectId);
  const version = await requireAccepted(paths);
  await sweepProjectStrays(paths, { graceMs: options.graceMs });
  return { paths, version };
}

async function start(prepared: Prepared, options: ProbeOptions, runId: string): Promise<InvocationServices> {
  const workspace = resolve(options.workspace);
  makeDirs(workspace);
  const registry = await hostSupervisor(prepared.paths, { graceMs: options.graceMs });
  return startInvocationServices({
    paths: prepared.paths,
    version: prepared.version,
    agent: options.agent,
    runId,
    workspace,
    registry,
    startupBudgetMs: options.startupBudgetMs,
    graceMs: options.graceMs,
    ...(options.collection === undefined ? {} : { collection: options.collection }),
    ...(options.pidsMax === undefined ? {} : { pidsMax: options.pidsMax }),
    hostEnv: options.hostEnv,
    onEvent: options.onEvent,
  });
}

function report(prepared: Prepared, services: InvocationServices): ProbeReport {
  const rows: ProbedService[] = [];
  for (const outcome of services.outcomes) {
    const { planned, session, error } = outcome;
    const facts = processFacts(session);
    const catalog = session?.catalog;
    for (const alias of planned.aliases) {
      rows.push({
        name: alias,
        definition: planned.kind === 'project' ? planned.definitionName : null,
        digest: planned.kind === 'project' ? planned.digest : null,
        // Shown redacted: a query token or user information never reaches the report.
        ...(planned.kind === 'remote' ? { url: redactUrl(planned.url) } : {}),
        pid: facts.pid ?? (typeof error?.data.pid === 'number' ? error.data.pid : null),
        pgid: facts.pgid ?? (typeof error?.data.pgid === 'number' ? error.data.pgid : null),
        state: error ? 'failed' : 'ready',
        tools: catalog?.tools.map((t) => t.name) ?? [],
        resources: catalog?.resources.map((r) => r.uri) ?? [],
        resourceTemplates: catalog?.resourceTemplates.map((r) => r.uriTemplate) ?? [],
        prompts: catalog?.prompts.map((p) => p.name) ?? [],
        missingLists: [...(catalog?.missingLists ?? [])],
        sandbox: outcome.sandbox === undefined ? null : { ...outcome.sandbox },
        error: error
          ? {
              code: error.code,
              message: error.message,
              log: typeof error.data.log === 'string' ? error.data.log : null,
            }
          : null,
      });
    }
  }
  return {
    project: prepared.paths.projectId,
    invocation: services.invocationId,
    runtimePath: services.runtimePath,
    collection: services.collection,
    services: rows,
  };
}

function newProbeRunId(kind: 'probe' | 'serve'): string {
  return `${kind}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

/** A probe whose services are still up (`--hold`); `close()` collects them. @internal */
export interface HeldProbe {
  report: ProbeReport;
  /** True when every service is ready. */
  ok: boolean;
  /**
   * Each failed start's error in full (`data.stderrTail`, redacted, and the `remedy` included), for the
   * screen; the report itself carries no log content.
   */
  failures: readonly SdkError[];
  close(): Promise<void>;
}

/**
 * Starts the agent's services as an invocation would, lists all they offer, and leaves them up until
 * `close()` (which the caller must call: `services probe` calls it at once, or after `--hold`).
 * @internal
 */
export async function probeServices(options: ProbeOptions): Promise<HeldProbe> {
  const prepared = await prepare(options);
  const services = await start(prepared, options, newProbeRunId('probe'));
  return {
    report: report(prepared, services),
    ok: services.failures.length === 0,
    failures: services.failures,
    close: () => services.close(),
  };
}

/** A served agent: its surface, with its services up until `close()`. @public */
export interface ServedAgent {
  /** The project id. */
  project: string;
  /** The id the services run under (a `serve-…` id, not a run's invocation). */
  invocation: string;
  /** The services' runtime directory (copies of the definitions, stderr logs). */
  runtimePath: string;
  /** The agent's surface: every tool, resource and prompt of its services under one catalog. */
  surface: Surface;
  /** Collects every service; resolves when every process is gone. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link serveAgentServices}. @public */
export interface ServeAgentOptions extends AgentServicesOptions {
  /** Keep the one service's own names (allowed only when the agent has exactly one service). */
  passthrough?: boolean;
}

/**
 * Starts the agent's services and builds its managed surface (for `main`, with the fixed catalog's
 * `get_workflow` and, when allowed, `apply_workflow`). Throws, with every service collected, when any
 * service fails to start.
 * @public
 */
export async function serveAgentServices(options: ServeAgentOptions): Promise<ServedAgent> {
  // With export on, each call through the served surface is a span (continuing the client's traceparent).
  await startTelemetry();
  const prepared = await prepare(options);
  const services = await start(prepared, options, newProbeRunId('serve'));
  if (services.failures.length > 0) {
    const first = services.failures[0]!;
    throw new SdkError(
      first.code,
      `agent "${options.agent}" cannot be served: ${services.failures.map((f) => f.message).join('; ')}`,
      {
        remedy: first.remedy ?? 'read the stderr log named above',
        data: { failures: services.failures.map((f) => f.toJSON()) },
      },
    );
  }
  try {
    const entries = [...services.sessions];
    const withCatalog = options.agent === 'main' && !options.passthrough;
    const surface = agentSurface(
      withCatalog
        ? [
            ...entries,
            fixedCatalog({
              paths: prepared.paths,
              allowReconfiguration: prepared.version.workflow.orchestration.allowMainReconfiguration,
            }),
          ]
        : entries,
      {
        passthrough: options.passthrough ?? false,
        forwardTimeoutMs: options.forwardTimeoutMs,
        toolFilters: toolFiltersOf(services.outcomes.map((o) => o.planned)),
      },
    );
    return {
      project: prepared.paths.projectId,
      invocation: services.invocationId,
      runtimePath: services.runtimePath,
      surface,
      close: async () => {
        try {
          await services.close();
        } finally {
          await telemetry()?.flush();
        }
      },
    };
  } catch (error) {
    await services.close();
    throw error;
  }
}

export { FIXED_CATALOG_SERVICE };
