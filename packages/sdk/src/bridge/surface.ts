/**
 * An agent's MCP surface: every tool, resource, resource template and prompt of its services under one
 * catalog, each traceable to its service, with `tools/call` arguments checked before dispatch and every
 * forwarded request run under its service's limits (see `serviceGate.ts`). The surface is used in
 * process by built-in harnesses and served by the stdio and HTTP faces.
 */
import type {
  CallToolResult,
  GetPromptResult,
  Implementation,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  Tool,
} from '@modelcontextprotocol/server';
import { SdkError } from '../errors.js';
import type { CatalogChange } from '../services/serviceEvents.js';
import type { ServiceSession } from '../services/serviceSession.js';
import {
  type ForwardLimits,
  type GateEvent,
  type GateState,
  resolveForwardLimits,
  ServiceGate,
} from './serviceGate.js';
import { buildSurfaceCatalog, isSession, namesOf, type RemovedTool } from './surfaceCatalog.js';
import type { ToolFilter } from './toolFilter.js';
import { createDispatch } from './surfaceDispatch.js';

export { SERVICE_META_KEY, SOURCE_NAME_META_KEY } from './surfaceCatalog.js';
export { ERROR_META_KEY, refusalResult } from './surfaceDispatch.js';

/** What an in-process tool handler is given besides its arguments. */
export interface LocalToolExtra {
  /** Aborts when the caller cancels the call. */
  signal: AbortSignal;
  /** The name the tool is called by on the surface. */
  surfaceName: string;
}

/** One in-process tool: its listing and its handler. */
export interface LocalTool {
  tool: Tool;
  handler: (args: Record<string, unknown>, extra: LocalToolExtra) => CallToolResult | Promise<CallToolResult>;
}

/**
 * An in-process service (the engine's fixed catalog `scienceevolve`). Its tools are named like a
 * session's and their arguments are checked the same way, but they are not forwarded: no timeout,
 * in-flight cap, result limit or rest applies (a `delegate` call may rightly run for a long time).
 */
export interface LocalService {
  name: string;
  tools: readonly LocalTool[];
}

/** One service of a surface: a live session, or an in-process service. */
export type SurfaceEntry = ServiceSession | LocalService;

/** Options of {@link createSurface}. Limits apply to each session separately. */
export interface SurfaceOptions extends Partial<ForwardLimits> {
  /** Keep the one service's own names instead of `<service>__<name>`; allowed only with exactly one service name. Default false. */
  passthrough?: boolean;
  /** How the faces introduce themselves in `initialize`/`server/discover`. Default `{ name: 'scienceevolve-bridge', version: '0.1.0' }`. */
  serverInfo?: Implementation;
  /**
   * Service (alias) name → the tools it offers (`mcpServers[].tools`, SPEC §3.2). A withheld tool is not
   * listed and cannot be called. Default: every service offers every tool.
   */
  toolFilters?: ReadonlyMap<string, ToolFilter> | undefined;
  /** Receives rests and recoveries of services, for the invocation's events. */
  onEvent?: (event: GateEvent) => void;
  /** The clock, in epoch milliseconds (tests). Default `Date.now`. */
  now?: () => number;
}

/** Where a surface name leads. */
export interface SurfaceRoute {
  kind: 'tool' | 'prompt';
  /** The name on the surface. */
  name: string;
  /** The service (alias) name it is listed under. */
  service: string;
  /** The name at the service. */
  sourceName: string;
}

/** A resource or template left out because an earlier service already lists the same URI (or template). */
export interface DuplicateListing {
  kind: 'resource' | 'resourceTemplate';
  uri: string;
  /** The service whose listing was left out. */
  service: string;
  /** The service that keeps the URI. */
  keptBy: string;
}

/** One progress notification of a forwarded tool call, as the service sent it (without its token). */
export interface SurfaceProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** Options of one request to the surface. */
export interface SurfaceRequestOptions {
  /** Aborts the request (a forwarded request is cancelled at the service). */
  signal?: AbortSignal;
  /**
   * For `callTool`: asks the service for progress and is told each progress notification it sends. Each
   * one starts the forwarding timeout again, within the `maxTotalTimeoutMs` hard maximum.
   */
  onProgress?: (progress: SurfaceProgress) => void;
  /**
   * For `callTool`: the caller's own id of the call (a model's tool call id). The surface does not use it;
   * the engine journals it with the call's `tool.called` event, so `resume` can check a recorded result.
   */
  callId?: string;
}

/** Which lists of a surface changed, told to {@link Surface.onListChanged} listeners. */
export interface SurfaceListChange {
  tools: boolean;
  resources: boolean;
  prompts: boolean;
  /** The service whose catalog changed, and what changed in it (its own names). */
  service: string;
  change: CatalogChange;
}

/** An agent's surface. Build it with {@link createSurface}. */
export interface Surface {
  readonly serverInfo: Implementation;
  /** Whether names are the service's own (see {@link SurfaceOptions.passthrough}). */
  readonly passthrough: boolean;
  readonly tools: readonly Tool[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplateType[];
  readonly prompts: readonly Prompt[];
  /** Every tool and prompt name with its service and own name. */
  readonly routes: readonly SurfaceRoute[];
  /** Resources and templates left out as duplicates (the first service in entry order keeps a URI). */
  readonly duplicates: readonly DuplicateListing[];
  /** sha256 (hex) of the canonical JSON of `{ tools, resources, resourceTemplates, prompts }` as listed. */
  readonly digest: string;
  /**
   * Calls a tool by its surface name. Refusals of the bridge (arguments that do not match the input
   * schema, `service_busy`, `service_resting`, `forward_timeout`, `result_too_large`, `image_too_large`,
   * a service that did not answer) come back as a tool result with `isError: true`, the message as text and the error
   * under `_meta["scienceevolve/error"]`. Throws `unknown_tool` for a name the surface does not list,
   * and rethrows a JSON-RPC error the service itself answered.
   */
  callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options?: SurfaceRequestOptions,
  ): Promise<CallToolResult>;
  /** Reads a resource from the service that lists it (or whose template matches it). Throws an {@link SdkError} on refusal. */
  readResource(uri: string, options?: SurfaceRequestOptions): Promise<ReadResourceResult>;
  /** Gets a prompt by its surface name. Throws an {@link SdkError} on refusal. */
  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    options?: SurfaceRequestOptions,
  ): Promise<GetPromptResult>;
  /** The forwarding state of a service (by any of its names); undefined for an in-process or unknown service. */
  gateState(service: string): GateState | undefined;
  /**
   * Has `listener` told after each change of the surface's lists (a service announced a list change and
   * was listed again; the listings already read the new catalog). Returns the function that stops it.
   */
  onListChanged(listener: (change: SurfaceListChange) => void): () => void;
  /** Stops following the services' list changes (the listings stay as they are). Idempotent. */
  close(): void;
}

/**
 * `surface` with its `callTool` replaced by `callTool`; every listing is still read live from `surface`
 * (a spread copy would freeze the listings as they were and miss later list changes).
 */
export function withCallTool(surface: Surface, callTool: Surface['callTool']): Surface {
  return {
    get serverInfo() {
      return surface.serverInfo;
    },
    get passthrough() {
      return surface.passthrough;
    },
    get tools() {
      return surface.tools;
    },
    get resources() {
      return surface.resources;
    },
    get resourceTemplates() {
      return surface.resourceTemplates;
    },
    get prompts() {
      return surface.prompts;
    },
    get routes() {
      return surface.routes;
    },
    get duplicates() {
      return surface.duplicates;
    },
    get digest() {
      return surface.digest;
    },
    callTool,
    readResource: (uri, options) => surface.readResource(uri, options),
    getPrompt: (name, args, options) => surface.getPrompt(name, args, options),
    gateState: (service) => surface.gateState(service),
    onListChanged: (listener) => surface.onListChanged(listener),
    close: () => surface.close(),
  };
}

/**
 * Builds an agent's surface from its live sessions and in-process services, in the order given (the
 * order decides only which service keeps a duplicated resource URI). A session serving several aliases
 * appears once under each alias name; its limits are shared.
 *
 * @throws SdkError `usage` when `passthrough` is set and the entries do not have exactly one service name,
 *   or a forwarding limit is out of its range; `duplicate_name` when two entries share a service name.
 */
export function createSurface(entries: readonly SurfaceEntry[], options: SurfaceOptions = {}): Surface {
  const limits = resolveForwardLimits(options);
  const passthrough = options.passthrough ?? false;
  const serviceNames = entries.flatMap(namesOf);
  if (passthrough && serviceNames.length !== 1) {
    throw new SdkError(
      'usage',
      `passthrough needs exactly one service, but the surface has ${serviceNames.length} (${serviceNames.join(', ') || 'none'})`,
      {
        remedy: 'Serve without --passthrough, or serve an agent that has exactly one service.',
        data: { services: serviceNames },
      },
    );
  }
  const duplicateNames = serviceNames.filter((name, i) => serviceNames.indexOf(name) !== i);
  if (duplicateNames.length > 0) {
    throw new SdkError('duplicate_name', `service name "${duplicateNames[0]}" appears twice on one surface`, {
      remedy: 'Give each service of the agent its own name.',
      data: { service: duplicateNames[0] },
    });
  }

  // One gate per session, shared by its aliases and kept across catalog builds.
  const gates = new Map<string, ServiceGate>();
  const gateOf = (session: ServiceSession): ServiceGate => {
    let gate = gates.get(session.name);
    if (gate === undefined) {
      gate = new ServiceGate(session.name, limits, { onEvent: options.onEvent, now: options.now });
      for (const name of [session.name, ...namesOf(session)]) gates.set(name, gate);
    }
    return gate;
  };
  // The listings are read through getters and dispatch reads the catalog once per request, so a catalog
  // built again (from refreshed service catalogs) replaces this one in one assignment: a call in flight
  // finishes against the catalog it started with.
  let catalog = buildSurfaceCatalog(entries, { passthrough, gateOf, toolFilters: options.toolFilters });
  // Surface names of tools that a list change took away (and no later one brought back).
  const removedTools = new Map<string, RemovedTool>();
  const dispatch = createDispatch(() => catalog, removedTools);
  const listListeners = new Set<(change: SurfaceListChange) => void>();
  const stopFollowing: (() => void)[] = [];
  for (const entry of entries) {
    if (!isSession(entry) || entry.onCatalogChanged === undefined) continue;
    stopFollowing.push(
      entry.onCatalogChanged((change) => {
        const before = catalog;
        const after = buildSurfaceCatalog(entries, { passthrough, gateOf, toolFilters: options.toolFilters });
        const at = new Date().toISOString();
        for (const [name, target] of before.toolTargets) {
          if (!after.toolTargets.has(name)) {
            removedTools.set(name, { service: target.route.service, sourceName: target.route.sourceName, at });
          }
        }
        for (const name of after.toolTargets.keys()) removedTools.delete(name);
        catalog = after;
        const listChange: SurfaceListChange = {
          tools: before.digestOf.tools !== after.digestOf.tools,
          resources:
            before.digestOf.resources !== after.digestOf.resources ||
            before.digestOf.resourceTemplates !== after.digestOf.resourceTemplates,
          prompts: before.digestOf.prompts !== after.digestOf.prompts,
          service: entry.name,
          change,
        };
        for (const listener of [...listListeners]) {
          try {
            listener(listChange);
          } catch {
            // A face that cannot announce the change does not stop the others.
          }
        }
      }),
    );
  }

  return {
    serverInfo: options.serverInfo ?? { name: 'scienceevolve-bridge', version: '0.1.0' },
    passthrough,
    get tools() {
      return catalog.tools;
    },
    get resources() {
      return catalog.resources;
    },
    get resourceTemplates() {
      return catalog.resourceTemplates;
    },
    get prompts() {
      return catalog.prompts;
    },
    get routes() {
      return catalog.routes;
    },
    get duplicates() {
      return catalog.duplicates;
    },
    get digest() {
      return catalog.digest;
    },
    callTool: dispatch.callTool,
    readResource: dispatch.readResource,
    getPrompt: dispatch.getPrompt,
    gateState(service) {
      return gates.get(service)?.currentState;
    },
    onListChanged(listener) {
      listListeners.add(listener);
      return () => {
        listListeners.delete(listener);
      };
    },
    close() {
      for (const stop of stopFollowing.splice(0)) stop();
      listListeners.clear();
    },
  };
}
