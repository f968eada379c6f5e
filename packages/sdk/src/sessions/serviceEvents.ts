/**
 * A service's lifecycle states and the events that report every transition. Events carry ids, numbers
 * and paths, never log content or secret values (SPEC §11).
 */
import type { SandboxReason } from '../processes/sandbox.js';

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

/** Fields every service event has. @internal */
export interface ServiceEventBase {
  /** ISO 8601 time of the event. */
  time: string;
  /** The service name (the first alias). */
  service: string;
  kind: 'project' | 'remote';
  /** The definition a project service runs. */
  definition?: string;
  /** The definition's digest. */
  digest?: string;
  /** The leader's pid (project services, once spawned). */
  pid?: number;
  /** The process group id (= the leader's pid). */
  pgid?: number;
  /** The stderr log file (project services). */
  log?: string;
  /** The endpoint without credentials or query (remote services). */
  url?: string;
  /** Whether a project service runs sandboxed, and why (`orchestration.sandbox`; see `SandboxReason`). */
  sandbox?: { sandboxed: boolean; reason: SandboxReason; network: boolean };
}

/** Names per list: tool and prompt names, resource URIs, template URI templates (the service's own). @public */
export interface CatalogNames {
  /** Tool names. */
  tools: string[];
  /** Resource URIs. */
  resources: string[];
  /** Resource template URI templates. */
  resourceTemplates: string[];
  /** Prompt names. */
  prompts: string[];
}

/**
 * What one re-listing after `notifications/…/list_changed` changed in a service's catalog: what was
 * added, removed, or is listed under the same name with another definition (description, schema, …).
 * @public
 */
export interface CatalogChange {
  /** The lists the service said had changed (`tools`, `resources`, `prompts`), in the order heard. */
  lists: ('tools' | 'resources' | 'prompts')[];
  /** Listed now and not before. */
  added: CatalogNames;
  /** Listed before and not now. */
  removed: CatalogNames;
  /** Listed under the same name with another definition (description, schema, …). */
  changed: CatalogNames;
}

/** One event of a service's life, given to `onEvent`. @internal */
export type ServiceEvent =
  | (ServiceEventBase & { type: 'service.state'; from: ServiceState | undefined; to: ServiceState })
  | (ServiceEventBase & {
      type: 'service.ready';
      /** Milliseconds from the start call to ready (for a stdio service: from its admission). */
      startMs: number;
      /** Milliseconds a stdio service's start waited at the admission gate before it began (0: none). */
      queuedMs?: number;
      tools: number;
      resources: number;
      resourceTemplates: number;
      prompts: number;
      protocolVersion?: string;
      /** The protocol era: `legacy` (2025-11-25, `initialize`) or `modern` (2026-07-28+, `server/discover`). */
      era?: 'legacy' | 'modern';
      /**
       * How a stdio service's era was chosen: remembered for its digest, negotiated (first start), or
       * negotiated because the remembered verdict's file was damaged (then rewritten).
       */
      eraSource?: 'remembered' | 'negotiated' | 'damaged_cache';
    })
  | (ServiceEventBase & {
      type: 'service.failed';
      /** The error's code, message (which names the log path) and log path; never stderr content. */
      error: { code: string; message: string; log?: string };
    })
  | (ServiceEventBase & {
      type: 'service.exited';
      /** False when the service exited, died or lost its connection on its own. */
      expected: boolean;
      exitCode: number | null;
      signal: string | null;
      /** True when SIGKILL was needed. */
      forced: boolean;
      /** Pids of marked processes outside the group that were collected. */
      swept: number[];
      /** Pids still alive after SIGKILL and the wait (normally empty). */
      survivors: number[];
      /** Stdout lines skipped because they were not JSON-RPC. */
      pollutedLines: number;
      /** Stdout lines that claimed JSON-RPC but were invalid. */
      invalidLines: number;
    })
  | (ServiceEventBase & { type: 'service.catalog_changed' } & CatalogChange)
  | (ServiceEventBase & {
      type: 'service.catalog_refresh_failed';
      /** The lists the service said had changed; the catalog as it was stays in use. */
      lists: ('tools' | 'resources' | 'prompts')[];
      error: { code: string; message: string };
    })
  | (ServiceEventBase & {
      type: 'service.protocol_pollution';
      /** `first`: the warning at the first stray stdout line of the connection; `close`: the final count. */
      phase: 'first' | 'close';
      pollutedLines: number;
      invalidLines: number;
    });

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
