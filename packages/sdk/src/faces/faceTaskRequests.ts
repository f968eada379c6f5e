/**
 * The requests of a face's own tasks (faces/faceTasks.ts) on the v2 `Server`: whether a `tools/call` asks
 * for a task, the task capability of each era, the task requests each era serves, and the progress of a
 * task-asking call that is answered directly.
 */
import type { Server } from '@modelcontextprotocol/server';
import {
  CancelTaskRequestV1Schema,
  GetTaskRequestV1Schema,
  GetTaskResultRequestV1Schema,
  ListTasksRequestV1Schema,
} from '@modelcontextprotocol/ext-tasks/core/v1';
import {
  CancelTaskRequestV2Schema,
  GetTaskRequestV2Schema,
  hasTaskClientCapabilityV2,
  TASKS_EXTENSION_ID_V2,
  UpdateTaskRequestV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { isPlainObject } from '../plainObject.js';
import type { SurfaceProgress } from '../surface/surface.js';
import type { CallProgress, FaceTaskEra, FaceTasks, TaskRequest } from './faceTasks.js';

/** The task a `tools/call` asks for, if any: `params.task` (2025-11-25) or the envelope's extension (2026-07-28). */
export function taskRequested(params: unknown, envelope: unknown): TaskRequest | undefined {
  if (envelope !== undefined && hasTaskClientCapabilityV2({ _meta: envelope })) return { era: 'modern' };
  if (!isPlainObject(params) || !isPlainObject(params.task)) return undefined;
  const ttl = params.task.ttl;
  return { era: 'legacy', ...(typeof ttl === 'number' && Number.isFinite(ttl) ? { ttl } : {}) };
}

/** The capabilities a face that serves `tasks` declares, for a server of `era` (`list` only if they are listable). */
export function faceTaskCapabilities(era: FaceTaskEra, tasks: FaceTasks): Record<string, unknown> {
  return era === 'legacy'
    ? { tasks: { ...(tasks.listable ? { list: {} } : {}), cancel: {}, requests: { tools: { call: {} } } } }
    : { extensions: { [TASKS_EXTENSION_ID_V2]: {} } };
}

/**
 * The progress of the request a task-asking `tools/call` came in: each value sent is above the last, in
 * order, all of it before the answer ({@link RequestProgress.close} waits for what is on its way and sends
 * nothing after).
 */
export class RequestProgress implements CallProgress {
  private sent: Promise<void> = Promise.resolve();
  private last = Number.NEGATIVE_INFINITY;
  private open = true;

  constructor(
    private readonly token: string | number,
    private readonly notify: (notification: {
      method: 'notifications/progress';
      params: Record<string, unknown>;
    }) => Promise<void>,
  ) {}

  readonly onProgress = (progress: SurfaceProgress): void => {
    if (!this.open || !(progress.progress > this.last)) return;
    this.last = progress.progress;
    const params = { progressToken: this.token, ...progress };
    this.sent = this.sent.then(() =>
      this.notify({ method: 'notifications/progress', params }).catch(() => {
        // The client went away mid-call: its progress has nowhere to go.
      }),
    );
  };

  /** Sends nothing more; resolves once what was on its way is sent. */
  close(): Promise<void> {
    this.open = false;
    return this.sent;
  }
}

/**
 * Registers the task requests of `era` on `server`, answered from `tasks`: 2025-11-25 `tasks/get`,
 * `tasks/result`, `tasks/list` (when listable), `tasks/cancel`; 2026-07-28 `tasks/get`, `tasks/update`, `tasks/cancel`.
 */
export function serveFaceTasks(server: Server, tasks: FaceTasks, era: FaceTaskEra): void {
  if (era === 'legacy') {
    server.setRequestHandler('tasks/get', { params: GetTaskRequestV1Schema.shape.params }, ({ taskId }) =>
      tasks.getLegacy(taskId),
    );
    server.setRequestHandler('tasks/result', { params: GetTaskResultRequestV1Schema.shape.params }, ({ taskId }, ctx) =>
      tasks.resultLegacy(taskId, server, ctx.mcpReq.signal),
    );
    if (tasks.listable) {
      server.setRequestHandler('tasks/list', { params: ListTasksRequestV1Schema.shape.params }, (params) =>
        tasks.list(params?.cursor),
      );
    }
    server.setRequestHandler('tasks/cancel', { params: CancelTaskRequestV1Schema.shape.params }, ({ taskId }) =>
      tasks.cancel(taskId),
    );
    return;
  }
  server.setRequestHandler('tasks/get', { params: GetTaskRequestV2Schema.shape.params }, ({ taskId }) =>
    tasks.getModern(taskId, server),
  );
  server.setRequestHandler('tasks/update', { params: UpdateTaskRequestV2Schema.shape.params }, ({ taskId }) =>
    tasks.update(taskId),
  );
  server.setRequestHandler('tasks/cancel', { params: CancelTaskRequestV2Schema.shape.params }, async ({ taskId }) => {
    await tasks.cancel(taskId);
    return { resultType: 'complete' };
  });
}
