/**
 * MCP tasks on a service session, both eras: a `tools/call` the server answers with a task is polled to
 * its end instead of waiting on the forwarding timeout.
 *
 * - 2025-11-25 (experimental `tasks`): the call carries `params.task` when the server declares
 *   `tasks.requests.tools.call` and the tool's `execution.taskSupport` is `optional` or `required`; a
 *   `CreateTaskResult` (`{ task }`) is polled with `tasks/get`, and a `completed` task's result is read
 *   with `tasks/result`.
 * - 2026-07-28 (extension `io.modelcontextprotocol/tasks`): the client declares the extension (see
 *   {@link TASK_CLIENT_CAPABILITIES}); the server may answer `resultType: "task"`; `tasks/get` returns the
 *   task with its `result` or `error` inline once it is terminal.
 *
 * Wire shapes are checked with the official `@modelcontextprotocol/ext-tasks` schemas (core/v1, core/v2).
 * Polling waits the server's interval clamped to {@link MIN_POLL_INTERVAL_MS}..{@link MAX_POLL_INTERVAL_MS}
 * (default {@link DEFAULT_POLL_INTERVAL_MS} when the server names none), each `tasks/get` bounded by the
 * forwarding timeout, the whole task by a per-call deadline (default {@link DEFAULT_TASK_DEADLINE_MS}).
 */
import {
  type CallToolResult,
  type Client,
  ProtocolError,
  type RequestOptions,
  type StandardSchemaV1,
  type Tool,
} from '@modelcontextprotocol/client';
import { SdkError } from '../errors.js';
import { isPlainObject } from '../plainObject.js';
import { KEPT_RESULT } from './rawToolCall.js';

/** The shortest wait between two `tasks/get` of one task, in milliseconds: 100. */
export const MIN_POLL_INTERVAL_MS = 100;
/** The longest wait between two `tasks/get` of one task, in milliseconds: 30,000 (a server's larger interval is cut to it). */
export const MAX_POLL_INTERVAL_MS = 30_000;
/** Milliseconds between two `tasks/get` when the server suggests no interval: 1,000. */
export const DEFAULT_POLL_INTERVAL_MS = 1000;
/** Default per-call task deadline in milliseconds: 86,400,000 (24 h); the workflow's `orchestration.taskDeadlineMs`. */
export const DEFAULT_TASK_DEADLINE_MS = 86_400_000;
/** Milliseconds a `tasks/cancel` may take before it is given up: 5,000. */
const CANCEL_TIMEOUT_MS = 5000;

/**
 * The 2026-07-28 tasks extension's id: `TASKS_EXTENSION_ID_V2` of `@modelcontextprotocol/ext-tasks/core/v2`
 * (a test checks they agree), written here so that a session does not load that entry to name it.
 */
export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';

/** What every service client declares so a 2026-07-28 server may answer a call with a task. */
export const TASK_CLIENT_CAPABILITIES = { extensions: { [TASKS_EXTENSION_ID]: {} } } as const;

type TaskSchemas = [
  typeof import('@modelcontextprotocol/ext-tasks/core/v1'),
  typeof import('@modelcontextprotocol/ext-tasks/core/v2'),
];
let taskSchemas: Promise<TaskSchemas> | undefined;

/**
 * The tasks extension's schemas (its v1 and v2 entries), loaded at a session's first task message rather
 * than with the session: loading them builds their zod schemas (~10 ms of CPU on Node 20, in every probe
 * and every service start), which a session whose service declares no tasks never uses. A failed load is
 * not kept: the next task message tries again.
 */
function schemas(): Promise<TaskSchemas> {
  taskSchemas ??= Promise.all([
    import('@modelcontextprotocol/ext-tasks/core/v1'),
    import('@modelcontextprotocol/ext-tasks/core/v2'),
  ]).catch((error: unknown) => {
    taskSchemas = undefined;
    throw error;
  });
  return taskSchemas;
}

/** The protocol era of a task: `legacy` 2025-11-25 experimental tasks, `modern` the 2026-07-28 extension. */
export type TaskEra = 'legacy' | 'modern';

/** A task a service accepted for a call: what is journaled and checkpointed to re-attach after a crash. */
export interface AcceptedTask {
  taskId: string;
  era: TaskEra;
  /** The server's suggested interval in milliseconds, as it gave it (before clamping). */
  pollIntervalMs?: number;
}

/** How a task-capable call is followed. */
export interface TaskFollowOptions {
  /** Milliseconds from acceptance until the task is given up (`task_deadline`, with `tasks/cancel`). Default 24 h. */
  deadlineMs?: number;
  /**
   * Called (and awaited) the moment the service answers with a task, before the first poll: the place to
   * journal and checkpoint the task id. A throw cancels the task and fails the call.
   */
  onAccepted?: (task: AcceptedTask) => void | Promise<void>;
  /** Called once polling begins (the caller stops its forwarding timer: a polled task is not cut by it). */
  onPolling?: () => void;
  /** Called after each `tasks/get` with the task's status (a keep-alive for faces). */
  onStatus?: (status: string, statusMessage: string | undefined) => void;
}

/** The outcome of sending a call that may become a task. */
export type TaskCallAnswer = { kind: 'result'; result: CallToolResult } | { kind: 'task'; task: AcceptedTask };

type ServerCaps = Record<string, unknown> & { tasks?: unknown; extensions?: Record<string, unknown> };

/**
 * Whether a call of `tool` is sent task-augmented: the server declares task support for `tools/call`
 * (2025-11-25) or the tasks extension (2026-07-28), and the tool does not forbid tasks (2025-11-25: it
 * says `optional` or `required`).
 */
export function callsAsTask(client: Client, tool: Tool | undefined): boolean {
  const caps = (client.getServerCapabilities() ?? {}) as ServerCaps;
  const taskSupport = (tool?.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
  if (client.getProtocolEra() === 'modern') {
    return (
      isPlainObject(caps.extensions) &&
      Object.hasOwn(caps.extensions, TASKS_EXTENSION_ID) &&
      taskSupport !== 'forbidden'
    );
  }
  if (!isPlainObject(caps.tasks)) return false;
  return declaresTaskToolCalls(caps.tasks) && (taskSupport === 'optional' || taskSupport === 'required');
}

/**
 * Whether 2025-11-25 task capabilities declare task-augmented `tools/call`: `hasTaskToolCallCapabilityV1` of
 * ext-tasks/core/v1, without loading that entry (a test checks they agree).
 */
export function declaresTaskToolCalls(capabilities: { requests?: { tools?: { call?: unknown } } }): boolean {
  return capabilities.requests?.tools?.call !== undefined;
}

/** A call result or a task-creation result, each checked by its own schema. */
const RESULT_OR_TASK: StandardSchemaV1<unknown, CallToolResult | Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'scienceevolve',
    validate(value) {
      if (isPlainObject(value) && (value.resultType === 'task' || isPlainObject(value.task))) return { value };
      return KEPT_RESULT['~standard'].validate(value) as StandardSchemaV1.Result<CallToolResult>;
    },
  },
};

/** The official client's request funnel, reached where its 2026-07-28 codec would refuse `resultType: "task"`. */
interface CodecFunnel {
  _negotiatedWireCodec?: () => { decodeResult: (method: string, raw: unknown) => unknown };
  _requestWithSchemaViaCodec?: (
    codec: unknown,
    request: unknown,
    schema: unknown,
    options: unknown,
  ) => Promise<unknown>;
}

/**
 * Sends `tools/call` asking for a task, answering either the call's result (the server chose to answer
 * at once) or the accepted task. On a 2026-07-28 connection the official client (2.4) decodes
 * `resultType: "task"` as an unsupported result type, so the request goes through the client's own
 * request funnel with its codec taught that one result type; everything else (framing, progress,
 * cancellation, the HTTP transport's per-request stream) stays the client's.
 */
export async function sendTaskCall(
  client: Client,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
  options: RequestOptions,
): Promise<TaskCallAnswer> {
  // Loaded before the request: once the service has created a task, failing to read its answer would leave
  // the task running, unfollowed and never cancelled.
  const [{ CreateTaskResultV1Schema }, { CreateTaskResultV2Schema }] = await schemas();
  let raw: unknown;
  if (client.getProtocolEra() === 'modern') {
    const funnel = client as unknown as CodecFunnel;
    const codec = funnel._negotiatedWireCodec?.();
    if (codec === undefined || funnel._requestWithSchemaViaCodec === undefined) {
      throw new SdkError(
        'unsupported_request',
        'the installed @modelcontextprotocol/client cannot receive 2026-07-28 task results',
        {
          remedy: 'Install the @modelcontextprotocol/client version the SDK declares (^2.4.0).',
        },
      );
    }
    const taskAware = Object.create(codec) as typeof codec;
    taskAware.decodeResult = (method, value) =>
      isPlainObject(value) && value.resultType === 'task'
        ? { kind: 'complete', result: value }
        : codec.decodeResult(method, value);
    raw = await funnel._requestWithSchemaViaCodec.call(
      client,
      taskAware,
      { method: 'tools/call', params },
      RESULT_OR_TASK,
      options,
    );
    if (isPlainObject(raw) && raw.resultType === 'task') {
      const task = parsed(CreateTaskResultV2Schema, raw, 'the task a tools/call created');
      return { kind: 'task', task: accepted(task.taskId, 'modern', task.pollIntervalMs) };
    }
    return { kind: 'result', result: raw as CallToolResult };
  }
  raw = await client.request({ method: 'tools/call', params: { ...params, task: {} } }, RESULT_OR_TASK, options);
  if (isPlainObject(raw) && isPlainObject(raw.task)) {
    const { task } = parsed(CreateTaskResultV1Schema, raw, 'the task a tools/call created');
    return { kind: 'task', task: accepted(task.taskId, 'legacy', task.pollInterval) };
  }
  return { kind: 'result', result: raw as CallToolResult };
}

function accepted(taskId: string, era: TaskEra, pollIntervalMs: number | undefined): AcceptedTask {
  return { taskId, era, ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }) };
}

/** The wait before the next `tasks/get`: the server's interval within the bounds, else the default. */
export function pollWait(suggestedMs: number | undefined): number {
  if (suggestedMs === undefined || !Number.isFinite(suggestedMs)) return DEFAULT_POLL_INTERVAL_MS;
  return Math.min(Math.max(Math.trunc(suggestedMs), MIN_POLL_INTERVAL_MS), MAX_POLL_INTERVAL_MS);
}

/** What polling a task needs besides the client. */
export interface PollOptions {
  /** The call, for messages: `tool "simulate" of service "lab"`. */
  what: string;
  /** Milliseconds each `tasks/get`/`tasks/result` may take (the forwarding timeout). */
  requestTimeoutMs: number;
  /** Epoch milliseconds when the task is given up. */
  deadlineAt: number;
  /** The caller's abort: stops polling; the caller decides whether to cancel the task. */
  signal?: AbortSignal;
  onStatus?: (status: string, statusMessage: string | undefined) => void;
  /** Answers a 2026-07-28 `input_required` task's questions (else the task fails `question_unanswered`). */
  answerInput?: (inputRequests: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

/**
 * Polls `task` until it ends: the result of a `completed` task; `task_failed`, `task_cancelled`,
 * `task_unknown` (the server no longer knows the id) or `task_deadline` (the task is cancelled at the
 * service first) otherwise. The caller's abort rejects with its reason and leaves the task running.
 */
export async function pollTask(client: Client, task: AcceptedTask, options: PollOptions): Promise<CallToolResult> {
  let wait = pollWait(task.pollIntervalMs);
  for (;;) {
    const left = options.deadlineAt - Date.now();
    if (left <= 0) {
      await cancelTask(client, task).catch(() => {});
      throw new SdkError(
        'task_deadline',
        `${options.what} ran as task ${task.taskId} past its deadline; the task was cancelled at the service`,
        {
          remedy: 'Raise orchestration.taskDeadlineMs in the workflow if the work needs longer, or ask for less.',
          data: { taskId: task.taskId, era: task.era },
        },
      );
    }
    await sleep(Math.min(wait, left), options.signal);
    const requestOptions: RequestOptions = {
      timeout: Math.max(1, Math.min(options.requestTimeoutMs, options.deadlineAt - Date.now())),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    if (Date.now() >= options.deadlineAt) continue;
    const status = await getTask(client, task, requestOptions, options.what);
    options.onStatus?.(status.status, status.statusMessage);
    wait = pollWait(status.pollIntervalMs ?? task.pollIntervalMs);
    switch (status.status) {
      case 'working':
        break;
      case 'input_required':
        if (task.era === 'legacy') {
          // 2025-11-25: the server asks its question on the tasks/result stream (the client's elicitation
          // handler answers it) and answers tasks/result when the task is done.
          return readLegacyResult(
            client,
            task,
            { ...requestOptions, timeout: Math.max(1, options.deadlineAt - Date.now()) },
            options.what,
          );
        }
        if (options.answerInput === undefined || status.inputRequests === undefined) {
          throw new SdkError(
            'question_unanswered',
            `${options.what} (task ${task.taskId}) asks for input and no one here answers it`,
            {
              remedy: 'Set agents.<agent>.elicitation in the workflow to "model" or "operator".',
              data: { taskId: task.taskId },
            },
          );
        }
        await client.request(
          {
            method: 'tasks/update',
            params: { taskId: task.taskId, inputResponses: await options.answerInput(status.inputRequests) },
          } as never,
          ANY_OBJECT,
          requestOptions,
        );
        break;
      case 'completed':
        return task.era === 'legacy'
          ? readLegacyResult(client, task, requestOptions, options.what)
          : keptResult(status.result, options.what);
      case 'failed':
        throw new SdkError(
          'task_failed',
          `${options.what} failed as task ${task.taskId}: ${status.errorMessage ?? status.statusMessage ?? 'the service gave no reason'}`,
          {
            remedy: "Read the service's message; fix the input or the service, then call the tool again.",
            data: { taskId: task.taskId, era: task.era },
          },
        );
      case 'cancelled':
        throw new SdkError(
          'task_cancelled',
          `${options.what} was cancelled as task ${task.taskId}${status.statusMessage ? `: ${status.statusMessage}` : ''}`,
          {
            remedy: 'Call the tool again if the work is still wanted.',
            data: { taskId: task.taskId, era: task.era },
          },
        );
    }
  }
}

/** A task's status as both eras report it. */
interface TaskStatusView {
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  statusMessage?: string | undefined;
  pollIntervalMs?: number | undefined;
  result?: unknown;
  errorMessage?: string | undefined;
  inputRequests?: Record<string, unknown> | undefined;
}

const ANY_OBJECT: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'scienceevolve',
    validate: (value) => (isPlainObject(value) ? { value } : { issues: [{ message: 'the result is not an object' }] }),
  },
};

async function getTask(
  client: Client,
  task: AcceptedTask,
  options: RequestOptions,
  what: string,
): Promise<TaskStatusView> {
  let raw: Record<string, unknown>;
  try {
    raw = await client.request({ method: 'tasks/get', params: { taskId: task.taskId } } as never, ANY_OBJECT, options);
  } catch (error) {
    if (error instanceof ProtocolError || typeof (error as { code?: unknown })?.code === 'number') {
      throw unknownTask(task, what, error);
    }
    throw error;
  }
  const [{ GetTaskResultV1Schema }, { DetailedTaskV2Schema }] = await schemas();
  if (task.era === 'legacy') {
    const t = parsed(GetTaskResultV1Schema, raw, `tasks/get of task ${task.taskId}`);
    return { status: t.status, statusMessage: t.statusMessage, pollIntervalMs: t.pollInterval };
  }
  const t = parsed(DetailedTaskV2Schema, raw, `tasks/get of task ${task.taskId}`);
  return {
    status: t.status,
    statusMessage: t.statusMessage,
    pollIntervalMs: t.pollIntervalMs,
    ...(t.status === 'completed' ? { result: t.result } : {}),
    ...(t.status === 'failed' ? { errorMessage: t.error.message } : {}),
    ...(t.status === 'input_required' ? { inputRequests: t.inputRequests as Record<string, unknown> } : {}),
  };
}

async function readLegacyResult(
  client: Client,
  task: AcceptedTask,
  options: RequestOptions,
  what: string,
): Promise<CallToolResult> {
  try {
    return await client.request(
      { method: 'tasks/result', params: { taskId: task.taskId } } as never,
      KEPT_RESULT,
      options,
    );
  } catch (error) {
    if (error instanceof ProtocolError || typeof (error as { code?: unknown })?.code === 'number') {
      throw new SdkError('task_failed', `${what} failed as task ${task.taskId}: ${(error as Error).message}`, {
        remedy: "Read the service's message; fix the input or the service, then call the tool again.",
        data: { taskId: task.taskId, era: task.era },
        cause: error,
      });
    }
    throw error;
  }
}

function keptResult(value: unknown, what: string): CallToolResult {
  const checked = KEPT_RESULT['~standard'].validate(value) as StandardSchemaV1.Result<CallToolResult>;
  if (checked.issues !== undefined) {
    throw new SdkError(
      'protocol_error',
      `${what}: the completed task's result is not a tool result (${checked.issues[0]?.message})`,
      {
        remedy: 'Fix the service: a completed task carries a CallToolResult.',
      },
    );
  }
  return checked.value;
}

function unknownTask(task: AcceptedTask, what: string, cause: unknown): SdkError {
  return new SdkError(
    'task_unknown',
    `${what}: the service no longer knows task ${task.taskId} (${(cause as Error)?.message ?? String(cause)}); the tool was not called again`,
    {
      remedy:
        'The work may be lost (a restarted service forgets its tasks): call the tool again if it is still wanted.',
      data: { taskId: task.taskId, era: task.era },
      cause,
    },
  );
}

/** Sends `tasks/cancel` for `task` (bounded by 5 s). Rejects when the service refuses or does not answer. */
export async function cancelTask(client: Client, task: AcceptedTask): Promise<void> {
  const options = { timeout: CANCEL_TIMEOUT_MS };
  if (task.era === 'legacy') {
    const [{ CancelTaskResultV1Schema }] = await schemas();
    await client.request(
      { method: 'tasks/cancel', params: { taskId: task.taskId } } as never,
      CancelTaskResultV1Schema,
      options,
    );
    return;
  }
  await client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } } as never, ANY_OBJECT, options);
}

function parsed<T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error } },
  value: unknown,
  what: string,
): T {
  const outcome = schema.safeParse(value);
  if (!outcome.success) {
    throw new SdkError('protocol_error', `${what} is not a valid task: ${outcome.error.message.slice(0, 300)}`, {
      remedy: 'Fix the service: its task messages must match the MCP tasks schema of its protocol era.',
    });
  }
  return outcome.data;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    // Not unref'd: the wait between two polls is the work the caller awaits (a host whose only service is
    // remote has nothing else keeping its event loop alive while a task runs).
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
