/**
 * The host's supervision: one supervisor per host process, started before the first service, and the
 * start-up sweep of strays an earlier, dead host of the same project left behind (SPEC §6).
 */
import { join } from 'node:path';
import type { ProcessRegistry } from '../processes/processRegistry.js';
import { type SweepReport, sweepStrays } from '../processes/strayProcesses.js';
import { closeSharedSupervisor, forkSharedSupervisorEarly, sharedSupervisor } from '../processes/sharedSupervisor.js';
import type { ProjectPaths } from '../store/projectStore.js';

/**
 * The host's supervisor client, started on first use with its log under the project's data
 * (`supervisor/host-<pid>.log`). Every later call returns the same client: one supervisor per host
 * process. A client that failed is replaced.
 *
 * @param options.graceMs Milliseconds between SIGTERM and SIGKILL when the supervisor collects. Default 2,000.
 */
export function hostSupervisor(paths: ProjectPaths, options: { graceMs?: number } = {}): Promise<ProcessRegistry> {
  return sharedSupervisor({
    logPath: join(paths.supervisorDir, `host-${process.pid}.log`),
    ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
  });
}

/**
 * Forks the host's supervisor process ahead of {@link hostSupervisor}, which adopts it: its boot then
 * overlaps the host's loading and preparing (see docs/decisions/probe-start.md). The ack before every
 * spawn is unchanged. Returns the early supervisor's pid (undefined when none was forked now).
 */
export function forkHostSupervisorEarly(): number | undefined {
  return forkSharedSupervisorEarly();
}

/** Ends the host's supervisor in order (after the host collected its services). @public */
export function closeHostSupervisor(): Promise<void> {
  return closeSharedSupervisor();
}

/**
 * The start-up sweep of `run`, `resume`, `services probe` and `services serve`.
 *
 * @param options.graceMs Milliseconds between SIGTERM and SIGKILL. Default 2,000.
 */
export function sweepProjectStrays(paths: ProjectPaths, options: { graceMs?: number } = {}): Promise<SweepReport> {
  return sweepStrays({ projectId: paths.projectId, graceMs: options.graceMs });
}
