/**
 * The fields of a service's events, written once: a session gives them to its `onEvent` listener
 * (`sessions/serviceEvents.ts`) and the engine journals them under the invocation whose attempt started the
 * service (`runEvents.ts`, which adds the invocation's ids). Events carry ids, numbers and paths, never log
 * content or secret values (SPEC §11).
 */
import * as z from 'zod';
import { type CatalogNames, CatalogNamesSchema, ShortErrorSchema, count, pid } from './records.js';
import type { Assert, SameShape } from './sameShape.js';
import { ListNameSchema, SandboxReasonSchema, ServiceKindSchema } from './states.js';

/** Whether a project service runs sandboxed, and why (`orchestration.sandbox`). */
export const ServiceSandboxFieldsSchema = z.object({
  sandboxed: z.boolean(),
  reason: SandboxReasonSchema,
  network: z.boolean(),
});

/** Fields every service event has (besides its time and type). */
export const ServiceFieldsSchema = z.object({
  /** The service name (the first alias). */
  service: z.string(),
  kind: ServiceKindSchema,
  /** The definition a project service runs. */
  definition: z.string().optional(),
  /** The definition's digest. */
  digest: z.string().optional(),
  /** The leader's pid (project services, once spawned). */
  pid: pid.optional(),
  /** The process group id (= the leader's pid). */
  pgid: pid.optional(),
  /** The stderr log file (project services): its path, never its content. */
  log: z.string().optional(),
  /** The endpoint without credentials or query (remote services). */
  url: z.string().optional(),
  /** Whether a project service runs sandboxed, and why (`orchestration.sandbox`). */
  sandbox: ServiceSandboxFieldsSchema.optional(),
});

/** The lists a service said had changed, in the order heard. */
const ListsSchema = z.array(ListNameSchema);

/** The fields of each service event beyond {@link ServiceFieldsSchema}, by its `type`. */
export const ServiceEventBodySchemas = {
  /** A service is listed and serving. */
  'service.ready': z.object({
    /** Milliseconds from the start (for a project service: from its admission) to ready. */
    startMs: z.number().nonnegative(),
    /** Milliseconds a project service's start waited at the admission gate before it began. */
    queuedMs: z.number().nonnegative().optional(),
    tools: count,
    resources: count,
    resourceTemplates: count,
    prompts: count,
    protocolVersion: z.string().optional(),
  }),
  /** A service could not start, or died while ready. */
  'service.failed': z.object({
    /** The error's code, message (which names the log path) and log path; never stderr content. */
    error: z.object({ code: z.string(), message: z.string(), log: z.string().optional() }),
  }),
  /** A service is gone. */
  'service.exited': z.object({
    /** False when the service exited, died or lost its connection on its own. */
    expected: z.boolean(),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    /** True when SIGKILL was needed. */
    forced: z.boolean(),
    /** Pids of marked processes outside the group that were collected. */
    swept: z.array(pid),
    /** Pids still alive after SIGKILL and the wait (normally empty). */
    survivors: z.array(pid),
    /** Stdout lines skipped because they were not JSON-RPC. */
    pollutedLines: count,
    /** Stdout lines that claimed JSON-RPC but were invalid. */
    invalidLines: count,
  }),
  /** A service wrote lines on stdout that are not JSON-RPC. */
  'service.protocol_pollution': z.object({
    /** `first`: the warning at the first stray stdout line of the connection; `close`: the final count. */
    phase: z.enum(['first', 'close']),
    pollutedLines: count,
    invalidLines: count,
  }),
  /**
   * A service announced a list change (`notifications/…/list_changed`), was listed again, and its catalog
   * changed: what was added, removed, or listed again with another definition (its own names).
   */
  'service.catalog_changed': z.object({
    /** The lists the service said had changed (`tools`, `resources`, `prompts`), in the order heard. */
    lists: ListsSchema,
    added: CatalogNamesSchema,
    removed: CatalogNamesSchema,
    changed: CatalogNamesSchema,
  }),
  /** A service announced a list change but listing it again failed; its catalog as it was stays in use. */
  'service.catalog_refresh_failed': z.object({
    /** The lists the service said had changed. */
    lists: ListsSchema,
    error: ShortErrorSchema,
  }),
} as const;

/** The type names of the service events. */
export type ServiceEventType = keyof typeof ServiceEventBodySchemas;

/** The fields of one service event beyond the common ones. */
export type ServiceEventBody<T extends ServiceEventType> = z.infer<(typeof ServiceEventBodySchemas)[T]>;

/** The common fields of a service event. */
export type ServiceFields = z.infer<typeof ServiceFieldsSchema>;

/**
 * What one re-listing after `notifications/…/list_changed` changed in a service's catalog: what was
 * added, removed, or is listed under the same name with another definition (description, schema, …).
 * The body of the `service.catalog_changed` event, and what a surface's list-change listener is given.
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

// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, used by being compiled.
type CatalogChangeMatchesSchema = Assert<SameShape<CatalogChange, ServiceEventBody<'service.catalog_changed'>>>;
