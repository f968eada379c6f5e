/**
 * A service's lifecycle states and the events that report every transition. Events carry ids, numbers
 * and paths, never log content or secret values (SPEC §11).
 */
import type { CatalogNames } from '../schemas/records.js';
import type { CatalogChange, ServiceEventBody, ServiceFields } from '../schemas/serviceEvents.js';

export type { CatalogChange, CatalogNames };

/**
 * The life of one service session. Transitions:
 * `starting → initializing → listing → ready → stopping → exited`; a start that fails goes
 * `… → failed → stopping → exited`; a ready service that dies or loses its connection goes
 * `ready → failed → stopping → exited`. Remote services skip `starting`.
 * @internal
 */
export type ServiceState =
  /** Resolving the command, opening the stderr log, announcing the marker, spawning. */
  | 'starting'
  /** Spawned (or connecting, for a remote service); the MCP `initialize` handshake is running. */
  | 'initializing'
  /** Initialized; every page of the lists the server declares is being fetched. */
  | 'listing'
  /** Listed and serving calls. */
  | 'ready'
  /** Could not start, or died or lost its connection while ready; `failure` says why. */
  | 'failed'
  /** Being collected: stdin ended, the group signalled, strays swept (remote: the client closing). */
  | 'stopping'
  /** Nothing of it is left (for a remote service: our client is closed). Final. */
  | 'exited';

/**
 * Fields every service event has: its time and the fields of `schemas/serviceEvents.ts` (the one source the
 * run journal's service events extend).
 @internal */
export type ServiceEventBase = { /** ISO 8601 time of the event. */ time: string } & ServiceFields;

/** One event of a service's life, given to `onEvent`. @internal */
export type ServiceEvent =
  | (ServiceEventBase & { type: 'service.state'; from: ServiceState | undefined; to: ServiceState })
  | (ServiceEventBase & {
      type: 'service.ready';
      /** The protocol era: `legacy` (2025-11-25, `initialize`) or `modern` (2026-07-28+, `server/discover`). */
      era?: 'legacy' | 'modern';
      /**
       * How a stdio service's era was chosen: remembered for its digest, negotiated (first start), or
       * negotiated because the remembered verdict's file was damaged (then rewritten).
       */
      eraSource?: 'remembered' | 'negotiated' | 'damaged_cache';
    } & ServiceEventBody<'service.ready'>)
  | (ServiceEventBase & { type: 'service.failed' } & ServiceEventBody<'service.failed'>)
  | (ServiceEventBase & { type: 'service.exited' } & ServiceEventBody<'service.exited'>)
  | (ServiceEventBase & { type: 'service.catalog_changed' } & CatalogChange)
  | (ServiceEventBase & { type: 'service.catalog_refresh_failed' } & ServiceEventBody<'service.catalog_refresh_failed'>)
  | (ServiceEventBase & { type: 'service.protocol_pollution' } & ServiceEventBody<'service.protocol_pollution'>);

/** Receives a service's events. A throw in it is ignored: reporting never breaks a service. */
export type ServiceEventListener = (event: ServiceEvent) => void;

/** Calls `listener`, swallowing whatever it throws. */
export function emitSafely(listener: ServiceEventListener | undefined, event: ServiceEvent): void {
  if (listener === undefined) return;
  try {
    listener(event);
  } catch {
    // A listener's failure is the listener's problem; the service goes on.
  }
}
