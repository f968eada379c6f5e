/**
 * The host process's one supervisor client (a module-level singleton on purpose: one supervisor per host
 * process, see docs/decisions/module-singletons.md).
 */
import { SupervisorClient, type SupervisorClientOptions } from './supervisorClient.js';

let shared: Promise<SupervisorClient> | undefined;

/**
 * The host process's supervisor client: started on first use, and the same one for every later call
 * (one supervisor per host process; services, invocations and the gateway all register with it). The
 * first call's options decide the log path and the grace; a client that failed or was closed is replaced
 * by a new one with the options of the call that finds it so.
 */
export async function sharedSupervisor(options: SupervisorClientOptions): Promise<SupervisorClient> {
  if (shared !== undefined) {
    const client = await shared.catch(() => undefined);
    if (client !== undefined && client.state !== 'failed' && client.state !== 'closed') return client;
  }
  shared = SupervisorClient.start(options);
  return shared;
}

/** Ends the shared supervisor in order (after the host collected and released what it started). */
export async function closeSharedSupervisor(): Promise<void> {
  const current = shared;
  shared = undefined;
  const client = await current?.catch(() => undefined);
  await client?.close();
}
