/**
 * The MCP tasks of a queued attempt, kept in Redis the moment they are accepted (SPEC §7, §10.3). A queue
 * worker's events reach the coordinator only with the job's result, so a worker that dies while a task
 * runs would take the task's id with it. Instead the worker appends each `tool.task_accepted` event to its
 * job's log (a Redis list kept with the job) before the task is polled, and:
 *
 * - a worker that takes the same job again (its first taker died: a stalled job) reads the log and adds
 *   those tasks to the spec's `openTasks`, so the replayed call re-attaches to the task;
 * - the coordinator, when the job ends (or, on `resume`, when it finds the job failed), journals the
 *   logged events its journal lacks, so the invocation's next attempt — a new job whose spec is built from
 *   the journal — re-attaches too, as a local attempt does.
 *
 * A log line is checked as any event of a worker's result is (engine/jobEvents.ts): anything in Redis may
 * have been written by something else.
 */
import { checkJobEvents, type JobEventOwner } from './jobEvents.js';
import type { OpenTask } from './taskResume.js';
import type { TaskAcceptedInput } from './toolJournal.js';

/** How a task's line in a job's log begins (the event's JSON follows). */
export const TASK_LOG_PREFIX = 'task accepted ';

/** The job-log line of an accepted task. */
export function taskLogLine(event: TaskAcceptedInput): string {
  return `${TASK_LOG_PREFIX}${JSON.stringify(event)}`;
}

/**
 * The `tool.task_accepted` events a job's log holds, oldest first, each checked against the job.
 *
 * @throws SdkError `invalid_job` for a task line that is not JSON or not an accepted task of the job's own
 * invocation (the same refusal as a forged result's event).
 */
export function tasksOfJobLog(lines: readonly string[], owner: JobEventOwner): TaskAcceptedInput[] {
  const events: unknown[] = [];
  for (const line of lines) {
    if (!line.startsWith(TASK_LOG_PREFIX)) continue;
    let event: unknown;
    try {
      event = JSON.parse(line.slice(TASK_LOG_PREFIX.length));
    } catch {
      event = line.slice(0, 80);
    }
    // Only accepted tasks are logged: a line of another type is refused by its type below.
    if (typeof event === 'object' && event !== null && (event as { type?: unknown }).type !== 'tool.task_accepted') {
      event = { ...event, type: 'not-a-task' };
    }
    events.push(event);
  }
  checkJobEvents(events, owner);
  return events as TaskAcceptedInput[];
}

/** `open` with the tasks of `events` it does not hold yet (by task id), in order. */
export function withLoggedTasks(open: readonly OpenTask[], events: readonly TaskAcceptedInput[]): OpenTask[] {
  const out = [...open];
  for (const e of events) {
    if (out.some((task) => task.taskId === e.taskId)) continue;
    out.push({ tool: e.tool, argumentsDigest: e.argumentsDigest, taskId: e.taskId, era: e.era });
  }
  return out;
}
