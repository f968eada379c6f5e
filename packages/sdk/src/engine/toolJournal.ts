/**
 * The observed surface: every tool call an agent makes, whatever harness decides it, is journaled
 * (`tool.calling`, then `tool.called` with bounded arguments, a bounded result summary, the digest of the
 * result as a harness records it and the caller's call id) and counted. The digest is what `resume`
 * checks a checkpoint's recorded results against (SPEC §10.3).
 */
import { performance } from 'node:perf_hooks';
import { type Surface, withCallTool } from '../surface/surface.js';
import type { RunEventInput } from '../events/runEvents.js';
import { telemetry } from '../events/telemetry.js';
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
}

/** `surface` with every tool call journaled and counted. */
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
    try {
      const result = await surface.callTool(name, args, requestOptions);
      called(result.isError !== true, resultText(result), recordedAnswer(result));
      return result;
    } catch (error) {
      const failure = recordedFailure(error);
      called(false, failure.text, failure);
      throw error;
    }
  });
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
