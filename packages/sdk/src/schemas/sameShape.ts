/**
 * Compile-time checks that a written type and a schema's inferred type are the same shape (types only:
 * nothing of this module exists at run time). A public record type is written once as TypeScript (readable
 * in the API report, with its TSDoc); the zod schema that checks it is typed by it, and these checks make
 * a field added to one and not the other fail the build (docs/decisions/record-schemas.md).
 */

/** True when each of A and B is assignable to the other. */
export type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * True when A and B are mutually assignable and have the same keys (mutual assignability alone lets an
 * optional key stand on one side only). Check nested objects one level at a time.
 */
export type SameShape<A, B> = SameType<A, B> extends true ? SameType<keyof A, keyof B> : false;

/** Compiles only when T is `true`: `type Check = Assert<SameShape<A, B>>`. */
export type Assert<T extends true> = T;
