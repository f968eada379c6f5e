/**
 * The one rule for an id the SDK makes into one directory name: a run id, an invocation id, an attempt's
 * services id (`<invocation>-<attempt>`). Both the store (`ProjectPaths`) and the schemas of documents that
 * carry such ids (a queue job's attempt spec) check with it. Imports nothing (no zod): the store's path
 * arithmetic loads it.
 */

/** The longest id: 200 characters. */
export const PATH_ID_MAX_CHARS = 200;

/**
 * 1–200 ASCII letters, digits, `.`, `_` and `-`, starting with a letter or a digit. So never empty, never
 * `.` or `..`, no separator, no leading dash (never read as an option), no leading dot (never hidden), and
 * no other character (no look-alike letters, no Unicode normalisation that differs between file systems).
 */
export const PATH_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** Whether `value` is an id that may be one directory name (see {@link PATH_ID_PATTERN}). */
export function isPathId(value: unknown): value is string {
  return typeof value === 'string' && PATH_ID_PATTERN.test(value);
}

/** What a path id must be, for messages. */
export const PATH_ID_RULE = `1–${PATH_ID_MAX_CHARS} characters of A-Z a-z 0-9 . _ -, starting with a letter or digit`;
