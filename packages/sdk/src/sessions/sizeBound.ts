/**
 * An upper bound on the size of a result's JSON text, known from the line it was parsed from, so that
 * the gate's size limit (surface/serviceGate.ts, `maxResultBytes`) can be checked without serializing
 * the result again. A result parsed from a line of `n` UTF-16 code units serializes (`JSON.stringify`,
 * UTF-8) to at most `6 n` bytes: white space and duplicate keys only shrink; a string's characters come
 * out in at most the UTF-8 bytes they took in the line (an escape is no shorter than what it stands for,
 * and a line decoded from strict UTF-8 holds no lone surrogate); only a number can grow, at most 5.25
 * times (`1e20`, 4 characters, is written as 21 digits). A result whose bound is over the limit is
 * measured exactly, as every result was before.
 */

/** Results (objects only) with the bound of their serialized size, in bytes. */
const bounds = new WeakMap<object, number>();

/** The most bytes one UTF-16 code unit of a parsed line can come out as (see the module comment). */
const BYTES_PER_UNIT = 6;

/** Records that `result` was parsed from (part of) a line of `lineLength` UTF-16 code units. */
export function noteParsedFrom(result: unknown, lineLength: number): void {
  if (typeof result === 'object' && result !== null) bounds.set(result, lineLength * BYTES_PER_UNIT);
}

/** The bound recorded for `result` (bytes of its JSON text, UTF-8), if one was. */
export function sizeBoundOf(result: unknown): number | undefined {
  return typeof result === 'object' && result !== null ? bounds.get(result) : undefined;
}
