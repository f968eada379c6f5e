/**
 * A newline-delimited JSON-RPC server transport over any pair of streams, with the faces' input limits
 * ({@link checkMessage}): a line over the size limit, a message nested deeper than the depth limit, a
 * JSON-RPC batch, unparsable JSON and a non-JSON-RPC value are each answered with a JSON-RPC error
 * (id `null`) and dropped; the connection stays open. Replaces the SDK's `StdioServerTransport`, which closes the
 * connection on an oversized message and hands batches on.
 */
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { checkMessage, DEFAULT_INPUT_LIMITS, oversized } from './inputLimits.js';

/** Limits of one incoming line (the faces' input limits, with the size named for a line). @public */
export interface LineLimits {
  /** Bytes of one line (without its newline). Default 4,194,304 (4 MiB). */
  maxLineBytes: number;
  /** Nesting of arrays and objects in one message. Default 64. */
  maxDepth: number;
}

/** The default {@link LineLimits}: the faces' {@link DEFAULT_INPUT_LIMITS}. */
export const DEFAULT_LINE_LIMITS: Readonly<LineLimits> = Object.freeze({
  maxLineBytes: DEFAULT_INPUT_LIMITS.maxMessageBytes,
  maxDepth: DEFAULT_INPUT_LIMITS.maxDepth,
});

const NEWLINE = 0x0a;
/** A line of white space only (what `String.prototype.trim` removes), skipped. */
const BLANK = /^\s*$/;

/** Whether `line` is a JSON object with `error` and without `method`: an error answer, however malformed. */
function isErrorAnswer(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    return (
      typeof value === 'object' && value !== null && !Array.isArray(value) && 'error' in value && !('method' in value)
    );
  } catch {
    return false;
  }
}

/** A server transport reading JSON-RPC lines from `input` and writing them to `output`. */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /**
   * Sees each incoming message (after the input limits) before {@link LineTransport.onmessage}; a message
   * it returns true for is taken by it and not delivered. The stdio face answers `tools/call` here.
   */
  intercept?: (message: JSONRPCMessage) => boolean;
  /** Sees each outgoing message as it is queued for writing. */
  onsend?: (message: JSONRPCMessage) => void;

  private readonly input: Readable;
  private readonly output: Writable;
  private readonly limits: LineLimits;
  private chunks: Buffer[] = [];
  private pending = 0;
  private discarding = false;
  private isClosed = false;
  /** Set while a write waits for `drain`: later writes queue behind it, in order. */
  private blocked: Promise<void> | undefined;
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
      const line = this.discarding
        ? undefined
        : (this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks)).toString('utf8');
      this.chunks = [];
      this.pending = 0;
      this.discarding = false;
      if (line === undefined) {
        const refusal = oversized(size, { maxMessageBytes: this.limits.maxLineBytes, maxDepth: this.limits.maxDepth });
        this.refuse(refusal.code, refusal.message);
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
    if (BLANK.test(line)) return;
    const checked = checkMessage(line, { maxMessageBytes: this.limits.maxLineBytes, maxDepth: this.limits.maxDepth });
    if ('refusal' in checked) {
      // An error answer is never answered (the peer may be refusing our line: answering its refusal with
      // another would start an endless exchange of refusals); it is only reported.
      if (isErrorAnswer(line)) {
        this.onerror?.(new Error(`an error answer that is not valid JSON-RPC was dropped: ${checked.refusal.message}`));
        return;
      }
      this.refuse(checked.refusal.code, checked.refusal.message, checked.refusal.id);
      return;
    }
    const message = checked.message;
    if (this.intercept?.(message) === true) return;
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

  /**
   * Writes one message a line, in order, waiting for `drain` when the output is full. With nothing
   * waiting, the line is written at once (the common case: no promise chain per message).
   */
  send(message: JSONRPCMessage): Promise<void> {
    this.onsend?.(message);
    const text = `${JSON.stringify(message)}\n`;
    const blocked = this.blocked;
    if (blocked === undefined) return this.write(text, true);
    // Behind the last message queued: its write (and drain) is part of this chain, so the chain's tail
    // is the one thing later messages wait for.
    const write = blocked.then(() => this.write(text, false));
    this.queueBehind(write);
    return write;
  }

  /** Makes `write` the tail later messages wait for; cleared once it settles, unless a later one replaced it. */
  private queueBehind(write: Promise<void>): void {
    const after = write.then(
      () => {},
      () => {},
    );
    this.blocked = after;
    void after.then(() => {
      if (this.blocked === after) this.blocked = undefined;
    });
  }

  /**
   * Writes `text` now; resolves once the output took it (at once, or at its next `drain`). `head`: nothing
   * was queued, so a write that waits for `drain` becomes the tail; a queued write's wait is its chain's
   * already (making it the tail again would let a later message overtake the ones queued behind it).
   */
  private write(text: string, head: boolean): Promise<void> {
    if (this.isClosed || this.output.destroyed || this.output.writableEnded) {
      return Promise.reject(new Error('the stdio face is closed'));
    }
    let failed: ((error: Error) => void) | undefined;
    let error: Error | undefined;
    const fits = this.output.write(text, (e) => {
      if (!e) return;
      error = e;
      failed?.(e);
    });
    if (fits) return Promise.resolve();
    const drained = new Promise<void>((resolve, reject) => {
      if (error !== undefined) {
        reject(error);
        return;
      }
      failed = reject;
      this.output.once('drain', resolve);
    });
    // Later messages wait for this one to be taken.
    if (head) this.queueBehind(drained);
    return drained;
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
