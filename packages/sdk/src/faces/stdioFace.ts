/**
 * The stdio face: an agent's surface as a stdio MCP server (`scienceevolve services serve … --agent A`),
 * serving both protocol eras (2026-07-28 and 2025-11-25) through the v2 SDK's `serveStdio`, over a
 * {@link LineTransport} that enforces the input limits.
 */
import type { Readable, Writable } from 'node:stream';
import { serveStdio as sdkServeStdio } from '@modelcontextprotocol/server/stdio';
import type { Server } from '@modelcontextprotocol/server';
import { answerToolCallsDirectly } from './directToolCalls.js';
import { LineTransport, type LineLimits } from './lineTransport.js';
import type { Surface } from '../surface/surface.js';
import { createSurfaceServer } from './surfaceServer.js';
import { FaceTasks } from './faceTasks.js';

/** Options of {@link serveStdio}. @public */
export interface StdioFaceOptions extends Partial<LineLimits> {
  /** Where requests come from. Default `process.stdin`. */
  input?: Readable;
  /** Where the protocol goes: nothing else may be written to it. Default `process.stdout` (see {@link protectStdout}). */
  output?: Writable;
  /** Out-of-band errors and refused lines (reporting only). */
  onError?: (error: Error) => void;
}

/** A running stdio face. @public */
export interface StdioFace {
  /** Resolves when the connection ends (the client closed its end, or {@link StdioFace.close} was called). */
  readonly closed: Promise<void>;
  /** Ends the connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `surface` over a pair of streams until the input ends. Lines over `maxLineBytes` (default
 * 4 MiB) or nested deeper than `maxDepth` (default 64) and JSON-RPC batches are refused with a JSON-RPC
 * error; requests the bridge does not forward are refused with -32601.
 * @public
 */
export function serveStdio(surface: Surface, options: StdioFaceOptions = {}): StdioFace {
  const transport = new LineTransport(options.input ?? process.stdin, options.output ?? process.stdout, {
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    ...(options.maxDepth === undefined ? {} : { maxDepth: options.maxDepth }),
  });
  // The server the SDK makes for a 2025-era connection; `tools/call` on it is answered directly.
  let legacyServer: Server | undefined;
  answerToolCallsDirectly(transport, surface, () => legacyServer);
  // The connection's own tasks (faces/faceTasks.ts): closed with it, their service tasks cancelled.
  const tasks = new FaceTasks(surface);
  void transport.closed.then(() => tasks.close());
  const handle = sdkServeStdio(
    (context) => {
      const era = context?.era === 'modern' ? 'modern' : 'legacy';
      const server = createSurfaceServer(surface, { announceListChanges: true, tasks, era });
      if (context?.era === 'legacy') legacyServer = server;
      return server;
    },
    {
      transport,
      legacy: 'serve',
      onerror: (error) => options.onError?.(error),
    },
  );
  return {
    closed: transport.closed,
    async close() {
      try {
        await tasks.close();
        await handle.close();
      } finally {
        await transport.close();
      }
    },
  };
}
