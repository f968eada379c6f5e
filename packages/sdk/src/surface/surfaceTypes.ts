/**
 * What an agent's surface is, as its rooms share it: the {@link Surface} interface, the entries it is
 * built from (live sessions and in-process services) and what it lists (routes, duplicates, list
 * changes). `surface.ts` builds one (`createSurface`) and re-exports these; the catalog and the dispatch
 * take them from here, so neither imports the module that imports them.
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
import type { CatalogChange } from '../sessions/serviceEvents.js';
import type { ServiceSession } from '../sessions/serviceSession.js';
import type { GateState } from './serviceGate.js';
import type { QuestionOptions } from '../sessions/elicitation.js';

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

/** Where a surface name leads. @public */
export interface SurfaceRoute {
  /** What the name is: a tool or a prompt. */
  kind: 'tool' | 'prompt';
  /** The name on the surface. */
  name: string;
  /** The service (alias) name it is listed under. */
  service: string;
  /** The name at the service. */
  sourceName: string;
}

/** A resource or template left out because an earlier service already lists the same URI (or template). @public */
export interface DuplicateListing {
  /** What was left out: a resource or a resource template. */
  kind: 'resource' | 'resourceTemplate';
  /** The resource URI or the template's URI template. */
  uri: string;
  /** The service whose listing was left out. */
  service: string;
  /** The service that keeps the URI. */
  keptBy: string;
}

/** One progress notification of a forwarded tool call, as the service sent it (without its token). @public */
export interface SurfaceProgress {
  /** The progress so far, as the service counts it. */
  progress: number;
  /** The total, when the service knows it. */
  total?: number;
  /** The service's message, if any. */
  message?: string;
}

/** Options of one request to the surface. @public */
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
  /**
   * For `callTool`: how a call a service answers with an MCP task is followed — its deadline, and who is
   * told the moment the task is accepted (the engine journals and checkpoints it). See surface/surfaceTasks.ts.
   */
  task?: SurfaceTaskOptions;
  /**
   * For `callTool`: who answers a question the service asks during the call (sessions/elicitation.ts).
   * With policy `model`, an `answer` argument the tool's input schema does not declare is taken out of the
   * arguments and given to the service as the answer.
   */
  question?: QuestionOptions;
}

/** The caller's part of following a tool call that became an MCP task. @public */
export interface SurfaceTaskOptions {
  /** Milliseconds from acceptance until the task is given up (`task_deadline`). Default 86,400,000 (24 h). */
  deadlineMs?: number;
  /** Told (and awaited) when the service accepts the call as a task, before the first poll. */
  onAccepted?: (accepted: {
    service: string;
    tool: string;
    taskId: string;
    era: 'legacy' | 'modern';
  }) => void | Promise<void>;
  /** Told after each poll with the task's status (a face's keep-alive). */
  onStatus?: (status: string, statusMessage: string | undefined) => void;
  /**
   * Re-attach instead of calling: the service accepted this call as this task before (an earlier host
   * journaled it); the task is polled to its end and the tool is not called again.
   */
  resume?: { taskId: string; era: 'legacy' | 'modern' };
}

/** Which lists of a surface changed, told to {@link Surface.onListChanged} listeners. @public */
export interface SurfaceListChange {
  /** True when the tool list changed. */
  tools: boolean;
  /** True when the resource or template lists changed. */
  resources: boolean;
  /** True when the prompt list changed. */
  prompts: boolean;
  /** The service whose catalog changed, and what changed in it (its own names). */
  service: string;
  /** What changed in that service's catalog. */
  change: CatalogChange;
}

/**
 * An agent's surface: {@link ServedAgent.surface} and {@link HarnessInput.surface} (inside the SDK, `createSurface` builds one).
 * @public
 */
export interface Surface {
  /** How the faces introduce the surface in `initialize`/`server/discover`. */
  readonly serverInfo: Implementation;
  /** Whether names are the service's own (the surface's `passthrough` option). */
  readonly passthrough: boolean;
  /** Every tool, under its surface name. */
  readonly tools: readonly Tool[];
  /** Every resource (the first service to list a URI keeps it). */
  readonly resources: readonly Resource[];
  /** Every resource template. */
  readonly resourceTemplates: readonly ResourceTemplateType[];
  /** Every prompt, under its surface name. */
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
