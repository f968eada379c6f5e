/**
 * The surface's part of MCP tasks: a caller's {@link SurfaceTaskOptions} become the session's task
 * options, with the gate's `polling` (the forwarding timeout stops once a call is a task) and the
 * service's and tool's names on what the caller is told.
 */
import type { TaskFollowOptions } from '../sessions/tasks.js';
import type { SurfaceRequestOptions } from './surfaceTypes.js';

/** The session's task options of one call of `tool` (its own name) on `service`. */
export function taskOptions(
  requestOptions: SurfaceRequestOptions,
  service: string,
  tool: string,
  polling: () => void,
): TaskFollowOptions {
  const given = requestOptions.task;
  const onAccepted = given?.onAccepted;
  const onStatus = given?.onStatus;
  return {
    onPolling: polling,
    ...(given?.deadlineMs === undefined ? {} : { deadlineMs: given.deadlineMs }),
    ...(onAccepted === undefined
      ? {}
      : { onAccepted: (task) => onAccepted({ service, tool, taskId: task.taskId, era: task.era }) }),
    ...(onStatus === undefined ? {} : { onStatus }),
  };
}
