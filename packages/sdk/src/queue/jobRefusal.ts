/**
 * A job a worker refuses (its shape, options, digests, workspace…): every worker would refuse it, so it
 * fails at once — BullMQ's `UnrecoverableError`, never retried by BullMQ — and its coded error (code,
 * message, remedy; URLs redacted) travels back in the job's failed reason, for the coordinator to record and
 * return as that code instead of a lost worker.
 */
import { ERROR_CODES, type ErrorCode, type SdkError } from '../errors.js';
import { redactUrlsIn } from '../redact.js';

/** How a failed reason starts when it carries a refusal; the JSON of the coded error follows. */
const PREFIX = 'scienceevolve:refused ';

/** The longest message or remedy a refusal carries (characters); longer ones are cut. */
const MAX_TEXT = 2_000;

/** What a refusal carries back. */
export interface RefusedError {
  code: ErrorCode;
  message: string;
  remedy?: string;
}

/** Thrown by a job processor: the queue consumer fails the job for good, carrying this error. */
export class JobRefusal extends Error {
  /** The coded error, redacted. */
  readonly refused: RefusedError;

  constructor(error: SdkError) {
    super(error.message);
    this.refused = {
      code: error.code,
      message: cut(redactUrlsIn(error.message)),
      ...(error.remedy === undefined ? {} : { remedy: cut(redactUrlsIn(error.remedy)) }),
    };
  }
}

/** The failed reason that carries `refused`. */
export function refusalReason(refused: RefusedError): string {
  return `${PREFIX}${JSON.stringify(refused)}`;
}

/**
 * The refusal a failed reason carries, checked (a known code, text fields, URLs redacted again: anything
 * in Redis may have been written by something else), or `undefined` for any other reason.
 */
export function refusalOf(reason: string): RefusedError | undefined {
  if (!reason.startsWith(PREFIX)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(reason.slice(PREFIX.length));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const code = Object.hasOwn(parsed, 'code') ? (parsed as { code: unknown }).code : undefined;
  const message = Object.hasOwn(parsed, 'message') ? (parsed as { message: unknown }).message : undefined;
  const remedy = Object.hasOwn(parsed, 'remedy') ? (parsed as { remedy: unknown }).remedy : undefined;
  if (typeof code !== 'string' || !(ERROR_CODES as readonly string[]).includes(code) || code === 'internal')
    return undefined;
  if (typeof message !== 'string' || (remedy !== undefined && typeof remedy !== 'string')) return undefined;
  return {
    code: code as ErrorCode,
    message: cut(redactUrlsIn(message)),
    ...(remedy === undefined ? {} : { remedy: cut(redactUrlsIn(remedy)) }),
  };
}

/** A reason as a log line shows it: `[code] message` for a refusal, the reason (redacted) otherwise. */
export function shownReason(reason: string): string {
  const refused = refusalOf(reason);
  return refused === undefined ? redactUrlsIn(reason) : `refused [${refused.code}] ${refused.message}`;
}

function cut(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}
