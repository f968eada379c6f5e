/**
 * The host process's one supervisor client (a module-level singleton on purpose: one supervisor per host
 * process, see docs/decisions/module-singletons.md).
 */
import type { ChildProcess } from 'node:child_process';
import { SupervisorClient, type SupervisorClientOptions, forkSupervisor } from './supervisorClient.js';

let shared: Promise<SupervisorClient> | undefined;
/** The supervisor process forked ahead by {@link forkSharedSupervisorEarly}, until a start adopts it. */
let early: ChildProcess | undefined;

/**
 * Forks the host's supervisor process now, before anything needs it, so that its boot overlaps the host's
 * own work (`services probe` calls it before it loads the store and the MCP client). The next
 * {@link sharedSupervisor} start adopts it, sends it the hello and the host's state, and waits for its
 * ack as always: nothing is announced to a supervisor that has not confirmed. Does nothing when a client
 * or an early fork exists; a refused fork is left for the start to retry and report. Returns the early
 * supervisor's pid (undefined when none was forked now).
 */
export function forkSharedSupervisorEarly(): number | undefined {
  if (shared !== undefined || early !== undefined) return undefined;
  try {
    early = forkSupervisor();
    return early.pid;
  } catch {
    early = undefined;
    return undefined;
  }
}

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
  // The early fork runs the default entry: a start naming another entry forks its own.
  const adopt = options.entry === undefined ? early : undefined;
  if (adopt !== undefined) early = undefined;
  shared = SupervisorClient.start(adopt === undefined ? options : { ...options, adopt });
  return shared;
}

/** Ends the shared supervisor in order (after the host collected and released what it started). */
export async function closeSharedSupervisor(): Promise<void> {
  const current = shared;
  shared = undefined;
  // An early fork no start adopted has recorded nothing: closing its channel ends it.
  const unadopted = early;
  early = undefined;
  if (unadopted?.connected) unadopted.disconnect();
  const client = await current?.catch(() => undefined);
  await client?.close();
}
