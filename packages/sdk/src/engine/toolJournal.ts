/**
 * The observed surface: every tool call an agent makes, whatever harness decides it, is journaled
 * (`tool.calling`, then `tool.called` with bounded arguments, a bounded result summary, the digest of the
 * result as a harness records it and the caller's call id) and counted. The digest is what `resume`
 * checks a checkpoint's recorded results against (SPEC §10.3).
 */
import { performance } from 'node:perf_hooks';
import { type Surface, withCallTool } from '../surface/surface.js';
import type { RunEventInput } from '../events/runEvents.js';
import type { SurfaceTaskOptions } from '../surface/surfaceTypes.js';
import { resultText } from '../harness/harness.js';
import { recordedAnswer } from '../harness/modelTools.js';
import { type RecordedToolResult, recordedFailure, resultDigest } from '../harness/stepDigests.js';

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
}

/** `surface` with every tool call journaled and counted. */
export function observeSurface(surface: Surface, options: ObserveOptions): Surface {
  return withCallTool(surface, async (name, args, requestOptions) => {
    const base = { invocation: options.invocation, agent: options.agent, tool: name };
    options.onCall?.();
    options.emit({ type: 'tool.calling', ...base });
    const started = performance.now();
    const callId = requestOptions?.callId;
    const called = (ok: boolean, text: string, recorded: RecordedToolResult) =>
      options.emit({
        type: 'tool.called',
        ...base,
        ...(typeof callId === 'string' ? { callId } : {}),
        arguments: boundedArguments(args),
        ok,
        durationMs: Math.round(performance.now() - started),
        summary: firstBytes(text, TOOL_SUMMARY_BYTES),
        resultDigest: resultDigest(recorded),
      });
    const given = requestOptions?.task ?? (options.taskDeadlineMs === undefined ? undefined : { deadlineMs: options.taskDeadlineMs });
    const taskOptions = withTaskJournal(given, (accepted) =>
      options.emit({
        type: 'tool.task_accepted',
        ...base,
        service: accepted.service,
        sourceTool: accepted.tool,
        taskId: accepted.taskId,
        era: accepted.era,
        ...(typeof callId === 'string' ? { callId } : {}),
      }),
    );
    try {
      const result = await surface.callTool(name, args, { ...requestOptions, task: taskOptions });
      called(result.isError !== true, resultText(result), recordedAnswer(result));
      return result;
    } catch (error) {
      const failure = recordedFailure(error);
      called(false, failure.text, failure);
      throw error;
    }
  });
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

/** Arguments as journaled: whole up to {@link TOOL_ARGUMENTS_BYTES} of JSON, else a marked preview. */
function boundedArguments(args: Record<string, unknown> | undefined): unknown {
  const json = JSON.stringify(args ?? {});
  if (Buffer.byteLength(json) <= TOOL_ARGUMENTS_BYTES) return args ?? {};
  return { truncated: true, bytes: Buffer.byteLength(json), preview: firstBytes(json, TOOL_SUMMARY_BYTES) };
}
