/**
 * The one test of "a JSON object" for input the SDK did not make: a workflow document, a snapshot Main
 * proposed, a service's result, a request's `_meta`. Arrays, `null`, functions and class instances (a `Map`,
 * a `Date`, an object with a prototype of its own) are not; an object with the `Object.prototype` or a
 * `null` prototype is. Keys are read with `Object.hasOwn`/`Object.keys` by the callers, never through the
 * prototype.
 */

/** True when `value` is a plain object: what `JSON.parse` makes of `{…}` (or an `Object.create(null)` record). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
