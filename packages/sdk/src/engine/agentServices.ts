/**
 * The operator's view of one agent's services, outside a run: `services probe` (start, list, collect; in
 * probeServices.ts) and `services serve` (start and serve the agent's managed bridge). Both load the
 * workflow when one is given, sweep strays of earlier dead hosts of the project, and start every service
 * under the host's supervisor (agentServicesStart.ts).
 */
import { startTelemetry, telemetry } from '../events/telemetry.js';
import type { Surface } from '../surface/surface.js';
import { SdkError } from '../errors.js';
import { forkHostSupervisorEarly } from '../invocation/hostSupervision.js';
import { toolFiltersOf } from '../invocation/plan.js';
import { agentSurface } from './agentSurface.js';
import { type AgentServicesOptions, newProbeRunId, prepare, start } from './agentServicesStart.js';
import { FIXED_CATALOG_SERVICE, fixedCatalog } from './fixedCatalog.js';

export type { AgentServicesOptions, ProbeOptions, ProbeReport, ProbedService } from './agentServicesStart.js';
export { probeServices } from './probeServices.js';
export type { HeldProbe } from './probeServices.js';

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
  // As the probe: the supervisor boots while the project is prepared; the first start adopts it.
  forkHostSupervisorEarly();
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
