/**
 * The tasks one service session follows: a task-capable `tools/call` is sent under the forwarding
 * timeout; once the service answers with a task, the task is reported (`onAccepted`, awaited: the
 * engine journals and checkpoints it there), the caller's forwarding timer is stopped (`onPolling`) and
 * the task is polled (sessions/tasks.ts) to its end or its deadline. Progress notifications of the call
 * keep flowing to the caller for the whole life of the task. A caller's abort (a cancelled run or
 * invocation) sends `tasks/cancel`; so does closing the session for every task still followed.
 */
import type { CallToolResult, Client, RequestOptions } from '@modelcontextprotocol/client';
import { isSdkError } from '../errors.js';
import { MAX_DURATION_MS } from '../workflow/durations.js';
import { routeProgress } from './mcpCatalog.js';
import type { ForwardOptions } from './serviceSession.js';
import {
  type AcceptedTask,
  cancelTask,
  DEFAULT_TASK_DEADLINE_MS,
  pollTask,
  sendTaskCall,
  type TaskCallAnswer,
} from './tasks.js';

/** How the session forwards one request (its `forward`: timeout, caller's abort, coded failures). */
type Forward = (
  what: string,
  options: ForwardOptions,
  send: (client: Client, requestOptions: RequestOptions) => Promise<TaskCallAnswer>,
) => Promise<TaskCallAnswer>;

/** Follows the tasks of one session; see the module comment. */
export class TaskFollower {
  /** Tasks accepted and not ended, by id. */
  private readonly open = new Map<string, AcceptedTask>();
  /** `tasks/cancel` requests on their way (see {@link TaskFollower.cancelAll}). */
  private readonly cancelling = new Set<Promise<void>>();

  constructor(
    private readonly service: string,
    private readonly client: () => Client,
    private readonly callFailed: (error: unknown, what: string) => Promise<unknown> | unknown,
  ) {}

  /** Task ids this session follows now. */
  get openTaskIds(): string[] {
    return [...this.open.keys()];
  }

  /** Sends `name` task-augmented and follows a task it becomes; a direct answer is returned as is. */
  async call(
    name: string,
    args: Record<string, unknown> | undefined,
    options: ForwardOptions,
    forward: Forward,
  ): Promise<CallToolResult> {
    const onProgress = options.onProgress;
    // One progress token for the call and its task: the server reports the task's progress under the
    // token of the call that created it.
    const route = onProgress === undefined ? undefined : routeProgress(this.client(), onProgress);
    try {
      const params = {
        name,
        ...(args === undefined ? {} : { arguments: args }),
        ...(route === undefined ? {} : { _meta: { progressToken: route.token } }),
      };
      const { onProgress: _ignored, ...sendOptions } = options;
      const answer = await forward(`tools/call "${name}"`, sendOptions, (client, requestOptions) =>
        sendTaskCall(client, params, requestOptions),
      );
      if (answer.kind === 'result') return answer.result;
      const task = answer.task;
      this.open.set(task.taskId, task);
      try {
        await options.task?.onAccepted?.(task);
      } catch (error) {
        await this.cancel(task);
        throw error;
      }
      return await this.followOpen(name, task, options);
    } finally {
      route?.stop();
    }
  }

  /** Re-attaches to `task` (accepted before, by an earlier host) and follows it. */
  follow(tool: string, task: AcceptedTask, options: ForwardOptions): Promise<CallToolResult> {
    this.open.set(task.taskId, task);
    const route = options.onProgress === undefined ? undefined : routeProgress(this.client(), options.onProgress);
    return this.followOpen(tool, task, options).finally(() => route?.stop());
  }

  /**
   * Sends `tasks/cancel` for every open task (5 s each at most, all at once), and waits for the cancels
   * already on their way (a caller's abort sends its own): the session closes only once they are answered,
   * or the transport would cut them. Never rejects.
   */
  async cancelAll(): Promise<void> {
    const tasks = [...this.open.values()];
    this.open.clear();
    await Promise.all([...tasks.map((task) => this.cancel(task)), ...this.cancelling]);
  }

  private async followOpen(tool: string, task: AcceptedTask, options: ForwardOptions): Promise<CallToolResult> {
    const what = `tool "${tool}" of service "${this.service}"`;
    options.task?.onPolling?.();
    const deadlineMs = Math.min(Math.max(1, options.task?.deadlineMs ?? DEFAULT_TASK_DEADLINE_MS), MAX_DURATION_MS);
    try {
      const client = this.client();
      const onStatus = options.task?.onStatus;
      return await pollTask(client, task, {
        what,
        requestTimeoutMs: options.timeoutMs ?? 60_000,
        deadlineAt: Date.now() + deadlineMs,
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(onStatus === undefined ? {} : { onStatus }),
      });
    } catch (error) {
      if (options.signal?.aborted) {
        // The caller (a cancelled run or invocation) gave up: the work is not wanted any more.
        await this.cancel(task);
        throw options.signal.reason;
      }
      if (isSdkError(error)) throw error;
      throw await this.callFailed(error, `task ${task.taskId} of tool "${tool}"`);
    } finally {
      this.open.delete(task.taskId);
    }
  }

  private cancel(task: AcceptedTask): Promise<void> {
    this.open.delete(task.taskId);
    const sent = cancelTask(this.client(), task).catch(() => {
      // Best effort: a service that is gone or refuses has no task left to stop, or keeps it to its ttl.
    });
    this.cancelling.add(sent);
    return sent.finally(() => this.cancelling.delete(sent));
  }
}
