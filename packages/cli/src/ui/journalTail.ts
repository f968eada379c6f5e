/**
 * Follows a run's `events.jsonl` from another process: the journal is appended by the run's host, so the
 * viewer watches the file (and its folder, for a journal not written yet) and reads what was added since
 * the last read. A line is handed on only once its newline is there (a host writes whole lines; a torn
 * last line is waited for, not parsed half). A complete line that is not JSON is reported, not skipped.
 */
import { type FSWatcher, watch } from 'node:fs';
import { dirname } from 'node:path';
import { openPlainFile } from '@scienceevolve/sdk/internal';

/** One line of the journal: its 0-based index and the event, or why it could not be read. */
export type JournalLine = { index: number; event: unknown } | { index: number; corrupt: string };

/** Options of {@link JournalTail}. */
export interface JournalTailOptions {
  /** Milliseconds between polls, a fallback for file systems whose watch misses appends. Default 500. */
  pollMs?: number;
  /** Lines before this index are not delivered (a reconnecting reader's last seen index + 1). Default 0. */
  fromIndex?: number;
}

/** Reads a journal file from the start, then every line appended to it, until {@link close}. */
export class JournalTail {
  private offset = 0;
  private index = 0;
  private partial = Buffer.alloc(0);
  private reading: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly fromIndex: number;

  constructor(
    readonly path: string,
    private readonly onLines: (lines: JournalLine[]) => void,
    options: JournalTailOptions = {},
  ) {
    this.fromIndex = options.fromIndex ?? 0;
    for (const target of [path, dirname(path)]) {
      try {
        const w = watch(target, { persistent: false }, () => this.poke());
        w.on('error', () => w.close());
        this.watchers.push(w);
      } catch {
        // The file does not exist yet (its folder's watch sees it come), or watching is not possible: the poll reads it.
      }
    }
    this.timer = setInterval(() => this.poke(), options.pollMs ?? 500);
    this.timer.unref();
    this.poke();
  }

  /** Reads what was appended; concurrent calls are folded into one more read after the current one. */
  poke(): void {
    if (this.closed) return;
    if (this.reading !== undefined) {
      this.again = true;
      return;
    }
    this.reading = this.read()
      .catch(() => {
        // A journal that cannot be read now (not written yet, replaced) is read at the next poke.
      })
      .finally(() => {
        this.reading = undefined;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  private async read(): Promise<void> {
    // No symlink is followed (a service can write into the run's folder) and a FIFO does not block the open.
    const file = await openPlainFile(this.path);
    if (file === undefined) return;
    const { handle, info } = file;
    try {
      const { size } = info;
      if (size < this.offset) {
        // The file was replaced by a shorter one: the journal is append-only, so this is not the run's journal any more.
        this.offset = size;
        this.partial = Buffer.alloc(0);
        return;
      }
      while (this.offset < size && !this.closed) {
        const chunk = Buffer.alloc(Math.min(size - this.offset, 1 << 20));
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, this.offset);
        if (bytesRead === 0) break;
        this.offset += bytesRead;
        this.deliver(Buffer.concat([this.partial, chunk.subarray(0, bytesRead)]));
      }
    } finally {
      await handle.close();
    }
  }

  private deliver(data: Buffer): void {
    const lines: JournalLine[] = [];
    let start = 0;
    for (let nl = data.indexOf(10, start); nl !== -1; nl = data.indexOf(10, start)) {
      const text = data.subarray(start, nl).toString('utf8');
      start = nl + 1;
      if (text.trim() === '') continue;
      const index = this.index++;
      if (index < this.fromIndex) continue;
      try {
        lines.push({ index, event: JSON.parse(text) });
      } catch {
        // Its length only: the parser's message would quote the line.
        lines.push({ index, corrupt: `line ${index + 1} is not JSON (${Buffer.byteLength(text)} bytes)` });
      }
    }
    this.partial = Buffer.from(data.subarray(start));
    if (lines.length > 0 && !this.closed) this.onLines(lines);
  }

  /** Stops watching. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    for (const w of this.watchers) {
      try {
        w.close();
      } catch {
        // already closed
      }
    }
    this.watchers = [];
  }
}
