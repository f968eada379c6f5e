/**
 * A service's stderr log (SPEC §5, "stderr"): the pipe is always drained, because a service whose stderr
 * pipe fills up blocks in `write(2)` and stops answering. The first `capBytes` go to the log file, then
 * one line says how many bytes were dropped. The last lines are also kept in memory for diagnostics,
 * whether or not they made it into the file.
 */
import { closeSync, writeSync } from 'node:fs';
import { makePrivateDirSync, openFreshSync } from '../fileModes.js';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';

/** Bytes of stderr written to the log file before the rest is dropped: 1 MiB. */
export const STDERR_LOG_CAP_BYTES = 1024 * 1024;

/** Lines of stderr kept in memory for error messages' data: 20. */
export const STDERR_TAIL_LINES = 20;

/** Characters of the most recent stderr kept to extract the tail from: 8 KiB. */
const TAIL_WINDOW_CHARS = 8 * 1024;

/** Options of {@link StderrLog}. */
export interface StderrLogOptions {
  /** Bytes written to the file before dropping. Default {@link STDERR_LOG_CAP_BYTES} (1 MiB). */
  capBytes?: number;
  /** Lines kept in memory. Default {@link STDERR_TAIL_LINES} (20). */
  tailLines?: number;
}

/** The capped stderr log of one service process. */
export class StderrLog {
  /** The log file. */
  readonly path: string;
  private readonly capBytes: number;
  private readonly tailLines: number;
  private fd: number | undefined;
  private written = 0;
  private dropped = 0;
  private window = '';
  private readonly decoder = new TextDecoder('utf-8');
  private stream: Readable | undefined;
  private finished = false;
  private markEnded: () => void = () => {};
  /** Resolves when the pipe ended (every writer closed it) or {@link finish} was called. */
  readonly ended: Promise<void> = new Promise((resolve) => {
    this.markEnded = resolve;
  });

  /**
   * Creates the log file empty (0600, whatever was at the path replaced, never followed: see `fileModes.ts`),
   * making its directory (0700) if needed.
   */
  constructor(path: string, options: StderrLogOptions = {}) {
    this.path = path;
    this.capBytes = options.capBytes ?? STDERR_LOG_CAP_BYTES;
    this.tailLines = options.tailLines ?? STDERR_TAIL_LINES;
    makePrivateDirSync(dirname(path));
    this.fd = openFreshSync(path);
  }

  /** Bytes that did not fit under the cap. */
  get droppedBytes(): number {
    return this.dropped;
  }

  /** Drains `stream` into the log until it ends (or {@link finish} is called). */
  attach(stream: Readable): void {
    this.stream = stream;
    stream.on('data', (chunk: Buffer) => this.write(chunk));
    // A read error on a pipe means the other end is gone; the log simply ends there.
    stream.on('error', () => this.finish());
    stream.on('end', () => this.finish());
    stream.on('close', () => this.markEnded());
  }

  /** The last lines of stderr (at most `tailLines`), without trailing empty lines. */
  tail(): string[] {
    const lines = this.window.split(/\r?\n|\r/);
    while (lines.length > 0 && lines[lines.length - 1]?.trim() === '') lines.pop();
    // The first line of the window may be cut in the middle; drop it when the window is full.
    if (this.window.length >= TAIL_WINDOW_CHARS && lines.length > 1) lines.shift();
    return lines.slice(-this.tailLines);
  }

  /**
   * Stops reading (destroying the pipe if it is still open, e.g. held by a grandchild) and closes the file,
   * after the one line that says how many bytes were dropped. Idempotent.
   */
  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.markEnded();
    try {
      if (this.stream !== undefined && !this.stream.destroyed) this.stream.destroy();
    } finally {
      if (this.fd !== undefined) {
        const fd = this.fd;
        this.fd = undefined;
        try {
          if (this.dropped > 0) {
            writeSync(
              fd,
              `\n[scienceevolve] dropped ${this.dropped} bytes of stderr after the first ${this.capBytes}\n`,
            );
          }
        } finally {
          closeSync(fd);
        }
      }
    }
  }

  private write(chunk: Buffer): void {
    this.window = (this.window + this.decoder.decode(chunk, { stream: true })).slice(-TAIL_WINDOW_CHARS);
    if (this.fd === undefined) return;
    const room = this.capBytes - this.written;
    const kept = Math.min(room, chunk.length);
    if (kept > 0) {
      // Synchronous writes: at most `capBytes` in total, and the file is complete the moment `finish` returns.
      writeSync(this.fd, chunk, 0, kept);
      this.written += kept;
    }
    this.dropped += chunk.length - kept;
  }
}
