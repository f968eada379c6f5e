/**
 * The observed surface: every tool call an agent makes, whatever harness decides it, is journaled
 * (`tool.calling`, then `tool.called` with bounded arguments, a bounded result summary, the digest of the
 * result as a harness records it and the caller's call id) and counted. The digest is what `resume`
 * checks a checkpoint's recorded results against (SPEC §10.3).
 */
import { performance } from 'node:perf_hooks';
import { type Surface, withCallTool } from '../surface/surface.js';
import { ERROR_META_KEY } from '../surface/surfaceDispatch.js';
import { isSdkError } from '../errors.js';
import type { RunEventInput } from '../events/runEvents.js';
import { telemetry } from '../events/telemetry.js';
import type { SurfaceTaskOptions } from '../surface/surfaceTypes.js';
import { argumentsDigest, type OpenTask } from './taskResume.js';
import { redactElicited, redactQuestionSchema, redactUrl } from '../redact.js';
import {
  DEFAULT_ELICITATION_POLICY,
  type ElicitationPolicy,
  type Question,
  type QuestionOptions,
} from '../sessions/elicitation.js';
import { resultText } from '../harness/harness.js';
import { type RecordedToolResult, recordedAnswer, recordedFailure, resultDigest } from '../harness/stepDigests.js';

/** Bytes of a tool result's text kept in a `tool.called` event: 1 KiB. */
export const TOOL_SUMMARY_BYTES = 1024;
/** Bytes of a call's JSON arguments kept whole in a `tool.called` event: 4 KiB; longer ones are cut. */
export const TOOL_ARGUMENTS_BYTES = 4096;

/** Whose calls are observed, and where they are reported. */
export interface ObserveOptions {
  invocation: string;
  agent: string;
  emit: (event: RunEventInput) => void;
  /** Called once for every call that reached the surface (before it is answered). */
  onCall?: () => void;
  /** Milliseconds a call that became an MCP task may run (the workflow's `orchestration.taskDeadlineMs`). Default 24 h. */
  taskDeadlineMs?: number;
  /** Who answers a question a service asks during a call (`agents.<name>.elicitation`). Default `model`. */
  elicitation?: ElicitationPolicy;
  /** Policy `operator`: asks the operator (the run's `askOperator`); absent, the run is unattended. */
  askOperator?: QuestionOptions['askOperator'];
  /** Tasks an earlier host journaled as accepted for this invocation and never saw answered. */
  openTasks?: readonly OpenTask[];
  /**
   * Awaited after each `tool.task_accepted` is emitted and before the task is polled, with that event (its
   * time set): a queue worker records it in Redis there. A throw cancels the task and fails the call.
   */
  onTaskAccepted?: (event: TaskAcceptedInput) => Promise<void>;
}

/** A `tool.task_accepted` event as an attempt emits it (no run id; its time set). */
export type TaskAcceptedInput = Extract<RunEventInput, { type: 'tool.task_accepted' }> & { time: string };

/**
 * `surface` with every tool call journaled and counted. A call the service answers with an MCP task is
 * journaled the moment it is accepted (`tool.task_accepted`); a call that matches one of `openTasks`
 * (same tool, same arguments: journaled by an earlier host that did not see it answered) re-attaches
 * to that task instead of calling the tool again (engine/taskResume.ts).
 */
export function observeSurface(surface: Surface, options: ObserveOptions): Surface {
  const observed = observeCalls(surface, options);
  // With export on, a call that reaches the surface with no span active (an agent CLI's, through a face
  // whose connection began outside the attempt) is traced under the attempt active here.
  const inAttempt = telemetry()?.contextRunner();
  if (inAttempt === undefined) return observed;
  return withCallTool(observed, (name, args, requestOptions) =>
    inAttempt(() => observed.callTool(name, args, requestOptions)),
  );
}

function observeCalls(surface: Surface, options: ObserveOptions): Surface {
  const open = [...(options.openTasks ?? [])];
  return withCallTool(surface, async (name, args, requestOptions) => {
    const base = { invocation: options.invocation, agent: options.agent, tool: name };
    options.onCall?.();
    options.emit({ type: 'tool.calling', ...base });
    const started = performance.now();
    const callId = requestOptions?.callId;
    const digest = argumentsDigest(args);
    const reattach = open.findIndex((task) => task.tool === name && task.argumentsDigest === digest);
    const resumed = reattach < 0 ? undefined : open.splice(reattach, 1)[0];
    let taskId = resumed?.taskId;
    const called = (ok: boolean, text: string, recorded: RecordedToolResult, code?: string) =>
      options.emit({
        type: 'tool.called',
        ...base,
        ...(typeof callId === 'string' ? { callId } : {}),
        arguments: boundedArguments(args),
        ok,
        durationMs: Math.round(performance.now() - started),
        summary: firstBytes(text, TOOL_SUMMARY_BYTES),
        resultDigest: resultDigest(recorded),
        ...(taskId === undefined ? {} : { taskId }),
        ...(code === undefined ? {} : { code }),
      });
    const given: SurfaceTaskOptions = {
      ...(options.taskDeadlineMs === undefined ? {} : { deadlineMs: options.taskDeadlineMs }),
      ...requestOptions?.task,
      ...(resumed === undefined ? {} : { resume: { taskId: resumed.taskId, era: resumed.era } }),
    };
    const taskOptions = withTaskJournal(given, async (accepted) => {
      taskId = accepted.taskId;
      const event: TaskAcceptedInput = {
        type: 'tool.task_accepted',
        time: new Date().toISOString(),
        ...base,
        service: accepted.service,
        sourceTool: accepted.tool,
        taskId: accepted.taskId,
        era: accepted.era,
        argumentsDigest: digest,
        ...(typeof callId === 'string' ? { callId } : {}),
      };
      options.emit(event);
      await options.onTaskAccepted?.(event);
    });
    const policy = options.elicitation ?? DEFAULT_ELICITATION_POLICY;
    const question: QuestionOptions = {
      policy,
      ...(options.askOperator === undefined ? {} : { askOperator: options.askOperator }),
      ...requestOptions?.question,
      onAsking: (asked) => {
        options.emit({
          type: 'tool.asking',
          ...base,
          ...shownQuestion(asked),
        });
        requestOptions?.question?.onAsking?.(asked);
      },
      onQuestion: (asked, answer) => {
        options.emit({
          type: 'tool.question',
          ...base,
          ...shownQuestion(asked),
          policy,
          action: answer.action,
          ...(answer.content === undefined ? {} : { content: redactElicited(answer.content, asked.requestedSchema) }),
        });
        requestOptions?.question?.onQuestion?.(asked, answer);
      },
    };
    try {
      // The caller's options copied as they are, getters included: a face's `signal` is a getter that builds
      // an AbortSignal only when read (sessions/callCancel.ts), and a spread would read it on every call.
      const forwarded = Object.defineProperties({}, Object.getOwnPropertyDescriptors(requestOptions ?? {}));
      const result = await surface.callTool(name, args, Object.assign(forwarded, { task: taskOptions, question }));
      called(result.isError !== true, resultText(result), recordedAnswer(result), bridgeCode(result));
      return result;
    } catch (error) {
      const failure = recordedFailure(error);
      called(false, failure.text, failure, isSdkError(error) ? error.code : undefined);
      throw error;
    }
  });
}

/** A question as the journal shows it: the URL of a URL-mode question with its query values redacted. */
function shownQuestion(asked: Question): Pick<Question, 'mode' | 'message' | 'requestedSchema' | 'url'> {
  return {
    mode: asked.mode,
    message: asked.message,
    ...(asked.requestedSchema === undefined ? {} : { requestedSchema: redactQuestionSchema(asked.requestedSchema) }),
    ...(asked.url === undefined ? {} : { url: redactUrl(asked.url) }),
  };
}

/** The bridge's error code a tool error carries (`_meta`, surface/surfaceDispatch.ts), if any. */
function bridgeCode(result: { isError?: boolean; _meta?: Record<string, unknown> }): string | undefined {
  if (result.isError !== true) return undefined;
  const error = result._meta?.[ERROR_META_KEY];
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/** `given` with `journal` told first of an accepted task (the caller's own `onAccepted` after it). */
function withTaskJournal(
  given: SurfaceTaskOptions | undefined,
  journal: NonNullable<SurfaceTaskOptions['onAccepted']>,
): SurfaceTaskOptions {
  return {
    ...given,
    onAccepted: async (accepted) => {
      await journal(accepted);
      await given?.onAccepted?.(accepted);
    },
  };
}

/** The first `limit` bytes of `text` in UTF-8, never cutting a character. */
export function firstBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  let end = limit;
  // Back up over continuation bytes (10xxxxxx) so the cut falls on a character boundary.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * Arguments as journaled: whole up to {@link TOOL_ARGUMENTS_BYTES} of JSON, else a marked preview. A model's
 * `answer` to a service's question has its secret-named fields redacted.
 */
function boundedArguments(given: Record<string, unknown> | undefined): unknown {
  const answer = given?.answer;
  const args =
    typeof answer === 'object' && answer !== null && !Array.isArray(answer)
      ? { ...given, answer: redactElicited(answer as Record<string, unknown>, undefined) }
      : given;
  const json = JSON.stringify(args ?? {});
  if (Buffer.byteLength(json) <= TOOL_ARGUMENTS_BYTES) return args ?? {};
  return { truncated: true, bytes: Buffer.byteLength(json), preview: firstBytes(json, TOOL_SUMMARY_BYTES) };
}
