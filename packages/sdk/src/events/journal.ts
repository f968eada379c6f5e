/**
 * The run journal: public events as JSON lines in `runs/<runId>/events.jsonl` (SPEC §11). Events carry
 * ids, times and paths, never service logs or secret values.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

/** One public event. `type` names it (`run.started`, `service.ready`, …); the rest depends on the type. */
export interface PublicEvent {
  type: string;
  /** ISO 8601. */
  time: string;
  run?: string;
  invocation?: string;
  agent?: string;
  [field: string]: unknown;
}

/** Receives public events. */
export type EventSink = (event: PublicEvent) => void;

/** Appends events to a JSON-lines file. Appends are synchronous so the file's order is the events' order. */
export class EventJournal {
  private readonly listeners = new Set<EventSink>();

  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
  }

  /** Appends one event (a line well under PIPE_BUF-sized writes is not needed: one writer per run). */
  append(event: PublicEvent): void {
    appendFileSync(this.path, `${JSON.stringify(event)}\n`);
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
