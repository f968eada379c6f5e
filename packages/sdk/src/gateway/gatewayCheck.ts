/**
 * The gateway's checks (SPEC §8): a port free before supergateway takes it, and an endpoint proved with the
 * official MCP client (`initialize`, `tools/list`, a `tools/call` of a read-only tool callable without
 * arguments) — an HTTP 200 alone proves nothing.
 */
import { createServer, connect as netConnect } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SdkError } from '../errors.js';
import { endSession } from '../sessions/remoteHttp.js';
import { runEach } from '../processes/teardown.js';

/** Resolves with a port the OS considers free now (a gateway started on it may still lose a race). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Rejects with `io_error` when something already listens on `port` (checked on every interface, so no other listener shares the port). */
export function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new SdkError('io_error', `port ${port} is not free for the gateway (${error.code ?? error.message})`, {
          remedy: 'Stop what listens there, or pick another port with --port (0 picks a free one).',
          data: { port },
          cause: error,
        }),
      );
    });
    server.listen(port, () => server.close(() => resolve()));
  });
}

/** True once a TCP connection to 127.0.0.1:`port` is accepted. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The first read-only tool that takes no required argument (so `{}` is a valid call), or `undefined`. */
function callableReadOnlyTool(
  tools: readonly { name: string; annotations?: { readOnlyHint?: boolean }; inputSchema?: { required?: unknown } }[],
): string | undefined {
  return tools.find((tool) => {
    const required = tool.inputSchema?.required;
    return tool.annotations?.readOnlyHint === true && (!Array.isArray(required) || required.length === 0);
  })?.name;
}

/** Runs the client checks against `url`; resolves with the tools and the tool called. */
export async function checkGateway(
  url: string,
  timeoutMs: () => number,
): Promise<{ tools: string[]; calledTool: string | null }> {
  const client = new Client({ name: 'scienceevolve-gateway-check', version: '0.1.0' }, { capabilities: {} });
  client.onerror = () => {};
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const step = (what: string, code: 'initialize_failed' | 'protocol_error', error: unknown) =>
    new SdkError(
      code,
      `the gateway at ${url} failed the ${what} check: ${error instanceof Error ? error.message : String(error)}`,
      {
        remedy: 'Run the launch command by hand to see that it is a stdio MCP server, and read the gateway log.',
        data: { url, check: what },
        cause: error,
      },
    );
  try {
    try {
      // The default ('legacy') negotiation: a plain `initialize` + `notifications/initialized`.
      await client.connect(transport, { timeout: timeoutMs() });
    } catch (error) {
      throw step('initialize', 'initialize_failed', error);
    }
    let tools: Awaited<ReturnType<Client['listTools']>>['tools'];
    try {
      tools = (await client.listTools(undefined, { timeout: timeoutMs() })).tools;
    } catch (error) {
      throw step('tools/list', 'protocol_error', error);
    }
    const name = callableReadOnlyTool(tools);
    if (name !== undefined) {
      try {
        // Any CallToolResult proves the round trip, `isError: true` included (the tool answered).
        await client.callTool({ name, arguments: {} }, { timeout: timeoutMs() });
      } catch (error) {
        throw step(`tools/call "${name}"`, 'protocol_error', error);
      }
    }
    return { tools: tools.map((t) => t.name), calledTool: name ?? null };
  } finally {
    // A stateful session owns a server process: end it (DELETE, bounded to 2 s) rather than leave it to
    // idle out; a gateway that does not answer the DELETE is failing anyway.
    await runEach([() => endSession(transport), () => client.close()]);
  }
}
