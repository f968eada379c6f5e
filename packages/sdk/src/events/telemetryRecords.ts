/**
 * What a span records of a failure or a value, always through the SDK's redaction helper: a failure's type
 * and URL-redacted message (never a stack), an argument or result (only when the operator turned content
 * recording on) as redacted JSON cut at 4,096 characters. Loaded with `telemetrySpans.ts`.
 */
import { type Span, SpanStatusCode } from '@opentelemetry/api';
import { errorText, redactUrlsIn, redactValue } from '../redact.js';

/** Characters of a recorded argument or result (when recording is on): 4,096. */
const RECORDED_CHARS = 4096;

/** The `error.type` of a failure: its code, else its name. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  if (typeof code === 'number') return String(code);
  return error instanceof Error ? error.name : 'error';
}

/**
 * Records `error` on `span` as an exception event with its type (the error's code) and its message with
 * every URL redacted, never its stack (a library's message may quote an address with a token in its query);
 * `failed` also marks the span failed with that type.
 */
export function recordFailure(span: Span, error: unknown, failed = false): void {
  span.recordException({ name: errorType(error), message: redactUrlsIn(errorText(error)) });
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR }).setAttribute('error.type', errorType(error));
}

/** `value` as a span attribute: redacted JSON, at most {@link RECORDED_CHARS} characters. */
export function recorded(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(redactValue(value)) ?? 'null';
  } catch {
    text = '(not JSON)';
  }
  return text.length > RECORDED_CHARS ? `${text.slice(0, RECORDED_CHARS)}…` : text;
}
