/**
 * A face's own MCP tasks (SPEC §7): a face client that declares tasks and calls a task-capable tool gets
 * a task of the face's, polls it through the face, and can cancel it there.
 *
 * - 2025-11-25 (experimental `tasks`): the face declares `tasks` (`list`, `cancel`,
 *   `requests.tools.call`); a `tools/call` carrying `params.task` is answered `{ task }`; the face serves
 *   `tasks/get`, `tasks/result` (waits for the end), `tasks/list` (not on the HTTP face) and `tasks/cancel`.
 * - 2026-07-28 (extension `io.modelcontextprotocol/tasks`): the face declares the extension; a
 *   `tools/call` whose request envelope declares it is answered `resultType: "task"`; the face serves
 *   `tasks/get` (result or error inline once terminal), `tasks/update` and `tasks/cancel`.
 *
 * A call becomes a face task at once when the tool is listed `execution.taskSupport: "optional"` or
 * `"required"`; otherwise the call is answered directly unless the service answers it with a task, which
 * then becomes a face task. The work behind a face task is the surface's ordinary call: the SDK's task
 * follower polls the service's task within its bounds, and in a run the journal records it. The face's
 * task ids are its own (the v1 SDK's `InMemoryTaskStore`: 16 random bytes), never the service's; each
 * stdio or socket connection has its own tasks, the HTTP face one set whose ids only their creator knows.
 * Wire shapes are built with `@modelcontextprotocol/ext-tasks`' schemas (core/v1, core/v2). The requests
 * themselves are registered on the face's server by faceTaskRequests.ts.
 */
import { createRequire } from 'node:module';
import type { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { type CallToolResult, ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import { CreateTaskResultV1Schema, type TaskV1, TaskV1Schema } from '@modelcontextprotocol/ext-tasks/core/v1';
import { CreateTaskResultV2Schema, DetailedTaskV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { Surface, SurfaceProgress } from '../surface/surface.js';

// The store's CommonJS build is loaded by path: it needs only node:crypto, where the package's
// `experimental/tasks` entry would load the whole v1 SDK.
const { InMemoryTaskStore: Store } = createRequire(import.meta.url)(
  '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js',
) as { InMemoryTaskStore: new () => InMemoryTaskStore };

/** Milliseconds a face task is kept from its creation, when the client asks for no `ttl`: 86,400,000 (24 h). */
export const FACE_TASK_TTL_MS = 86_400_000;
/** The shortest `ttl` a face task gets, whatever the client asks: 60,000 ms. */
export const MIN_FACE_TASK_TTL_MS = 60_000;
/** The interval the face suggests for polling its tasks: 500 ms. */
export const FACE_TASK_POLL_INTERVAL_MS = 500;
/** Face tasks one face (or connection) keeps at once, working or ended within their ttl: 1,000. */
export const MAX_FACE_TASKS = 1000;
/** Milliseconds `tasks/cancel` waits for the work to stop (and the service's task to be cancelled): 6,000. */
const CANCEL_WAIT_MS = 6000;
/** The `_meta` key relating a result to its task (2025-11-25). */
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** The protocol era of a face task. */
export type FaceTaskEra = 'legacy' | 'modern';

/** What the client asked for in a `tools/call`: a task of `era` (with its `ttl`, 2025-11-25). */
export interface TaskRequest {
  era: FaceTaskEra;
  ttl?: number;
}

/** One face task's work: the surface call behind it. */
interface Running {
  era: FaceTaskEra;
  abort: AbortController;
  /** Settles when the service has accepted the call as a task of its own (never, if it answers directly). */
  accepted: Promise<void>;
  /** Settles when the work has ended and its outcome is stored. */
  done: Promise<void>;
}

/** A face task's outcome kept beside the store's record (2026-07-28 `failed` carries a JSON-RPC error). */
interface Ended {
  /** The tool's surface name (its output schema projects the result). */
  tool: string;
  result?: CallToolResult;
  error?: { code: number; message: string };
}

/** The answer of a task-asking `tools/call`: the result (the call was answered directly) or the face's task. */
export type FaceCallAnswer =
  | { kind: 'result'; result: CallToolResult }
  | { kind: 'task'; answer: Record<string, unknown> };

/** Where the progress of a task-asking call answered directly goes (see faceTaskRequests.ts' `RequestProgress`). */
export interface CallProgress {
  onProgress(progress: SurfaceProgress): void;
  /** Sends nothing more; resolves once what was on its way is sent. */
  close(): Promise<void>;
}

/** Options of {@link FaceTasks}. */
export interface FaceTasksOptions {
  /**
   * Whether `tasks/list` is offered: yes (default) for a face whose tasks are one client's (a stdio or
   * socket connection); not for the HTTP face, whose clients share one token: there a task's id is its key.
   */
  listable?: boolean;
  /** Tasks kept at once (working, or ended within their ttl). Default {@link MAX_FACE_TASKS}. */
  maxTasks?: number;
}

/** The tasks of one face connection (stdio, socket) or of one HTTP face; see the module comment. */
export class FaceTasks {
  private readonly store = new Store();
  private readonly running = new Map<string, Running>();
  private readonly ended = new Map<string, Ended>();
  private closed = false;

  /** Whether `tasks/list` is offered (see {@link FaceTasksOptions.listable}). */
  readonly listable: boolean;
  private readonly maxTasks: number;

  constructor(
    private readonly surface: Surface,
    options: FaceTasksOptions = {},
  ) {
    this.listable = options.listable ?? true;
    this.maxTasks = options.maxTasks ?? MAX_FACE_TASKS;
  }

  /**
   * Calls `name` for a client that asked for a task: a face task at once when the tool is listed
   * task-capable, else the direct answer unless the service answers with a task. `signal` is the
   * request's: it cancels the call until the face task exists (the task then lives on its own).
   */
  async call(
    name: string,
    args: Record<string, unknown> | undefined,
    asked: TaskRequest,
    signal: AbortSignal,
    progress?: CallProgress,
  ): Promise<FaceCallAnswer> {
    if (this.closed) throw new ProtocolError(ProtocolErrorCode.InternalError, 'the face is closing');
    const listed = this.surface.tools.find((tool) => tool.name === name);
    const support = (listed?.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
    const declared = support === 'optional' || support === 'required';
    // A call that will be a face task is refused before it reaches the service when the face is full.
    if (declared) this.checkRoom();
    const abort = new AbortController();
    const onRequestAbort = () => abort.abort(signal.reason);
    signal.addEventListener('abort', onRequestAbort, { once: true });
    let taskId: string | undefined;
    let upstreamAccepted!: () => void;
    const accepted = new Promise<void>((resolve) => {
      upstreamAccepted = resolve;
    });
    // A call answered directly keeps the request's progress (a face task's answer ends the request).
    const direct = !declared && progress !== undefined ? progress : undefined;
    const work = this.surface.callTool(name, args, {
      signal: abort.signal,
      ...(direct === undefined ? {} : { onProgress: direct.onProgress }),
      task: {
        onAccepted: () => upstreamAccepted(),
        onStatus: (status, statusMessage) => {
          if (taskId === undefined || status !== 'working' || statusMessage === undefined) return;
          // The service's own words on its task's progress, shown on the face's task.
          this.store.updateTaskStatus(taskId, 'working', statusMessage).catch(() => {});
        },
      },
    });
    // Its failure is handled where it is awaited; a call given up below (abort) must not go unhandled.
    work.catch(() => {});
    try {
      if (!declared) {
        const first = await Promise.race([work.then((result) => ({ result })), accepted.then(() => undefined)]);
        if (first !== undefined) return { kind: 'result', result: first.result };
      }
    } finally {
      signal.removeEventListener('abort', onRequestAbort);
      await direct?.close();
    }
    if (signal.aborted) {
      abort.abort(signal.reason);
      throw signal.reason;
    }
    try {
      this.checkRoom();
    } catch (error) {
      // The service made the call a task of its own: the SDK's follower cancels it.
      abort.abort(new Error('too many face tasks'));
      throw error;
    }
    const ttl = Math.min(Math.max(Math.trunc(asked.ttl ?? FACE_TASK_TTL_MS), MIN_FACE_TASK_TTL_MS), FACE_TASK_TTL_MS);
    const task = await this.store.createTask({ ttl, pollInterval: FACE_TASK_POLL_INTERVAL_MS }, 0, {
      method: 'tools/call',
      params: { name },
    });
    const id = task.taskId;
    taskId = id;
    // A task still working when its ttl runs out is dropped by the store: its work is cancelled then.
    const expiry = setTimeout(() => abort.abort(new Error(`face task ${id} ran past its ttl`)), ttl);
    expiry.unref();
    const done = work
      .then(
        (result) => this.settle(id, asked.era, { tool: name, result }),
        (error: unknown) => this.settle(id, asked.era, { tool: name, error: wireError(error) }),
      )
      .finally(() => {
        clearTimeout(expiry);
        this.running.delete(id);
      });
    this.running.set(id, { era: asked.era, abort, accepted, done });
    return { kind: 'task', answer: createdAnswer(task, asked.era) };
  }

  /** Throws InvalidRequest when the face keeps its limit of tasks (dropping the outcomes of expired ones first). */
  private checkRoom(): void {
    const kept = this.store.getAllTasks();
    const live = new Set(kept.map((task) => task.taskId));
    for (const id of this.ended.keys()) if (!live.has(id)) this.ended.delete(id);
    if (kept.length >= this.maxTasks) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidRequest,
        `this face keeps at most ${this.maxTasks} tasks at once (working, or ended within their ttl); wait for some to expire, ask for a shorter ttl, or call without a task`,
      );
    }
  }

  /** Stores the end of `id`'s work, unless the task was cancelled (or dropped) meanwhile. */
  private async settle(id: string, era: FaceTaskEra, ended: Ended): Promise<void> {
    const current = await this.store.getTask(id);
    if (current === null || isTerminal(current.status)) return;
    this.ended.set(id, ended);
    const failed = ended.error !== undefined || (era === 'legacy' && ended.result?.isError === true);
    const result: CallToolResult = ended.result ?? {
      content: [{ type: 'text', text: ended.error?.message ?? 'the call failed' }],
      isError: true,
    };
    await this.store.storeTaskResult(id, failed ? 'failed' : 'completed', result).catch(() => {});
  }

  /** The task `id`, or InvalidParams naming it. */
  private async known(id: string): Promise<TaskV1> {
    const task = await this.store.getTask(id);
    if (task === null) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `this face has no task "${id}" (unknown, or expired)`);
    }
    return TaskV1Schema.parse(task);
  }

  /** `tasks/get`, 2025-11-25: the task. */
  async getLegacy(id: string): Promise<TaskV1> {
    return this.known(id);
  }

  /** `tasks/result`, 2025-11-25: waits for the task's end (or `signal`), then its result as `server` projects it. */
  async resultLegacy(id: string, server: Server, signal: AbortSignal): Promise<CallToolResult> {
    await this.known(id);
    const work = this.running.get(id);
    if (work !== undefined) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        void work.done.then(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
    const task = await this.known(id);
    if (task.status === 'cancelled') {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `task "${id}" was cancelled: it has no result`);
    }
    const result = (await this.store.getTaskResult(id)) as CallToolResult;
    const projected = this.project(server, this.ended.get(id)?.tool, result);
    return { ...projected, _meta: { ...projected._meta, [RELATED_TASK]: { taskId: id } } };
  }

  /** `tasks/list`, 2025-11-25: a page of this face's tasks. */
  async list(cursor: string | undefined): Promise<{ tasks: TaskV1[]; nextCursor?: string }> {
    try {
      const page = await this.store.listTasks(cursor);
      return {
        tasks: page.tasks.map((task) => TaskV1Schema.parse(task)),
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
      };
    } catch (error) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, (error as Error).message);
    }
  }

  /** `tasks/get`, 2026-07-28: the task, its result or error inline once terminal. */
  async getModern(id: string, server: Server): Promise<Record<string, unknown>> {
    const task = await this.known(id);
    const ended = this.ended.get(id);
    const detail: Record<string, unknown> = {
      taskId: task.taskId,
      status: task.status,
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttlMs: task.ttl,
      pollIntervalMs: task.pollInterval ?? FACE_TASK_POLL_INTERVAL_MS,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      ...(task.status === 'completed' && ended?.result !== undefined
        ? // The inline result is a 2026-07-28 result in its own right: it says `resultType` too.
          { result: { ...this.project(server, ended.tool, ended.result), resultType: 'complete' } }
        : {}),
      ...(task.status === 'failed'
        ? { error: ended?.error ?? { code: ProtocolErrorCode.InternalError, message: 'the call failed' } }
        : {}),
    };
    return { ...DetailedTaskV2Schema.parse(detail), resultType: 'complete' };
  }

  /** `tasks/update`, 2026-07-28: a face task never waits for input, so there is nothing to take. */
  async update(id: string): Promise<Record<string, unknown>> {
    await this.known(id);
    return { resultType: 'complete' };
  }

  /**
   * `tasks/cancel`: marks the task cancelled and stops its work — the service's task is cancelled by the
   * SDK's task follower — waiting (at most 6 s) for that to be done. A terminal task is InvalidParams.
   */
  async cancel(id: string): Promise<TaskV1> {
    const task = await this.known(id);
    if (isTerminal(task.status)) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `task "${id}" is already ${task.status}; only a working task can be cancelled`,
      );
    }
    await this.store.updateTaskStatus(id, 'cancelled', 'cancelled by the client').catch(() => {});
    const work = this.running.get(id);
    if (work !== undefined) await stopWork(work, `face task ${id} was cancelled by the client`);
    return this.known(id);
  }

  /** Stops every running task's work (their service tasks are cancelled) and forgets every task. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.running.values()].map((work) => stopWork(work, 'the face closed')));
    this.store.cleanup();
    this.ended.clear();
  }

  /** A result as the wire of `server`'s era carries it (the tool's output schema as listed now). */
  private project(server: Server, tool: string | undefined, result: CallToolResult): CallToolResult {
    const outputSchema = result.isError
      ? undefined
      : (this.surface.tools.find((t) => t.name === tool)?.outputSchema as Record<string, unknown> | undefined);
    return server.projectCallToolResult(result, outputSchema);
  }
}

/** Resolves when `promise` settles or after `ms` milliseconds, whichever is first. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/**
 * Stops a face task's work so that the service's task is cancelled too: a call still on its way to the
 * service is stopped only once the service has answered it with a task (the SDK's follower then cancels
 * that task by its id) or the call ended, at most 6 s; stopped earlier, the service could keep a task whose
 * id no one here knows. Then waits (at most 6 s) for the work to end.
 */
async function stopWork(work: Running, reason: string): Promise<void> {
  await within(Promise.race([work.accepted, work.done]), CANCEL_WAIT_MS);
  work.abort.abort(new Error(reason));
  await within(work.done, CANCEL_WAIT_MS);
}

function isTerminal(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** The `tools/call` answer that hands the client `task`. */
function createdAnswer(task: unknown, era: FaceTaskEra): Record<string, unknown> {
  const t = TaskV1Schema.parse(task);
  if (era === 'legacy') return CreateTaskResultV1Schema.parse({ task: t });
  return CreateTaskResultV2Schema.parse({
    taskId: t.taskId,
    status: t.status,
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.ttl,
    pollIntervalMs: t.pollInterval,
    resultType: 'task',
  });
}

/** What a failed call carries on the 2026-07-28 wire: its JSON-RPC code when it had one. */
function wireError(error: unknown): { code: number; message: string } {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return { code: typeof code === 'number' && Number.isInteger(code) ? code : ProtocolErrorCode.InternalError, message };
}
