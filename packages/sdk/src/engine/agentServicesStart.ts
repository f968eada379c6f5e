/**
 * What `services probe` and `services serve` share: open the project at its accepted version (loading a
 * workflow first when one is given), sweep strays of earlier dead hosts, start the agent's services under
 * the host's supervisor, and describe them as the probe report. Loaded by the probe only after it forked the
 * host's supervisor (engine/probeServices.ts), so it holds nothing the probe does not need (no surface).
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import type { z } from 'zod';
import { remedyOf } from '../errors.js';
import { makeDirs } from '../fileModes.js';
import { hostSupervisor, sweepProjectStrays } from '../invocation/hostSupervision.js';
import { type InvocationServices, processFacts, startInvocationServices } from '../invocation/invocation.js';
import type { CollectionPreference } from '../processes/processGroup.js';
import { redactUrl } from '../redact.js';
import type { ServicesProbeDocumentSchema } from '../schemas/cliDocuments.js';
import type { ServiceEvent } from '../sessions/serviceEvents.js';
import { resolveProjectId } from '../store/projectId.js';
import { type ProjectPaths, openProject } from '../store/projectStore.js';
import { type WorkflowVersion, requireAccepted } from '../store/workflowVersions.js';
import type { Workflow } from '../workflow/workflowTypes.js';

/** Options of one agent's services outside a run: those of `serveAgentServices` (and of probes). @public */
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

/** Options of `probeServices`. @internal */
export interface ProbeOptions extends AgentServicesOptions {
  /** Receives service events. */
  onEvent?: (event: ServiceEvent & { invocation: string; agent: string }) => void;
}

// The report is the `services probe --json` document: its types are the schema's (`schemas/cliDocuments.ts`).
/** The `services probe --json` document. @internal */
export type ProbeReport = z.infer<typeof ServicesProbeDocumentSchema>;
/** One service of a probe report (one per `mcpServers` name; aliases share pid and lists). @internal */
export type ProbedService = ProbeReport['services'][number];

/** The project and the version a probe or a serve starts from. */
export interface Prepared {
  paths: ProjectPaths;
  version: WorkflowVersion;
}

/** Loads the workflow when one is given, opens the project at its accepted version, sweeps strays. */
export async function prepare(options: AgentServicesOptions): Promise<Prepared> {
  const projectId = resolveProjectId(options);
  if (options.workflow !== undefined) {
    // Loaded only here: a workflow folder's YAML parser is not for a probe of the accepted version.
    const { loadWorkflow } = await import('../store/workflowLoad.js');
    await loadWorkflow({ dataDir: options.dataDir, project: projectId, workflow: options.workflow });
  }
  const paths = await openProject(options.dataDir, projectId);
  const version = await requireAccepted(paths);
  await sweepProjectStrays(paths, { graceMs: options.graceMs });
  return { paths, version };
}

/** Starts the agent's services under the host's supervisor (started, or adopted, here). */
export async function start(prepared: Prepared, options: ProbeOptions, runId: string): Promise<InvocationServices> {
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

/** The `services probe --json` document of started services. */
export function report(prepared: Prepared, services: InvocationServices): ProbeReport {
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
              remedy: remedyOf(error),
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

/** The run id a probe or a serve runs its services under (`probe-…`, `serve-…`). */
export function newProbeRunId(kind: 'probe' | 'serve'): string {
  return `${kind}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}
