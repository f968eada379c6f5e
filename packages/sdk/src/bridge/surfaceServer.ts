/**
 * The MCP server both faces serve: a low-level v2 `Server` whose request handlers answer from a
 * {@link Surface}. One instance is made per connection (stdio) or per request (HTTP) by the SDK's
 * serving entries; the surface itself is shared.
 */
import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { isSdkError, type SdkError } from '../errors.js';
import type { Surface } from './surface.js';

/** The JSON-RPC code a surface error is answered with. */
function jsonRpcCodeOf(error: SdkError): number {
  switch (error.code) {
    case 'unknown_tool':
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

/**
 * A fresh low-level server answering from `surface`. It advertises tools, resources (without
 * `subscribe`) and prompts, never `listChanged`, and sends no notifications; every other request is
 * refused with JSON-RPC -32601 and a message that says so.
 */
export function createSurfaceServer(surface: Surface): Server {
  const server = new Server(surface.serverInfo, {
    capabilities: { tools: {}, resources: {}, prompts: {} },
  });
  const outputSchemas = new Map(
    surface.tools.map((t) => [t.name, t.outputSchema as Record<string, unknown> | undefined]),
  );

  server.setRequestHandler('tools/list', async () => ({ tools: [...surface.tools] }));
  server.setRequestHandler('tools/call', (request, ctx) =>
    guarded(async () => {
      const { name, arguments: args } = request.params;
      const result = await surface.callTool(name, args, { signal: ctx.mcpReq.signal });
      return server.projectCallToolResult(result, result.isError ? undefined : outputSchemas.get(name));
    }),
  );
  server.setRequestHandler('resources/list', async () => ({ resources: [...surface.resources] }));
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [...surface.resourceTemplates],
  }));
  server.setRequestHandler('resources/read', (request, ctx) =>
    guarded(() => surface.readResource(request.params.uri, { signal: ctx.mcpReq.signal })),
  );
  server.setRequestHandler('prompts/list', async () => ({ prompts: [...surface.prompts] }));
  server.setRequestHandler('prompts/get', (request, ctx) =>
    guarded(() => surface.getPrompt(request.params.name, request.params.arguments, { signal: ctx.mcpReq.signal })),
  );
  server.fallbackRequestHandler = async (request) => {
    throw new ProtocolError(ProtocolErrorCode.MethodNotFound, unsupportedRequestMessage(request.method), {
      code: 'unsupported_request',
      method: request.method,
    });
  };
  return server;
}
