/**
 * `services probe`: start one agent's services as an invocation would, list all they offer, collect.
 * This module loads almost nothing: it forks the host's supervisor first, and only then loads the store,
 * the invocation path and (once the service's leader is spawned) the MCP client, so the supervisor's boot
 * and the service's boot overlap the host's loading (docs/decisions/probe-start.md).
 */
import type { SdkError } from '../errors.js';
import { forkHostSupervisorEarly } from '../invocation/hostSupervision.js';
import type { ProbeOptions, ProbeReport } from './agentServicesStart.js';

export type { AgentServicesOptions, ProbeOptions, ProbeReport, ProbedService } from './agentServicesStart.js';

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
  // The supervisor boots while the rest loads; the first service's start adopts it (and waits for its ack).
  forkHostSupervisorEarly();
  const { newProbeRunId, prepare, report, start } = await import('./agentServicesStart.js');
  const prepared = await prepare(options);
  const services = await start(prepared, options, newProbeRunId('probe'));
  return {
    report: report(prepared, services),
    ok: services.failures.length === 0,
    failures: services.failures,
    close: () => services.close(),
  };
}
