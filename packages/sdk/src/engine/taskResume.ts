/**
 * Tasks to re-attach to after a host crash (SPEC §7, §10.3): a call a service accepted as an MCP task is
 * journaled at once (`tool.task_accepted`, with the digest of its arguments); a task whose call was never
 * answered (no `tool.called` carries its id) is open. When the resumed harness makes the same call again
 * (same tool, same arguments), the surface re-attaches to the open task instead of calling the tool.
 * The journal's lines are not typed on read (the run's folder is the user's), so each field is checked.
 */
import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { AttemptSpec } from '../schemas/attempt.js';

/** A task accepted for a call of the invocation and not answered yet (the attempt spec's `openTasks`). */
export type OpenTask = NonNullable<AttemptSpec['openTasks']>[number];

/** sha256 (hex) of the canonical JSON of a call's arguments (`{}` when none). */
export function argumentsDigest(args: Record<string, unknown> | undefined): string {
  return createHash('sha256')
    .update(stableStringify(args ?? {}))
    .digest('hex');
}

/** The open tasks of `invocation` among `events` (a run's journal, in order). */
export function openTasks(events: readonly unknown[], invocation: string): OpenTask[] {
  const open = new Map<string, OpenTask>();
  for (const event of events) {
    if (typeof event !== 'object' || event === null) continue;
    const e = event as Record<string, unknown>;
    if (e.invocation !== invocation || typeof e.taskId !== 'string') continue;
    if (e.type === 'tool.task_accepted') {
      if (typeof e.tool !== 'string' || typeof e.argumentsDigest !== 'string') continue;
      if (e.era !== 'legacy' && e.era !== 'modern') continue;
      open.set(e.taskId, { tool: e.tool, argumentsDigest: e.argumentsDigest, taskId: e.taskId, era: e.era });
    } else if (e.type === 'tool.called') {
      open.delete(e.taskId);
    }
  }
  return [...open.values()];
}

/** The ids of every task journaled as accepted for `invocation` among `events`, answered or not. */
export function acceptedTaskIds(events: readonly unknown[], invocation: string): Set<string> {
  const ids = new Set<string>();
  for (const event of events) {
    if (typeof event !== 'object' || event === null) continue;
    const e = event as Record<string, unknown>;
    if (e.type === 'tool.task_accepted' && e.invocation === invocation && typeof e.taskId === 'string')
      ids.add(e.taskId);
  }
  return ids;
}
