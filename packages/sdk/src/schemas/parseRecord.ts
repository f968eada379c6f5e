/**
 * The one check of a document read back from disk: the value is parsed by its schema, and a value that does
 * not parse becomes the reader's coded error (`store_tampered`, `invalid_checkpoint`, `io_error`), naming
 * the file and the first field that failed — never the value (the file may hold anything a service wrote).
 * Readers only: the SDK writes its records as plain JSON, with no parse on the write path.
 */
import type { z } from 'zod';
import { type ErrorCode, SdkError } from '../errors.js';

/** Where a document was read from and the error its damage is. */
export interface RecordSource {
  /** The file the document was read from (named in the message and in `data.path`). */
  file: string;
  /** The code of a document that does not parse. */
  code: Extract<ErrorCode, 'store_tampered' | 'invalid_checkpoint' | 'io_error'>;
  /** What the file should hold, as the message says it: `the record of run run-1`, `a version record`. */
  what: string;
  /** The fix, for the error's remedy. */
  remedy: string;
  /** The message's start (default: the file): e.g. `run run-1: /…/run.json`. */
  subject?: string;
  /** More data for the error (`data.path` is always the file). */
  data?: Record<string, unknown>;
  /** How a field's path is said (default: `field "a.b.0"`). */
  field?: (path: readonly PropertyKey[]) => string;
}

/** A field's path as a message says it: `field "invocations.0.state"`, or `the document` for the top. */
export function fieldName(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'the document';
  return `field "${path.map(String).join('.').slice(0, 128)}"`;
}

/**
 * The first problem of `value` against `schema`, as a message says it (`field "a.b" …`), or undefined
 * when it parses. Names the field and what was expected, never the value.
 */
export function recordProblem(
  schema: z.ZodType,
  value: unknown,
  field: (path: readonly PropertyKey[]) => string = fieldName,
): string | undefined {
  const parsed = schema.safeParse(value, { reportInput: true });
  return parsed.success ? undefined : describeIssue(parsed.error.issues[0], field);
}

/** One zod issue in words: where, and what was expected (the received value is never quoted). */
export function describeIssue(
  issue: z.core.$ZodIssue | undefined,
  field: (path: readonly PropertyKey[]) => string = fieldName,
): string {
  if (issue === undefined) return 'the document does not match its schema';
  const where = field(issue.path);
  switch (issue.code) {
    case 'invalid_type':
      return 'input' in issue && issue.input === undefined
        ? `${where} is missing`
        : `${where} is not ${article(issue.expected)}`;
    case 'invalid_value':
      return `${where} is not ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
    case 'unrecognized_keys':
      return `${where} has unexpected keys ${issue.keys
        .slice(0, 5)
        .map((k) => JSON.stringify(k.slice(0, 64)))
        .join(', ')}`;
    case 'invalid_union':
      return `${where} is none of the forms it may take`;
    case 'too_small':
    case 'too_big':
    case 'invalid_format':
    case 'not_multiple_of':
    case 'custom':
    case 'invalid_key':
    case 'invalid_element':
      return `${where}: ${issue.message.slice(0, 200)}`;
  }
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

/**
 * Parses `value` (read from `source.file`) by `schema`: the parsed document, or the source's coded error,
 * `<subject> is not <what>: field "…" is not …`, with `data.path` the file.
 */
export function parseRecord<S extends z.ZodType>(schema: S, value: unknown, source: RecordSource): z.output<S> {
  const parsed = schema.safeParse(value, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw recordError(source, describeIssue(parsed.error.issues[0], source.field));
}

/** The coded error of a damaged document of `source`: `problem` says what is wrong (a field, or not JSON). */
export function recordError(source: RecordSource, problem: string, cause?: unknown): SdkError {
  return new SdkError(source.code, `${source.subject ?? source.file} is not ${source.what}: ${problem}`, {
    remedy: source.remedy,
    data: { ...source.data, path: source.file },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The coded error of a file of `source` that is not JSON at all: `<subject> is not valid JSON (<detail>)`. */
export function notJsonError(source: RecordSource, detail: string, cause?: unknown): SdkError {
  return new SdkError(source.code, `${source.subject ?? source.file} is not valid JSON (${detail})`, {
    remedy: source.remedy,
    data: { ...source.data, path: source.file },
    ...(cause === undefined ? {} : { cause }),
  });
}
