/**
 * A newline-delimited JSON-RPC server transport over any pair of streams, with the stdio face's input
 * limits: a line over the size limit, a message nested deeper than the depth limit, a JSON-RPC batch,
 * unparsable JSON and a non-JSON-RPC value are each answered with a JSON-RPC error (id `null`) and
 * dropped; the connection stays open. Replaces the SDK's `StdioServerTransport`, which closes the
 * connection on an oversized message and hands batches on.
 */
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { parseJSONRPCMessage } from '@modelcontextprotocol/server';

/** Limits of one incoming line. */
export interface LineLimits {
  /** Bytes of one line (without its newline). Default 4,194,304 (4 MiB). */
  maxLineBytes: number;
  /** Nesting of arrays and objects in one message. Default 64. */
  maxDepth: number;
}

/** The default {@link LineLimits}. */
export const DEFAULT_LINE_LIMITS: Readonly<LineLimits> = Object.freeze({ maxLineBytes: 4 * 1024 * 1024, maxDepth: 64 });

const NEWLINE = 0x0a;

/** The deepest nesting of `[`/`{` in `text`, outside strings; stops counting past `limit`. */
export function jsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** A server transport reading JSON-RPC lines from `input` and writing them to `output`. */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly input: Readable;
  private readonly output: Writable;
  private readonly limits: LineLimits;
  private chunks: Buffer[] = [];
  private pending = 0;
  private discarding = false;
  private isClosed = false;
  private writeChain: Promise<void> = Promise.resolve();
  private markClosed: () => void = () => {};
  /** Resolves once the transport is closed (input ended, or {@link LineTransport.close}). */
  readonly closed: Promise<void>;

  constructor(input: Readable, output: Writable, limits: Partial<LineLimits> = {}) {
    this.input = input;
    this.output = output;
    this.limits = { ...DEFAULT_LINE_LIMITS, ...limits };
    this.closed = new Promise<void>((resolve) => {
      this.markClosed = resolve;
    });
  }

  private readonly onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (;;) {
      const newline = data.indexOf(NEWLINE);
      const part = newline === -1 ? data : data.subarray(0, newline);
      if (!this.discarding) {
        if (this.pending + part.length > this.limits.maxLineBytes) {
          // Keep nothing of an oversized line: drop what we have and skip to its end.
          this.discarding = true;
          this.chunks = [];
        } else {
          this.chunks.push(part);
        }
      }
      this.pending += part.length;
      if (newline === -1) return;
      const size = this.pending;
      const line = this.discarding ? undefined : Buffer.concat(this.chunks).toString('utf8');
      this.chunks = [];
      this.pending = 0;
      this.discarding = false;
      if (line === undefined) {
        this.refuse(
          -32600,
          `message of ${size} bytes refused: a line may hold at most ${this.limits.maxLineBytes} bytes`,
        );
      } else {
        this.handleLine(line);
      }
      data = data.subarray(newline + 1);
    }
  };

  private readonly onEnd = (): void => {
    void this.close();
  };

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  private handleLine(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    const depth = jsonDepth(line, this.limits.maxDepth);
    if (depth > this.limits.maxDepth) {
      this.refuse(-32600, `message refused: it is nested deeper than ${this.limits.maxDepth} levels`);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.refuse(-32700, `parse error: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (Array.isArray(value)) {
      this.refuse(-32600, 'JSON-RPC batches are refused: send one message a line');
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(value);
    } catch {
      const id = (value as { id?: unknown } | null)?.id;
      this.refuse(
        -32600,
        'invalid request: not a JSON-RPC 2.0 message',
        typeof id === 'string' || typeof id === 'number' ? id : null,
      );
      return;
    }
    this.onmessage?.(message);
  }

  private refuse(code: number, message: string, id: string | number | null = null): void {
    this.onerror?.(new Error(message));
    // The SDK's message type has no `id: null` error; the wire form is still valid JSON-RPC.
    this.send({ jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage).catch((error: unknown) =>
      this.onerror?.(error instanceof Error ? error : new Error(String(error))),
    );
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('close', this.onEnd);
    this.input.on('error', this.onInputError);
  }

  /** Writes one message a line, in order, waiting for `drain` when the output is full. */
  send(message: JSONRPCMessage): Promise<void> {
    const text = `${JSON.stringify(message)}\n`;
    const write = this.writeChain.then(
      () =>
        new Promise<void>((resolve, reject) => {
          if (this.isClosed || this.output.destroyed || this.output.writableEnded) {
            reject(new Error('the stdio face is closed'));
            return;
          }
          const fits = this.output.write(text, (error) => {
            if (error) reject(error);
          });
          if (fits) resolve();
          else this.output.once('drain', resolve);
        }),
    );
    this.writeChain = write.catch(() => {});
    return write;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.input.off('error', this.onInputError);
    // A flowing stdin keeps the event loop alive even with no listener left: pause it, so a process that
    // closed its face (a signal while the client still holds the pipe open) can exit.
    this.input.pause();
    this.chunks = [];
    try {
      this.onclose?.();
    } finally {
      this.markClosed();
    }
  }
}
