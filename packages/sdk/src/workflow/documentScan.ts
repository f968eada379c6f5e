/**
 * A scan of a whole parsed JSON document that runs before anything recurses into it: its nesting depth
 * (checked level by level with an explicit stack, so a document nested 100,000 deep is reported, never a
 * "Maximum call stack size exceeded"), every string and key that is not well-formed UTF-16 (a lone
 * surrogate: `"a\uD800b"` and `"a\uFFFDb"` would be one name once encoded as UTF-8), and the key
 * `__proto__`, which an object built by assignment silently drops.
 */
import type { ErrorCode } from '../errors.js';
import { toJsonPath } from './jsonPath.js';

/** One finding of {@link scanDocument}. */
export interface DocumentFinding {
  /** `too_deep`, `ill_formed_text` or `reserved_name`. */
  code: ErrorCode;
  /** A JSON path such as `$.mcpDefinitions.tools.files["a\ud800"]`. */
  path: string;
  /** What is wrong and how to fix it. */
  message: string;
}

/** The deepest nesting of arrays and objects a workflow document may have (the real shape needs 7). */
export const MAX_WORKFLOW_DEPTH = 32;

/** At most this many findings of one kind are reported for one document. */
const MAX_FINDINGS = 50;

/** A lone surrogate: with the `u` flag a paired surrogate is one code point and does not match. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** True when `text` is well-formed UTF-16 (no lone surrogate), so it round-trips through UTF-8. */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/**
 * Scans `document` iteratively. A container deeper than `maxDepth` (the top object is depth 1) is reported
 * once with code `too_deep` and is not entered; a key or string with a lone surrogate gives
 * `ill_formed_text`; an object key `__proto__` gives `reserved_name`.
 */
export function scanDocument(document: unknown, maxDepth = MAX_WORKFLOW_DEPTH): DocumentFinding[] {
  const findings: DocumentFinding[] = [];
  let tooDeep = false;
  let illFormed = 0;
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: document, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: PropertyKey[] };
    if (typeof value === 'string') {
      if (!isWellFormedText(value) && illFormed++ < MAX_FINDINGS) {
        findings.push({
          code: 'ill_formed_text',
          path: toJsonPath(path),
          message:
            'the text holds a lone surrogate (\\uD800–\\uDFFF without its pair), which cannot be written as UTF-8: remove it or write the whole character',
        });
      }
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (path.length + 1 > maxDepth) {
      if (!tooDeep) {
        tooDeep = true;
        findings.push({
          code: 'too_deep',
          path: toJsonPath(path),
          message: `arrays and objects are nested more than ${maxDepth} levels deep here; a workflow needs far fewer: flatten it`,
        });
      }
      continue;
    }
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const at = [...path, key];
      if (!isWellFormedText(key)) {
        if (illFormed++ < MAX_FINDINGS) {
          findings.push({
            code: 'ill_formed_text',
            path: toJsonPath(at),
            message:
              'the name holds a lone surrogate (\\uD800–\\uDFFF without its pair): two such names can become one file or variable once encoded as UTF-8; rename it',
          });
        }
      } else if (key === '__proto__') {
        findings.push({
          code: 'reserved_name',
          path: toJsonPath(at),
          message:
            '"__proto__" cannot be used as a name here: rename it (as a file, put it in a directory, e.g. "lib/__proto__")',
        });
      }
      stack.push({ value: (value as Record<string, unknown>)[key], path: at });
    }
  }
  return findings;
}
