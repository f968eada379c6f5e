/**
 * An agent's MCP surface: every tool, resource, resource template and prompt of its services under one
 * catalog, each traceable to its service, with `tools/call` arguments checked before dispatch and every
 * forwarded request run under its service's limits (see `serviceGate.ts`). The surface is used in
 * process by built-in harnesses and served by the stdio and HTTP faces.
 */
import type { Implementation } from '@modelcontextprotocol/server';
import { SdkError } from '../errors.js';
import type { ServiceSession } from '../sessions/serviceSession.js';
import { type ForwardLimits, type GateEvent, resolveForwardLimits, ServiceGate } from './serviceGate.js';
import { buildSurfaceCatalog, isSession, namesOf, type RemovedTool } from './surfaceCatalog.js';
import type { ToolFilter } from './toolFilter.js';
import { createDispatch } from './surfaceDispatch.js';
import type { Surface, SurfaceEntry, SurfaceListChange } from './surfaceTypes.js';

export { SERVICE_META_KEY, SOURCE_NAME_META_KEY } from './surfaceCatalog.js';
export { ERROR_META_KEY, refusalResult } from './surfaceDispatch.js';

export type {
  DuplicateListing,
  LocalService,
  LocalTool,
  LocalToolExtra,
  Surface,
  SurfaceEntry,
  SurfaceListChange,
  SurfaceProgress,
  SurfaceRequestOptions,
  SurfaceRoute,
} from './surfaceTypes.js';

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
