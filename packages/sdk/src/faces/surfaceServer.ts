/**
 * The MCP server both faces serve: a low-level v2 `Server` whose request handlers answer from a
 * {@link Surface}. One instance is made per connection (stdio) or per request (HTTP) by the SDK's
 * serving entries; the surface itself is shared.
 */
import { continueTraceOfMeta } from '../events/telemetry.js';
import { type CallToolResult, ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { isSdkError, type SdkError } from '../errors.js';
import type { Surface, SurfaceListChange, SurfaceProgress, SurfaceRequestOptions } from '../surface/surface.js';
import { type Abortable, withCancel } from '../surface/callCancel.js';
import type { FaceTaskEra, FaceTasks } from './faceTasks.js';
import { faceTaskCapabilities, RequestProgress, serveFaceTasks, taskRequested } from './faceTaskRequests.js';

/** The JSON-RPC code a surface error is answered with. */
function jsonRpcCodeOf(error: SdkError): number {
  switch (error.code) {
    case 'unknown_tool':
    case 'tool_removed':
    case 'unknown_reference':
    case 'invalid_arguments':
      return ProtocolErrorCode.InvalidParams;
    case 'unsupported_request':
      return ProtocolErrorCode.MethodNotFound;
    default:
      return ProtocolErrorCode.InternalError;
  }
}

/** Turns what a surface threw into the JSON-RPC error the client gets. */
export function toProtocolError(error: unknown): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (isSdkError(error)) {
    const e = error as SdkError;
    const passed = e.data.jsonRpcCode;
    const code = typeof passed === 'number' && Number.isInteger(passed) ? passed : jsonRpcCodeOf(e);
    return new ProtocolError(code, e.remedy === undefined ? e.message : `${e.message}. ${e.remedy}`, e.toJSON());
  }
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'number' && Number.isInteger(code)) {
    // A JSON-RPC error the service answered: passed on with its own code and data.
    return new ProtocolError(code, message.replace(/^MCP error -?\d+: /, ''), (error as { data?: unknown }).data);
  }
  return new ProtocolError(ProtocolErrorCode.InternalError, message);
}

/** Why requests the bridge does not forward are refused (SPEC §7). */
export function unsupportedRequestMessage(method: string): string {
  if (method === 'resources/subscribe' || method === 'resources/unsubscribe') {
    return `"${method}" is refused: the ScienceEvolve bridge does not support resource subscriptions; read the resource again instead`;
  }
  return `"${method}" is refused: the ScienceEvolve bridge forwards only tools/list, tools/call, resources/list, resources/templates/list, resources/read, prompts/list and prompts/get`;
}

async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toProtocolError(error);
  }
}

/** {@link guarded}, continuing the trace context of the request's `_meta` when export is on. */
function traced<T>(params: unknown, work: () => Promise<T>): Promise<T> {
  return continueTraceOfMeta(params, () => guarded(work));
}

/** How much a polled task's progress keep-alive raises the last progress value sent: 0.001. */
const KEEP_ALIVE_STEP = 0.001;

/** What {@link answerToolCall} is given besides the call: the request's signal and how to send its progress. */
export interface ToolCallContext {
  /** Aborts when the client cancels the call (a face's direct answer gives a CallCancel, sessions/callCancel.ts). */
  signal: Abortable;
  /** The token the client asked progress under, if it did. */
  progressToken?: string | number | undefined;
  /** Sends a notification related to the call (its progress) to the client. */
  notify: (notification: { method: 'notifications/progress'; params: Record<string, unknown> }) => Promise<void>;
}

/**
 * Answers one `tools/call` from `surface`, as the result goes on the wire of `server`'s era: the
 * service's result as received (after the surface's limits), projected by the server's codec (which
 * changes it only where the era's wire form requires). Progress goes out in order, all of it before the
 * result. Throws what the surface throws (see {@link toProtocolError}).
 */
export async function answerToolCall(
  surface: Surface,
  server: Server,
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  ctx: ToolCallContext,
): Promise<CallToolResult> {
  const { name, arguments: args } = params;
  const token = ctx.progressToken;
  // Progress goes out in order, and all of it before the result (a client drops progress after the result).
  let progressSent: Promise<void> = Promise.resolve();
  // Each value sent is above the last (MCP requires it): a keep-alive of a polled task nudges it up.
  let lastProgress = Number.NEGATIVE_INFINITY;
  const onProgress =
    token === undefined
      ? undefined
      : (progress: SurfaceProgress) => {
          if (!(progress.progress > lastProgress)) return;
          lastProgress = progress.progress;
          progressSent = progressSent.then(() =>
            ctx
              .notify({ method: 'notifications/progress', params: { progressToken: token, ...progress } })
              .catch(() => {
                // The client went away mid-call: its progress has nowhere to go.
              }),
          );
        };
  let result: CallToolResult;
  try {
    result = await surface.callTool(
      name,
      args,
      withCancel<SurfaceRequestOptions>(
        onProgress === undefined
          ? {}
          : {
              onProgress,
              // A call the service runs as a task is answered when the task ends: each poll sends the client
              // a progress keep-alive, so a client that resets its timeout on progress keeps waiting.
              task: {
                onStatus: (status, statusMessage) =>
                  onProgress({
                    progress: (Number.isFinite(lastProgress) ? lastProgress : 0) + KEEP_ALIVE_STEP,
                    message: `task ${status}${statusMessage === undefined ? '' : `: ${statusMessage}`}`,
                  }),
              },
            },
        ctx.signal,
      ),
    );
  } finally {
    await progressSent;
  }
  return projected(surface, server, name, result);
}

/** `result` of tool `name` as the wire of `server`'s era carries it: projected by the server's codec. */
function projected(surface: Surface, server: Server, name: string, result: CallToolResult): CallToolResult {
  // The output schema of the tool as listed now (the listing may have changed since this server was made).
  const outputSchema = result.isError
    ? undefined
    : (surface.tools.find((t) => t.name === name)?.outputSchema as Record<string, unknown> | undefined);
  return server.projectCallToolResult(result, outputSchema);
}

/** Options of {@link createSurfaceServer}. */
export interface SurfaceServerOptions {
  /**
   * Send `notifications/{tools,resources,prompts}/list_changed` on this server's connection when the
   * surface's lists change, until the server closes. True for a server that holds a connection (the stdio
   * and socket faces); the HTTP face announces changes once for all its requests instead. Default false.
   */
  announceListChanges?: boolean;
  /**
   * The face's own tasks (faces/faceTasks.ts): given, the server declares task support for the era and
   * answers a `tools/call` that asks for a task with a face task. Omitted, no task is ever answered.
   */
  tasks?: FaceTasks;
  /** The era this server serves: its task capability and requests are that era's. Default `legacy` (2025-11-25). */
  era?: FaceTaskEra;
}

/** A `tools/call` answered with a face task: passed by the server as it is (it is not a CallToolResult). */
class TaskAnswer {
  constructor(readonly answer: Record<string, unknown>) {}
}

/** The SDK's server, letting a face task's `tools/call` answer past its CallToolResult check. */
class SurfaceMcpServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: Parameters<Server['_wrapHandler']>[1],
  ): ReturnType<Server['_wrapHandler']> {
    const wrapped = super._wrapHandler(method, handler);
    if (method !== 'tools/call') return wrapped;
    return async (request, ctx) => {
      try {
        return await wrapped(request, ctx);
      } catch (error) {
        if (error instanceof TaskAnswer) return error.answer;
        throw error;
      }
    };
  }
}

/**
 * A fresh low-level server answering from `surface`. It advertises tools, resources (without
 * `subscribe`) and prompts, each with `listChanged`; every other request is refused with JSON-RPC -32601
 * and a message that says so. A `tools/call` that carries a `progressToken` gets the service's progress
 * notifications forwarded under that token.
 */
export function createSurfaceServer(surface: Surface, options: SurfaceServerOptions = {}): Server {
  const tasks = options.tasks;
  const server = new SurfaceMcpServer(surface.serverInfo, {
    capabilities: {
      tools: { listChanged: true },
      resources: { listChanged: true },
      prompts: { listChanged: true },
      ...(tasks === undefined ? {} : faceTaskCapabilities(options.era ?? 'legacy', tasks)),
    },
  });

  server.setRequestHandler('tools/list', async () => ({ tools: [...surface.tools] }));
  // A client's traceparent in `_meta` is continued (events/telemetry.ts): our call spans join its trace.
  server.setRequestHandler('tools/call', async (request, ctx) => {
    // A client that asks for a task gets one of the face's own (faces/faceTasks.ts).
    const asked = tasks === undefined ? undefined : taskRequested(request.params, ctx.mcpReq.envelope);
    if (asked === undefined) {
      return traced(request.params, () =>
        answerToolCall(surface, server, request.params, {
          signal: ctx.mcpReq.signal,
          progressToken: ctx.mcpReq._meta?.progressToken ?? request.params._meta?.progressToken,
          notify: (notification) => ctx.mcpReq.notify(notification),
        }),
      );
    }
    const token = ctx.mcpReq._meta?.progressToken ?? request.params._meta?.progressToken;
    const progress =
      token === undefined ? undefined : new RequestProgress(token, (notification) => ctx.mcpReq.notify(notification));
    const answer = await traced(request.params, () =>
      tasks!.call(request.params.name, request.params.arguments, asked, ctx.mcpReq.signal, progress),
    );
    if (answer.kind === 'task') throw new TaskAnswer(answer.answer);
    return projected(surface, server, request.params.name, answer.result);
  });
  if (tasks !== undefined) serveFaceTasks(server, tasks, options.era ?? 'legacy');
  server.setRequestHandler('resources/list', async () => ({ resources: [...surface.resources] }));
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [...surface.resourceTemplates],
  }));
  server.setRequestHandler('resources/read', (request, ctx) =>
    traced(request.params, () => surface.readResource(request.params.uri, { signal: ctx.mcpReq.signal })),
  );
  server.setRequestHandler('prompts/list', async () => ({ prompts: [...surface.prompts] }));
  server.setRequestHandler('prompts/get', (request, ctx) =>
    traced(request.params, () =>
      surface.getPrompt(request.params.name, request.params.arguments, { signal: ctx.mcpReq.signal }),
    ),
  );
  if (options.announceListChanges) {
    const stop = surface.onListChanged((change) => announceListChange(server, change));
    const previous = server.onclose;
    server.onclose = () => {
      stop();
      previous?.();
    };
  }
  server.fallbackRequestHandler = async (request) => {
    throw new ProtocolError(ProtocolErrorCode.MethodNotFound, unsupportedRequestMessage(request.method), {
      code: 'unsupported_request',
      method: request.method,
    });
  };
  return server;
}

/** Sends `notifications/<list>/list_changed` on `server`'s connection for each list `change` names. */
export function announceListChange(server: Server, change: SurfaceListChange): void {
  const sends: Promise<void>[] = [];
  if (change.tools) sends.push(server.sendToolListChanged());
  if (change.resources) sends.push(server.sendResourceListChanged());
  if (change.prompts) sends.push(server.sendPromptListChanged());
  for (const sent of sends) {
    sent.catch(() => {
      // Not connected (yet, or any more): that client lists again when it connects.
    });
  }
}
