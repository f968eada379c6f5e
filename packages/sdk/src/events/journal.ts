/**
 * The run journal: public events as JSON lines in `runs/<runId>/events.jsonl` (SPEC §11). Events carry
 * ids, times and paths, never service logs or secret values.
 */
import { appendFileSync } from 'node:fs';
import { closeQuietly, makePrivateDirSync, openAppendSync } from '../fileModes.js';
import { dirname } from 'node:path';
import { readPlainFile } from '../store/plainFile.js';
import type { RunEvent } from './runEvents.js';

/** One public event: a member of {@link RunEvent}, told apart by `type`. */
export type PublicEvent = RunEvent;

/** Receives public events. */
export type EventSink = (event: RunEvent) => void;

/** Appends events to a JSON-lines file. Appends are synchronous so the file's order is the events' order. */
export class EventJournal {
  private readonly listeners = new Set<EventSink>();

  constructor(readonly path: string) {
    makePrivateDirSync(dirname(path));
  }

  /** Appends one event (one writer per run, so whole lines in order). */
  append(event: RunEvent): void {
    // Opened at each append without following a link (a service could plant one at the path), 0600.
    const fd = openAppendSync(this.path);
    try {
      appendFileSync(fd, `${JSON.stringify(event)}\n`);
    } finally {
      closeQuietly(fd);
    }
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A listener's failure never breaks the run.
      }
    }
  }

  /** Also sends every later event to `listener`; returns the unsubscribe function. */
  subscribe(listener: EventSink): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * Every event of a journal file, in order; a torn last line (a host killed mid-append) is skipped, and a
 * missing file, or one that is no plain file, is an empty journal. The lines are not checked against the
 * event types: the run's folder is writable by its services, so a reader checks the fields it uses.
 * @public
 */
export async function readEvents(path: string): Promise<RunEvent[]> {
  // Opened as a plain file only: a journal a service replaced by a symlink or a FIFO is not followed and
  // cannot block `status` or the run's end; it reads as a missing one.
  const text = await readPlainFile(path).catch(() => undefined);
  if (text === undefined) return [];
  const events: RunEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      events.push(JSON.parse(line) as RunEvent);
    } catch {
      // A line cut short by a crash.
    }
  }
  return events;
}
