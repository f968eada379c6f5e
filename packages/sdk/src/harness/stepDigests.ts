/**
 * The digests the host journals of a model loop's steps, so `resume` can check a checkpoint against them
 * (SPEC §10.3): a checkpoint lives in the data dir, where anything running as the user — an unsandboxed
 * service included — can rewrite it, while the journal holds what the host itself saw. A tool result is
 * digested in the form a harness records it (its text as a model reads it, and whether it was an error),
 * a model response as the assistant message it appended to the conversation. sha256 (hex) of the canonical
 * JSON (`fast-json-stable-stringify`: sorted keys, no `undefined` members), so a value and its JSON round
 * trip through the checkpoint file digest alike.
 */
import { createHash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import stableStringify from 'fast-json-stable-stringify';
import { toSdkError } from '../errors.js';

/** A tool result as a harness records it: the text a model reads, and whether it was an error. */
export interface RecordedToolResult {
  text: string;
  isError: boolean;
}

/** sha256 (hex) of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  return createHash('sha256')
    .update(stableStringify(value) ?? 'null')
    .digest('hex');
}

/**
 * The digest of a recorded tool result (`tool.called`'s `resultDigest`): the canonical JSON of
 * `{isError, text}`, built directly (its keys are already in sorted order) and hashed as it streams, so a
 * result of megabytes costs one native stringify of its text and one sha256 pass, on every call.
 */
export function resultDigest(result: RecordedToolResult): string {
  return createHash('sha256')
    .update(`{"isError":${result.isError === true},"text":`)
    .update(JSON.stringify(result.text))
    .update('}')
    .digest('hex');
}

/** A failed call (an unknown tool, a JSON-RPC error the service answered) as a harness records it. */
export function recordedFailure(error: unknown): RecordedToolResult {
  return { text: toSdkError(error).message, isError: true };
}

/**
 * The digest of a model response (`model.called`'s `responseDigest`): of the assistant message it
 * appended, or of `null` when it appended none (an empty answer).
 */
export function responseDigest(assistant: unknown): string {
  return digestOf(assistant ?? null);
}

/**
 * A tool-result part's output (AI SDK) as the recorded result it was made from: `text` and `error-text`
 * are the only outputs a model loop writes (its own results, and the answers the provider library gives
 * calls it could not take); any other kind is `undefined`.
 */
export function recordedOfOutput(output: unknown): RecordedToolResult | undefined {
  if (typeof output !== 'object' || output === null) return undefined;
  const { type, value } = output as { type?: unknown; value?: unknown };
  if (typeof value !== 'string') return undefined;
  if (type === 'text') return { text: value, isError: false };
  if (type === 'error-text') return { text: value, isError: true };
  return undefined;
}

/**
 * What a model call's `model.called` event journals of its response: the digest of the assistant message
 * it appended, and each call the provider library answered itself (in the response's tool message) with
 * the digest of that answer.
 */
export function responseFacts(messages: readonly unknown[]): {
  responseDigest: string;
  answered?: { callId: string; tool: string; resultDigest: string }[];
} {
  let assistant: unknown;
  const answered: { callId: string; tool: string; resultDigest: string }[] = [];
  for (const message of messages) {
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (role === 'assistant' && assistant === undefined) assistant = message;
    if (role !== 'tool' || !Array.isArray(content)) continue;
    for (const part of content as { type?: unknown; toolCallId?: unknown; toolName?: unknown; output?: unknown }[]) {
      const recorded = part.type === 'tool-result' ? recordedOfOutput(part.output) : undefined;
      if (recorded === undefined || typeof part.toolCallId !== 'string' || typeof part.toolName !== 'string') continue;
      answered.push({ callId: part.toolCallId, tool: part.toolName, resultDigest: resultDigest(recorded) });
    }
  }
  return { responseDigest: responseDigest(assistant), ...(answered.length === 0 ? {} : { answered }) };
}

/** A surface's answer as a harness records it (what `tool.called`'s `resultDigest` digests). */
export function recordedAnswer(result: CallToolResult): RecordedToolResult {
  return { text: resultAsText(result), isError: result.isError === true };
}

/**
 * The text a model sees for a tool result: its text items joined by newlines; other items (images,
 * audio, resources) as a one-line note; the structured content as JSON when there is no text.
 */
export function resultAsText(result: CallToolResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === 'text') parts.push(item.text);
    else if (item.type === 'resource_link') parts.push(`[resource ${item.uri}]`);
    else if (item.type === 'resource') {
      const resource = item.resource as { uri: string; text?: unknown };
      parts.push(typeof resource.text === 'string' ? resource.text : `[resource ${resource.uri}]`);
    } else parts.push(`[${item.type} content, ${'mimeType' in item ? String(item.mimeType) : 'no type'}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}
