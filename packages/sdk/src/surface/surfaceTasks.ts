/**
 * The surface's part of MCP tasks and questions: a model's `answer` argument is taken out of a call's
 * arguments (when the tool does not declare one itself). And MCP tasks: a caller's {@link SurfaceTaskOptions} become the session's task
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

/**
 * `args` without the model's `answer` to a service's question, and that answer: an object under `answer`
 * when the tool's input schema does not declare an `answer` property of its own (then it is the tool's).
 */
export function takeAnswer(
  inputSchema: { properties?: unknown } | undefined,
  args: Record<string, unknown>,
): { input: Record<string, unknown>; answer?: Record<string, unknown> } {
  const properties = inputSchema?.properties;
  const declared = typeof properties === 'object' && properties !== null && Object.hasOwn(properties, 'answer');
  if (declared || !Object.hasOwn(args, 'answer')) return { input: args };
  const { answer, ...input } = args;
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { input: args };
  return { input, answer: answer as Record<string, unknown> };
}
