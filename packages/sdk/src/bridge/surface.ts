/**
 * An agent's MCP surface: every tool, resource, resource template and prompt of its services under one
 * catalog, each traceable to its service, with `tools/call` arguments checked before dispatch and every
 * forwarded request run under its service's limits (see `serviceGate.ts`). The surface is used in
 * process by built-in harnesses and served by the stdio and HTTP faces.
 */
import { createHash } from 'node:crypto';
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
import { UriTemplate } from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import stableStringify from 'fast-json-stable-stringify';
import { ERROR_CODES, type ErrorCode, SdkError, isSdkError } from '../errors.js';
import type { ServiceSession } from '../services/serviceSession.js';
import {
  type ForwardLimits,
  resolveForwardLimits,
  type GateEvent,
  type GateState,
  ServiceGate,
  isServiceAnswer,
} from './serviceGate.js';
import { assignSurfaceNames } from './surfaceNames.js';

/** The `_meta` key naming the service a listed item comes from. */
export const SERVICE_META_KEY = 'scienceevolve/service';
/** The `_meta` key holding a tool's or prompt's own name at its service. */
export const SOURCE_NAME_META_KEY = 'scienceevolve/name';
/** The `_meta` key of a bridge refusal in a tool result: `{ code, message, remedy?, data? }`. */
export const ERROR_META_KEY = 'scienceevolve/error';

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

/** Options of one request to the surface. */
export interface SurfaceRequestOptions {
  /** Aborts the request (a forwarded request is cancelled at the service). */
  signal?: AbortSignal;
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
   * schema, `service_busy`, `service_resting`, `forward_timeout`, `result_too_large`, a service that
   * did not answer) come back as a tool result with `isError: true`, the message as text and the error
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
}

interface ToolTarget {
  route: SurfaceRoute;
  tool: Tool;
  validatorSource: AjvJsonSchemaValidator;
  validate?: (input: unknown) => { valid: boolean; errorMessage?: string };
  session?: { session: ServiceSession; gate: ServiceGate };
  local?: LocalTool;
}

interface PromptTarget {
  route: SurfaceRoute;
  session: ServiceSession;
  gate: ServiceGate;
}

interface ResourceOwner {
  service: string;
  session: ServiceSession;
  gate: ServiceGate;
}

function isSession(entry: SurfaceEntry): entry is ServiceSession {
  return 'catalog' in entry;
}

function namesOf(entry: SurfaceEntry): readonly string[] {
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

/** A tool result carrying a bridge refusal. */
export function refusalResult(error: SdkError): CallToolResult {
  const text = error.remedy === undefined ? error.message : `${error.message}. ${error.remedy}`;
  return { content: [{ type: 'text', text }], isError: true, _meta: { [ERROR_META_KEY]: error.toJSON() } };
}

const REFUSED_AS_TOOL_ERROR: ReadonlySet<string> = new Set([
  'service_busy',
  'service_resting',
  'forward_timeout',
  'result_too_large',
]);

/**
 * Builds an agent's surface from its live sessions and in-process services, in the order given (the
 * order decides only which service keeps a duplicated resource URI). A session serving several aliases
 * appears once under each alias name; its limits are shared.
 *
 * @throws SdkError `usage` when `passthrough` is set and the entries do not have exactly one service name.
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

  const gates = new Map<string, ServiceGate>();
  const validators = new Map<SurfaceEntry, AjvJsonSchemaValidator>();
  const gateOf = (entry: ServiceSession): ServiceGate => {
    let gate = gates.get(entry.name);
    if (gate === undefined) {
      gate = new ServiceGate(entry.name, limits, { onEvent: options.onEvent, now: options.now });
      gates.set(entry.name, gate);
      for (const alias of namesOf(entry)) gates.set(alias, gate);
    }
    return gate;
  };
  // One validator per service: a schema `$id` is cached by the engine, so services must not share one.
  const validatorOf = (entry: SurfaceEntry): AjvJsonSchemaValidator => {
    let validator = validators.get(entry);
    if (validator === undefined) {
      validator = new AjvJsonSchemaValidator();
      validators.set(entry, validator);
    }
    return validator;
  };

  // Tools.
  type PendingTool = Omit<ToolTarget, 'route'> & { service: string };
  const pendingTools: PendingTool[] = [];
  for (const entry of entries) {
    for (const service of namesOf(entry)) {
      if (isSession(entry)) {
        for (const tool of entry.catalog.tools) {
          pendingTools.push({
            service,
            tool,
            validatorSource: validatorOf(entry),
            session: { session: entry, gate: gateOf(entry) },
          });
        }
      } else {
        for (const local of entry.tools) {
          pendingTools.push({ service, tool: local.tool, validatorSource: validatorOf(entry), local });
        }
      }
    }
  }
  const toolNames = assignSurfaceNames(
    pendingTools.map((p) => ({ service: p.service, name: p.tool.name })),
    { passthrough },
  );
  const toolTargets = new Map<string, ToolTarget>();
  const tools: Tool[] = [];
  const routes: SurfaceRoute[] = [];
  pendingTools.forEach((pending, i) => {
    const name = toolNames[i]!;
    const route: SurfaceRoute = { kind: 'tool', name, service: pending.service, sourceName: pending.tool.name };
    toolTargets.set(name, { ...pending, route });
    tools.push(withSource({ ...pending.tool, name }, pending.service, pending.tool.name));
    routes.push(route);
  });

  // Prompts.
  const pendingPrompts: { service: string; prompt: Prompt; session: ServiceSession }[] = [];
  for (const entry of entries) {
    if (!isSession(entry)) continue;
    for (const service of namesOf(entry)) {
      for (const prompt of entry.catalog.prompts) pendingPrompts.push({ service, prompt, session: entry });
    }
  }
  const promptNames = assignSurfaceNames(
    pendingPrompts.map((p) => ({ service: p.service, name: p.prompt.name })),
    { passthrough },
  );
  const promptTargets = new Map<string, PromptTarget>();
  const prompts: Prompt[] = [];
  pendingPrompts.forEach((pending, i) => {
    const name = promptNames[i]!;
    const route: SurfaceRoute = { kind: 'prompt', name, service: pending.service, sourceName: pending.prompt.name };
    promptTargets.set(name, { route, session: pending.session, gate: gateOf(pending.session) });
    prompts.push(withSource({ ...pending.prompt, name }, pending.service, pending.prompt.name));
    routes.push(route);
  });

  // Resources and templates keep their URIs: the first service (in entry order) listing a URI owns it.
  // A session's aliases share its resources, so they are listed once, under the session's name.
  const resourceOwners = new Map<string, ResourceOwner>();
  const templateOwners: { template: UriTemplate; owner: ResourceOwner }[] = [];
  const templateKeys = new Map<string, string>();
  const resources: Resource[] = [];
  const resourceTemplates: ResourceTemplateType[] = [];
  const duplicates: DuplicateListing[] = [];
  const resourceSessions: ResourceOwner[] = [];
  for (const entry of entries) {
    if (!isSession(entry)) continue;
    const owner: ResourceOwner = { service: entry.name, session: entry, gate: gateOf(entry) };
    if (
      entry.catalog.resources.length > 0 ||
      entry.catalog.resourceTemplates.length > 0 ||
      entry.catalog.capabilities?.resources
    ) {
      resourceSessions.push(owner);
    }
    for (const resource of entry.catalog.resources) {
      const kept = resourceOwners.get(resource.uri);
      if (kept !== undefined) {
        if (kept.session !== entry)
          duplicates.push({ kind: 'resource', uri: resource.uri, service: entry.name, keptBy: kept.service });
        continue;
      }
      resourceOwners.set(resource.uri, owner);
      resources.push(withSource(resource, entry.name));
    }
    for (const template of entry.catalog.resourceTemplates) {
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
  // URIs first seen in a tool result (resource links) are routed to the service that returned them.
  const learnedOwners = new Map<string, ResourceOwner>();

  const digest = createHash('sha256')
    .update(stableStringify({ tools, resources, resourceTemplates, prompts }))
    .digest('hex');

  const resourceOwnerFor = (uri: string): ResourceOwner => {
    const owner =
      resourceOwners.get(uri) ??
      templateOwners.find((t) => t.template.match(uri) !== null)?.owner ??
      learnedOwners.get(uri) ??
      (resourceSessions.length === 1 ? resourceSessions[0] : undefined);
    if (owner === undefined) {
      throw new SdkError('unknown_reference', `no service of this agent lists resource "${uri}"`, {
        remedy: 'Read a URI from resources/list, or one that matches a template from resources/templates/list.',
        data: { uri },
      });
    }
    return owner;
  };

  const learnLinks = (result: CallToolResult, owner: ResourceOwner): void => {
    for (const block of result.content ?? []) {
      if (block.type === 'resource_link' && !resourceOwners.has(block.uri) && !learnedOwners.has(block.uri)) {
        learnedOwners.set(block.uri, owner);
      }
    }
  };

  return {
    serverInfo: options.serverInfo ?? { name: 'scienceevolve-bridge', version: '0.1.0' },
    passthrough,
    tools,
    resources,
    resourceTemplates,
    prompts,
    routes,
    duplicates,
    digest,

    async callTool(name, args, requestOptions = {}) {
      const target = toolTargets.get(name);
      if (target === undefined) {
        throw new SdkError('unknown_tool', `this surface has no tool "${name}"`, {
          remedy: 'Call a tool by a name from tools/list.',
          data: { tool: name },
        });
      }
      const input = args ?? {};
      const refusal = checkArguments(target, input);
      if (refusal !== undefined) return refusalResult(refusal);
      const signal = requestOptions.signal ?? new AbortController().signal;
      if (target.local !== undefined) {
        try {
          return await target.local.handler(input, { signal, surfaceName: name });
        } catch (error) {
          if (signal.aborted) throw error;
          return refusalResult(asSdkError(error, `tool "${name}" failed`));
        }
      }
      const { session, gate } = target.session!;
      try {
        const result = await gate.run(
          `tool "${target.route.sourceName}"`,
          (forward) => session.callTool(target.route.sourceName, input, forward),
          requestOptions.signal,
        );
        learnLinks(result, { service: session.name, session, gate });
        return result;
      } catch (error) {
        if (requestOptions.signal?.aborted) throw error;
        if (isSdkError(error) && REFUSED_AS_TOOL_ERROR.has(error.code)) return refusalResult(error as SdkError);
        if (isServiceAnswer(error)) throw error;
        return refusalResult(
          asSdkError(error, `service "${target.route.service}" did not answer tool "${target.route.sourceName}"`),
        );
      }
    },

    async readResource(uri, requestOptions = {}) {
      const owner = resourceOwnerFor(uri);
      return owner.gate.run(
        `resource "${uri}"`,
        (forward) => owner.session.readResource(uri, forward),
        requestOptions.signal,
      );
    },

    async getPrompt(name, args, requestOptions = {}) {
      const target = promptTargets.get(name);
      if (target === undefined) {
        throw new SdkError('unknown_reference', `this surface has no prompt "${name}"`, {
          remedy: 'Get a prompt by a name from prompts/list.',
          data: { prompt: name },
        });
      }
      return target.gate.run(
        `prompt "${target.route.sourceName}"`,
        (forward) => target.session.getPrompt(target.route.sourceName, args, forward),
        requestOptions.signal,
      );
    },

    gateState(service) {
      return gates.get(service)?.currentState;
    },
  };
}

function checkArguments(target: ToolTarget, input: Record<string, unknown>): SdkError | undefined {
  if (target.validate === undefined) {
    try {
      const validator = target.validatorSource.getValidator(target.tool.inputSchema as never);
      target.validate = (value) => validator(value);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return new SdkError(
        'invalid_arguments',
        `the input schema of tool "${target.route.name}" cannot be used to check arguments: ${reason}`,
        {
          remedy:
            'Fix the tool\'s inputSchema at its service (JSON Schema 2020-12, or draft-07 declared by "$schema").',
          data: { tool: target.route.name },
        },
      );
    }
  }
  const outcome = target.validate(input);
  if (outcome.valid) return undefined;
  return new SdkError(
    'invalid_arguments',
    `arguments of tool "${target.route.name}" do not match its input schema: ${outcome.errorMessage ?? 'invalid'}`,
    {
      remedy: 'Call the tool again with arguments that match its inputSchema from tools/list.',
      data: { tool: target.route.name },
    },
  );
}

function asSdkError(error: unknown, context: string): SdkError {
  if (error instanceof SdkError) return error;
  if (isSdkError(error)) {
    const e = error as SdkError;
    return new SdkError(e.code, `${context}: ${e.message}`, { remedy: e.remedy, data: e.data, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const sdkCode: ErrorCode =
    typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code) ? (code as ErrorCode) : 'internal';
  return new SdkError(sdkCode, `${context}: ${message}`, { cause: error });
}
