/**
 * The catalog room of a surface: what an agent's services offer, under surface names, each item traceable
 * to its service, with the routing tables the dispatch room reads (which session and gate serve a tool,
 * a prompt, a resource URI). Built from the sessions' catalogs as listed; building it again from fresh
 * catalogs yields a new catalog while the gates (owned by the surface) stay.
 */
import { createHash } from 'node:crypto';
import type { Prompt, Resource, ResourceTemplateType, Tool } from '@modelcontextprotocol/server';
import { UriTemplate } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import stableStringify from 'fast-json-stable-stringify';
import { SdkError } from '../errors.js';
import { redactUrlsIn } from '../redact.js';
import type { ServiceSession } from '../sessions/serviceSession.js';
import type { ServiceGate } from './serviceGate.js';
import { filterTools, type ToolFilter } from './toolFilter.js';
import type { DuplicateListing, LocalTool, SurfaceEntry, SurfaceRoute } from './surfaceTypes.js';
import { assignSurfaceNames } from './surfaceNames.js';

/** The `_meta` key naming the service a listed item comes from. */
export const SERVICE_META_KEY = 'scienceevolve/service';
/** The `_meta` key holding a tool's or prompt's own name at its service. */
export const SOURCE_NAME_META_KEY = 'scienceevolve/name';

/** Where a tool call goes: a forwarded session under its gate, or an in-process handler. */
export interface ToolTarget {
  route: SurfaceRoute;
  tool: Tool;
  /** The validator of the tool's service (one per service: a schema `$id` is cached per validator). */
  validatorSource: AjvJsonSchemaValidator;
  /** The compiled check of the tool's input schema, made at its first call. */
  validate?: (input: unknown) => { valid: boolean; errorMessage?: string };
  session?: { session: ServiceSession; gate: ServiceGate };
  local?: LocalTool;
}

/** Where a prompt request goes. */
export interface PromptTarget {
  route: SurfaceRoute;
  session: ServiceSession;
  gate: ServiceGate;
}

/** The session that serves a resource URI, under the name it is listed by. */
export interface ResourceOwner {
  service: string;
  session: ServiceSession;
  gate: ServiceGate;
}

/** One build of a surface's catalog: the listings and the routing tables. */
export interface SurfaceCatalog {
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplateType[];
  prompts: Prompt[];
  routes: SurfaceRoute[];
  duplicates: DuplicateListing[];
  /** sha256 (hex) of the canonical JSON of `{ tools, resources, resourceTemplates, prompts }`. */
  digest: string;
  /** sha256 (hex) of each list's canonical JSON, to tell which lists a rebuild changed. */
  digestOf: { tools: string; resources: string; resourceTemplates: string; prompts: string };
  toolTargets: Map<string, ToolTarget>;
  promptTargets: Map<string, PromptTarget>;
  /** The owner of a listed URI, or of the first template that matches it. */
  listedOwnerFor(uri: string): ResourceOwner | undefined;
  /** Whether a service lists `uri` itself. */
  lists(uri: string): boolean;
  /** The one session that offers resources at all, when there is exactly one. */
  soleResourceOwner: ResourceOwner | undefined;
}

/** A surface tool name a list change took away: its service, its own name there, and when (ISO 8601). */
export interface RemovedTool {
  service: string;
  sourceName: string;
  at: string;
}

/** Whether an entry is a live session (it has a catalog) rather than an in-process service. */
export function isSession(entry: SurfaceEntry): entry is ServiceSession {
  return 'catalog' in entry;
}

/** Every name an entry serves under (a session's aliases, or the in-process service's name). */
export function namesOf(entry: SurfaceEntry): readonly string[] {
  return isSession(entry) ? (entry.aliases.length > 0 ? entry.aliases : [entry.name]) : [entry.name];
}

function withSource<T extends { _meta?: Record<string, unknown> }>(item: T, service: string, sourceName?: string): T {
  return {
    ...item,
    _meta: {
      ...(item._meta ?? {}),
      [SERVICE_META_KEY]: service,
      ...(sourceName === undefined ? {} : { [SOURCE_NAME_META_KEY]: sourceName }),
    },
  };
}

/**
 * Builds the catalog of `entries` in their order (the order decides only which service keeps a
 * duplicated resource URI). Tools and prompts are named by {@link assignSurfaceNames}; a session serving
 * several aliases lists its tools and prompts under each alias, its resources once under its name.
 *
 * @param gateOf the gate of a session (the surface keeps one per session, shared by its aliases)
 */
export function buildSurfaceCatalog(
  entries: readonly SurfaceEntry[],
  options: {
    passthrough: boolean;
    gateOf: (session: ServiceSession) => ServiceGate;
    /** Service (alias) name → its tool filter; a name without one offers every tool. */
    toolFilters?: ReadonlyMap<string, ToolFilter> | undefined;
  },
): SurfaceCatalog {
  const { passthrough, gateOf } = options;
  const routes: SurfaceRoute[] = [];

  // One validator per service: a schema `$id` is cached by the validator, so services must not share one.
  const validators = new Map<SurfaceEntry, AjvJsonSchemaValidator>();
  const validatorOf = (entry: SurfaceEntry): AjvJsonSchemaValidator => {
    let validator = validators.get(entry);
    if (validator === undefined) {
      validator = new AjvJsonSchemaValidator();
      validators.set(entry, validator);
    }
    return validator;
  };

  // Tools.
  type PendingTool = Omit<ToolTarget, 'route'> & { service: string; item: Tool };
  const pendingTools: PendingTool[] = [];
  for (const entry of entries) {
    for (const service of namesOf(entry)) {
      if (isSession(entry)) {
        const session = { session: entry, gate: gateOf(entry) };
        for (const tool of filterTools(entry.catalog.tools, options.toolFilters?.get(service))) {
          pendingTools.push({ service, item: tool, tool, validatorSource: validatorOf(entry), session });
        }
      } else {
        for (const local of entry.tools) {
          const { tool } = local;
          pendingTools.push({ service, item: tool, tool, validatorSource: validatorOf(entry), local });
        }
      }
    }
  }
  const toolTargets = new Map<string, ToolTarget>();
  const tools = nameForSurface('tool', pendingTools, passthrough, routes, (pending, route) =>
    toolTargets.set(route.name, { ...pending, route }),
  );

  // Prompts.
  const pendingPrompts: { service: string; item: Prompt; session: ServiceSession }[] = [];
  for (const entry of entries) {
    if (!isSession(entry)) continue;
    for (const service of namesOf(entry)) {
      for (const item of entry.catalog.prompts) pendingPrompts.push({ service, item, session: entry });
    }
  }
  const promptTargets = new Map<string, PromptTarget>();
  const prompts = nameForSurface('prompt', pendingPrompts, passthrough, routes, ({ session }, route) =>
    promptTargets.set(route.name, { route, session, gate: gateOf(session) }),
  );

  const listed = listResources(entries, gateOf);
  const sha256 = (value: unknown) => createHash('sha256').update(stableStringify(value)).digest('hex');
  const digest = sha256({ tools, resources: listed.resources, resourceTemplates: listed.resourceTemplates, prompts });
  const digestOf = {
    tools: sha256(tools),
    resources: sha256(listed.resources),
    resourceTemplates: sha256(listed.resourceTemplates),
    prompts: sha256(prompts),
  };

  return {
    tools,
    resources: listed.resources,
    resourceTemplates: listed.resourceTemplates,
    prompts,
    routes,
    duplicates: listed.duplicates,
    digest,
    digestOf,
    toolTargets,
    promptTargets,
    listedOwnerFor: listed.ownerFor,
    lists: (uri) => listed.owners.has(uri),
    soleResourceOwner: listed.resourceSessions.length === 1 ? listed.resourceSessions[0] : undefined,
  };
}

/**
 * Names tools or prompts for the surface ({@link assignSurfaceNames}: `<service>__<name>`, shortened or
 * disambiguated where needed), records each one's route, and returns them as listed: renamed, with their
 * service and own name under `_meta`. `route` is told each pending item with its route, in order.
 */
function nameForSurface<P extends { service: string; item: { name: string; _meta?: Record<string, unknown> } }>(
  kind: SurfaceRoute['kind'],
  pending: readonly P[],
  passthrough: boolean,
  routes: SurfaceRoute[],
  route: (pending: P, route: SurfaceRoute) => void,
): P['item'][] {
  const names = assignSurfaceNames(
    pending.map((p) => ({ service: p.service, name: p.item.name })),
    { passthrough },
  );
  return pending.map((p, i) => {
    const named: SurfaceRoute = { kind, name: names[i]!, service: p.service, sourceName: p.item.name };
    routes.push(named);
    route(p, named);
    return withSource({ ...p.item, name: named.name }, p.service, p.item.name);
  });
}

/**
 * Resources and templates keep their URIs: the first service (in entry order) listing a URI owns it. A
 * session's aliases share its resources, so they are listed once, under the session's name.
 */
function listResources(entries: readonly SurfaceEntry[], gateOf: (session: ServiceSession) => ServiceGate) {
  const owners = new Map<string, ResourceOwner>();
  const templateOwners: { template: UriTemplate; owner: ResourceOwner }[] = [];
  const templateKeys = new Map<string, string>();
  const resources: Resource[] = [];
  const resourceTemplates: ResourceTemplateType[] = [];
  const duplicates: DuplicateListing[] = [];
  const resourceSessions: ResourceOwner[] = [];
  for (const entry of entries) {
    if (!isSession(entry)) continue;
    const owner: ResourceOwner = { service: entry.name, session: entry, gate: gateOf(entry) };
    const { catalog } = entry;
    if (catalog.resources.length > 0 || catalog.resourceTemplates.length > 0 || catalog.capabilities?.resources) {
      resourceSessions.push(owner);
    }
    for (const resource of catalog.resources) {
      const kept = owners.get(resource.uri);
      if (kept !== undefined) {
        if (kept.session !== entry)
          duplicates.push({ kind: 'resource', uri: resource.uri, service: entry.name, keptBy: kept.service });
        continue;
      }
      owners.set(resource.uri, owner);
      resources.push(withSource(resource, entry.name));
    }
    for (const template of catalog.resourceTemplates) {
      const keptBy = templateKeys.get(template.uriTemplate);
      if (keptBy !== undefined) {
        if (keptBy !== entry.name)
          duplicates.push({ kind: 'resourceTemplate', uri: template.uriTemplate, service: entry.name, keptBy });
        continue;
      }
      templateKeys.set(template.uriTemplate, entry.name);
      resourceTemplates.push(withSource(template, entry.name));
      try {
        templateOwners.push({ template: new UriTemplate(template.uriTemplate), owner });
      } catch {
        // A template the SDK cannot parse is still listed; reads of its URIs fall back to the other rules.
      }
    }
  }
  const ownerFor = (uri: string): ResourceOwner | undefined =>
    owners.get(uri) ?? templateOwners.find((t) => t.template.match(uri) !== null)?.owner;
  return { resources, resourceTemplates, duplicates, owners, ownerFor, resourceSessions };
}

/** The `unknown_reference` error for a URI no service of the surface lists. */
export function unknownResource(uri: string): SdkError {
  // A URI may carry credentials (user information, a signed query): shown as every output shows a URL.
  const shown = redactUrlsIn(uri);
  return new SdkError('unknown_reference', `no service of this agent lists resource "${shown}"`, {
    remedy: 'Read a URI from resources/list, or one that matches a template from resources/templates/list.',
    data: { uri: shown },
  });
}
