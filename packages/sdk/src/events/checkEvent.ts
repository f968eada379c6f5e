/**
 * The one check of a journal line read back (SPEC §11): a reader that shows or acts on an event it did not
 * write itself — the viewer, anything following `events.jsonl` from another process — believes it only
 * once it matches its event's schema. Kept apart from `runEvents.ts` so that module stays free of zod (the
 * light `status` command loads it).
 */
import { checkEventLine } from '../schemas/runEvents.js';
import type { RunEvent } from './runEvents.js';

/** What {@link checkRunEvent} says of one journal line. @internal */
export type RunEventCheck = { ok: true; event: RunEvent } | { ok: false; problem: string };

/**
 * Checks a parsed journal line against its event's schema. On success `event` is the line as a
 * {@link RunEvent} (fields the schema does not know are dropped); else `problem` names the event type and
 * the first field that failed, never a value.
 * @internal
 */
export function checkRunEvent(value: unknown): RunEventCheck {
  // The schema's type is checked to be RunEvent at compile time (runEvents.ts), so the parsed value is one.
  return checkEventLine(value) as RunEventCheck;
}
