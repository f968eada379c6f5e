/**
 * The socket face: an agent's live surface served on a per-invocation Unix socket, one MCP session per
 * connection (the stdio face's server over a {@link LineTransport} on the socket). An agent CLI reaches it
 * through the stdio relay (`relay.ts`) that its MCP configuration launches, so the CLI uses the services
 * the invocation already started, not a second copy.
 *
 * Only the user can connect: the socket lives in a fresh directory of mode 0700 under the OS temporary
 * directory (not under the runtime path: a Unix socket path holds at most about 107 bytes), and the
 * socket file itself is 0600. Both are removed at close.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { type Server as NetServer, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import { SdkError } from '../errors.js';
import { LineTransport } from './lineTransport.js';
import { type Surface, withCallTool } from '../surface/surface.js';
import { createSurfaceServer } from './surfaceServer.js';
import { FaceTasks } from './faceTasks.js';

/** Options of {@link startSocketFace}. */
export interface SocketFaceOptions {
  /** The directory the socket's private directory is made in. Default `os.tmpdir()`. */
  parentDir?: string;
  /** Out-of-band errors of a connection (reporting only). */
  onError?: (error: Error) => void;
}

/** A running socket face. */
export interface SocketFace {
  /** The socket's path (give it to the relay). */
  readonly socketPath: string;
  /** Tool calls that reached the surface through this face so far (refused ones included). */
  readonly toolCalls: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Ends every connection, stops listening and removes the socket and its directory. Idempotent. */
  close(): Promise<void>;
}

/** Bytes a Unix socket path may hold on Linux (`sun_path` is 108 bytes with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Serves `surface` on a fresh Unix socket. Every connection gets its own MCP session (both protocol eras,
 * the stdio face's input limits); every `tools/call` that reaches the surface is counted.
 *
 * @throws SdkError `io_error` when the directory or the socket cannot be made (the message names the path).
 */
export async function startSocketFace(surface: Surface, options: SocketFaceOptions = {}): Promise<SocketFace> {
  let toolCalls = 0;
  let connections = 0;
  const counted = withCallTool(surface, (name, args, requestOptions) => {
    toolCalls++;
    return surface.callTool(name, args, requestOptions);
  });
  const dir = await mkdtemp(join(options.parentDir ?? tmpdir(), 'se-mcp-')).catch((error: unknown) => {
    throw new SdkError('io_error', `cannot make the socket directory under ${options.parentDir ?? tmpdir()}`, {
      cause: error,
      remedy: 'check that the temporary directory exists and is writable (TMPDIR)',
    });
  });
  const socketPath = join(dir, 'surface.sock');
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    await rm(dir, { recursive: true, force: true });
    throw new SdkError('io_error', `the socket path ${socketPath} is longer than ${MAX_SOCKET_PATH_BYTES} bytes`, {
      remedy: 'set TMPDIR to a shorter directory',
      data: { socketPath },
    });
  }

  const sockets = new Set<Socket>();
  const sessions = new Set<{ close(): Promise<void> }>();
  const server: NetServer = createServer((socket) => {
    connections++;
    sockets.add(socket);
    const transport = new LineTransport(socket, socket);
    // The connection's own tasks (faces/faceTasks.ts): closed with it, their service tasks cancelled.
    const tasks = new FaceTasks(counted);
    const handle = sdkServeStdio(
      (context) =>
        createSurfaceServer(counted, {
          announceListChanges: true,
          tasks,
          era: context?.era === 'modern' ? 'modern' : 'legacy',
        }),
      {
        transport,
        legacy: 'serve',
        onerror: (error) => options.onError?.(error),
      },
    );
    const session = {
      async close() {
        try {
          await tasks.close();
          await handle.close();
        } finally {
          await transport.close();
        }
      },
    };
    sessions.add(session);
    // A relay that went away (its CLI exited) is an ordinary end of the session, not an error to raise.
    socket.on('error', (error) => options.onError?.(error));
    socket.on('close', () => {
      sockets.delete(socket);
      sessions.delete(session);
      void session.close().catch(() => {});
    });
    // The relay half-closes when its CLI closed stdin: end the session and our side with it.
    void transport.closed.then(() => {
      socket.end();
      void tasks.close();
    });
  });
  server.on('error', (error) => options.onError?.(error));

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // The directory (0700) already keeps others out; the socket's own mode says so too.
    await chmod(socketPath, 0o600);
  } catch (error) {
    server.close();
    await rm(dir, { recursive: true, force: true });
    throw new SdkError('io_error', `cannot listen on the socket ${socketPath}`, {
      cause: error,
      remedy: 'check that the temporary directory is on a file system that allows Unix sockets (TMPDIR)',
      data: { socketPath },
    });
  }

  let closing: Promise<void> | undefined;
  return {
    socketPath,
    get toolCalls() {
      return toolCalls;
    },
    get connections() {
      return connections;
    },
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        try {
          await Promise.allSettled([...sessions].map((s) => s.close()));
        } finally {
          for (const socket of sockets) socket.destroy();
          await stopped;
          await rm(dir, { recursive: true, force: true });
        }
      })();
      return closing;
    },
  };
}

/**
 * The path of the compiled relay (`dist/faces/relay.js`). From the TypeScript sources (tests run them
 * through tsx) it is the built file beside them, so the SDK must have been built (`tsc --build`).
 *
 * @throws SdkError `command_not_found` when the relay has not been built.
 */
export function relayPath(): string {
  const here = fileURLToPath(new URL('./relay.js', import.meta.url));
  if (existsSync(here)) return here;
  const built = fileURLToPath(new URL('../../dist/faces/relay.js', import.meta.url));
  if (existsSync(built)) return built;
  throw new SdkError('command_not_found', `the stdio relay is missing (looked for ${here} and ${built})`, {
    remedy: 'build the SDK with `npx tsc --build`',
  });
}
