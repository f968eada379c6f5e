/**
 * The MCP client transport over a service's stdin/stdout: newline-delimited JSON-RPC, tolerant of what
 * real servers print but strict about what it accepts (SPEC §5, "stdout").
 *
 * - A UTF-8 line that is not JSON-RPC (a banner, a log line, a JSON log record without `jsonrpc`) is
 *   skipped and counted; the first one of the connection is reported through `onFirstPollution`.
 * - During setup only (until {@link ServiceStdioTransport.endSetup}), a line that holds `\r` is read from
 *   after its last `\r`: a progress bar drawn with `\r` and no newline before the `initialize` answer
 *   must not lose the answer. After setup, text glued to an answer is not guessed at: the line is
 *   reported as invalid.
 * - A line that claims JSON-RPC (an object with `jsonrpc`) but is invalid is reported with what failed,
 *   counted, and skipped.
 * - Bytes that are not UTF-8, or a line longer than the limit, end the connection ({@link fatalReason}).
 *
 * It neither spawns nor signals anything: the process group belongs to the stdio service.
 */
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { parseJSONRPCMessage } from '@modelcontextprotocol/client';
import { withTraceMeta } from '../events/telemetry.js';
import { type DirectResponse, DirectRequests } from './directRequests.js';
import { isPlainObject } from '../plainObject.js';

/** A line of white space only (what `String.prototype.trim` removes): skipped, without a trimmed copy. */
const BLANK = /^\s*$/;

/** The longest line accepted from a service, in characters: 64 Mi. A longer line ends the connection. */
export const MAX_LINE_CHARS = 64 * 1024 * 1024;

/** Options of {@link ServiceStdioTransport}. */
export interface ServiceStdioTransportOptions {
  /** Called once per connection, at the first stdout line that is not JSON-RPC. */
  onFirstPollution?: () => void;
  /** Called for every line that claims JSON-RPC but is invalid, with what failed (never the line). */
  onInvalidLine?: (reason: string) => void;
  /** Longest accepted line in characters. Default {@link MAX_LINE_CHARS}. */
  maxLineChars?: number;
  /** The leader's pid, shown as {@link ServiceStdioTransport.pid}. */
  pid?: number;
}

/** A {@link Transport} over a child's stdout (read) and stdin (write). */
export class ServiceStdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined;

  private readonly stdout: Readable;
  private readonly stdin: Writable;
  private readonly options: ServiceStdioTransportOptions;
  private readonly maxLineChars: number;
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });
  private pending = '';
  private bytesRead = 0;
  private inSetup = true;
  private started = false;
  private closed = false;
  private polluted = 0;
  private invalid = 0;
  private fatal: string | undefined;
  /**
   * The leader's pid (or `null`). With {@link stderr}, it marks this as a stdio transport to the official
   * client's era negotiation, which then probes in place (never a sibling process) and counts a probe that
   * times out or whose process closes the pipe as a 2025-era server.
   */
  readonly pid: number | null;
  /** Always `null`: the service's stderr goes to its log, never through the transport. */
  readonly stderr = null;
  /**
   * Requests sent beside the client (sessions/directRequests.ts): their answers are taken off the line
   * here and never reach the client; every one in flight fails when the transport closes.
   */
  readonly direct = new DirectRequests((message) => this.send(message));

  constructor(stdout: Readable, stdin: Writable, options: ServiceStdioTransportOptions = {}) {
    this.stdout = stdout;
    this.stdin = stdin;
    this.options = options;
    this.maxLineChars = options.maxLineChars ?? MAX_LINE_CHARS;
    this.pid = options.pid ?? null;
    // A service that exits closes its stdin pipe; a write then fails with EPIPE. Without a listener that
    // error would be thrown as an uncaught exception; the exit itself is reported by the service.
    this.stdin.on('error', () => {});
  }

  /** Stdout lines skipped because they were not JSON-RPC. */
  get pollutedLines(): number {
    return this.polluted;
  }

  /** Stdout lines that claimed JSON-RPC but were invalid. */
  get invalidLines(): number {
    return this.invalid;
  }

  /** Why the connection was ended by the transport itself (non-UTF-8 bytes, an overlong line), if it was. */
  get fatalReason(): string | undefined {
    return this.fatal;
  }

  /** Ends the setup phase: from now on a `\r` inside a line is no longer read around. */
  endSetup(): void {
    this.inSetup = false;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('ServiceStdioTransport already started');
    this.started = true;
    this.stdout.on('data', (chunk: Buffer) => this.onData(chunk));
    this.stdout.on('error', (error: Error) => {
      if (!this.closed) this.onerror?.(error);
      void this.close();
    });
    this.stdout.on('end', () => this.onEnd());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed || this.stdin.destroyed || this.stdin.writableEnded) throw new Error('Not connected');
    // With export on, a request carries the active trace context in params._meta (per call).
    const line = `${JSON.stringify(withTraceMeta(message))}\n`;
    await new Promise<void>((resolve, reject) => {
      this.stdin.write(line, (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Ends stdin (the service's cue to exit) and reports the close. Stdout keeps being drained. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (!this.stdin.destroyed) this.stdin.end();
    } finally {
      try {
        this.onclose?.();
      } finally {
        this.direct.close();
      }
    }
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      this.end(`stdout is not UTF-8 (invalid bytes within bytes ${this.bytesRead}–${this.bytesRead + chunk.length})`);
      return;
    }
    this.bytesRead += chunk.length;
    this.pending += text;
    let newline = this.pending.indexOf('\n');
    while (newline !== -1 && !this.closed) {
      const line = this.pending.slice(0, newline);
      this.pending = this.pending.slice(newline + 1);
      this.handleLine(line);
      newline = this.pending.indexOf('\n');
    }
    if (this.pending.length > this.maxLineChars) {
      this.end(`a stdout line is longer than ${this.maxLineChars} characters`);
    }
  }

  private onEnd(): void {
    if (this.closed) return;
    try {
      this.pending += this.decoder.decode();
    } catch {
      this.end('stdout ended inside an incomplete UTF-8 sequence');
      return;
    }
    if (this.pending !== '') {
      const line = this.pending;
      this.pending = '';
      this.handleLine(line);
    }
    void this.close();
  }

  private handleLine(raw: string): void {
    let line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (this.inSetup && line.includes('\r')) line = line.slice(line.lastIndexOf('\r') + 1);
    if (BLANK.test(line)) return;

    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      if (line.includes('"jsonrpc"')) {
        const glued = line.includes('\r') || !line.trimStart().startsWith('{');
        this.reportInvalid(
          glued
            ? 'a JSON-RPC message glued to other text on one line (not read around after setup)'
            : `not valid JSON (${(error as Error).message})`,
        );
      } else {
        this.reportPollution();
      }
      return;
    }

    if (Array.isArray(value)) {
      if (value.some((v) => typeof v === 'object' && v !== null && 'jsonrpc' in v)) {
        this.reportInvalid('a JSON-RPC batch (arrays are not part of MCP)');
      } else {
        this.reportPollution();
      }
      return;
    }
    if (typeof value !== 'object' || value === null || !('jsonrpc' in value)) {
      this.reportPollution();
      return;
    }

    const problem = describeInvalid(value as Record<string, unknown>);
    if (problem !== undefined) {
      this.reportInvalid(problem);
      return;
    }
    let message: JSONRPCMessage;
    if (isPlainResponse(value as Record<string, unknown>)) {
      // What the schema would return, unchanged: the schema test (and its copy) is skipped.
      message = value as JSONRPCMessage;
    } else {
      try {
        message = parseJSONRPCMessage(value);
      } catch (error) {
        this.reportInvalid(summarizeSchemaError(error));
        return;
      }
    }
    if (!('method' in message) && this.direct.take(message as DirectResponse, line.length)) return;
    this.onmessage?.(message);
  }

  private reportPollution(): void {
    this.polluted++;
    if (this.polluted === 1) this.options.onFirstPollution?.();
  }

  private reportInvalid(reason: string): void {
    this.invalid++;
    this.options.onInvalidLine?.(reason);
    this.onerror?.(new Error(`invalid JSON-RPC line on stdout: ${reason}`));
  }

  private end(reason: string): void {
    if (this.closed) return;
    this.fatal = reason;
    this.pending = '';
    this.onerror?.(new Error(reason));
    void this.close();
  }
}

/**
 * Whether `value` (an object with `jsonrpc: "2.0"`) is a JSON-RPC response that the SDK's message schema
 * accepts and returns unchanged: exactly `jsonrpc`, `id` and `result` (an object without `_meta`, which the
 * schema may rewrite), or `jsonrpc`, `id` (optional) and `error` (`code` an integer, `message` a string,
 * `data` anything, nothing else). Anything else goes through the schema, as before.
 */
export function isPlainResponse(value: Record<string, unknown>): boolean {
  const keys = Object.keys(value);
  const id = value.id;
  const idOk = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
  if (keys.length === 3 && idOk && 'result' in value) {
    const result = value.result;
    return isPlainObject(result) && !Object.hasOwn(result, '_meta');
  }
  if ((keys.length === 3 && idOk) || (keys.length === 2 && !('id' in value))) {
    const error = value.error;
    if (!isPlainObject(error)) return false;
    const { code, message } = error;
    if (typeof code !== 'number' || !Number.isSafeInteger(code) || typeof message !== 'string') return false;
    return Object.keys(error).every((key) => key === 'code' || key === 'message' || key === 'data');
  }
  return false;
}

/** What is wrong with an object that has `jsonrpc`, in words, for the common mistakes; else `undefined`. */
function describeInvalid(value: Record<string, unknown>): string | undefined {
  if (value.jsonrpc !== '2.0') return `"jsonrpc" is ${JSON.stringify(value.jsonrpc)}, not "2.0"`;
  const hasMethod = 'method' in value;
  const hasId = 'id' in value;
  if (hasMethod && typeof value.method !== 'string') return '"method" is not a string';
  if (hasId && typeof value.id !== 'string' && typeof value.id !== 'number')
    return '"id" is neither a string nor a number';
  if (!hasMethod && !hasId) return 'neither a request or notification ("method") nor a response ("id")';
  if (!hasMethod && !('result' in value) && !('error' in value)) return 'a response with neither "result" nor "error"';
  if (!hasMethod && 'result' in value && 'error' in value) return 'a response with both "result" and "error"';
  return undefined;
}

interface SchemaIssue {
  code?: string;
  path?: PropertyKey[];
  message?: string;
  /** Zod's `invalid_union`: the issues of each alternative. */
  errors?: SchemaIssue[][];
}

/**
 * The schema's complaint in words. For a union (request | notification | response | error) zod only says
 * "Invalid input"; the alternative with the fewest issues is the one the line meant, so its issues are told.
 */
function summarizeSchemaError(error: unknown): string {
  const issues = (error as { issues?: SchemaIssue[] }).issues;
  if (!Array.isArray(issues) || issues.length === 0) return error instanceof Error ? error.message : String(error);
  return closestIssues(issues, [])
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(message)'}: ${i.message}`)
    .join('; ');
}

function closestIssues(issues: SchemaIssue[], prefix: PropertyKey[]): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...(issue.path ?? [])];
    if (issue.code === 'invalid_union' && Array.isArray(issue.errors) && issue.errors.length > 0) {
      const best = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
      if (best.length > 0) return closestIssues(best, path);
    }
    return [{ path, message: issue.message ?? 'invalid' }];
  });
}
