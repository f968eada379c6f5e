/**
 * The host's supervision: one supervisor per host process, started before the first service, and the
 * start-up sweep of strays an earlier, dead host of the same project left behind (SPEC §6).
 */
import { join } from 'node:path';
import type { ProjectPaths } from '../store/projectStore.js';
import type { ProcessRegistry } from '../services/processRegistry.js';
import { type SweepReport, sweepStrays } from '../services/strayProcesses.js';
import { SupervisorClient } from '../services/supervisorClient.js';

let shared: Promise<SupervisorClient> | undefined;

/**
 * The host's supervisor client, started on first use with its log under the project's data. Every later
 * call returns the same client: one supervisor per host process. A client that failed is replaced.
 */
export async function hostSupervisor(
  paths: ProjectPaths,
  options: { graceMs?: number } = {},
): Promise<ProcessRegistry> {
  if (shared !== undefined) {
    const client = await shared.catch(() => undefined);
    if (client !== undefined && client.state !== 'failed' && client.state !== 'closed') return client;
  }
  shared = SupervisorClient.start({
    logPath: join(paths.supervisorDir, `host-${process.pid}.log`),
    graceMs: options.graceMs,
  });
  return shared;
}

/** Ends the host's supervisor in order (after the host collected its services). */
export async function closeHostSupervisor(): Promise<void> {
  const current = shared;
  shared = undefined;
  const client = await current?.catch(() => undefined);
  await client?.close();
}

/** The start-up sweep of `run`, `resume`, `services probe` and `services serve`. */
export function sweepProjectStrays(paths: ProjectPaths, options: { graceMs?: number } = {}): Promise<SweepReport> {
  return sweepStrays({ projectId: paths.projectId, graceMs: options.graceMs });
}
