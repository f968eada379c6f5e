/**
 * Keeps a stdio face's stdout for the protocol alone. Call {@link protectStdout} at process start,
 * before anything logs: from then on `console.log` and every `process.stdout.write` of the process go
 * to stderr, and only the returned stream writes to the real stdout.
 *
 * This module imports nothing but `node:stream`, and is published on its own
 * (`@scienceevolve/sdk/protect-stdout`), so that a bin can install the guard before any other module
 * loads; `scienceevolve services serve` (stdio) and `bridge http-to-stdio` do. The guard is kept
 * process-wide, so a later call through the SDK's main entry returns the same one.
 *
 * This works at the JavaScript level. At the descriptor level the CLI keeps fd 1 for the protocol:
 * every child it starts (services, supervisor) gets its own pipes, never an inherited fd 1.
 */
import { Writable } from 'node:stream';

/** What {@link protectStdout} gives back. @public */
export interface ProtectedStdout {
  /** The only stream that writes to the real stdout: hand it to `serveStdio` as `output`. */
  readonly protocolOutput: Writable;
  /** Puts `process.stdout.write` back as it was (tests). */
  restore(): void;
}

/** The one guard of the process, shared by every copy of this module (a sub-path and the main entry). */
const ACTIVE = Symbol.for('scienceevolve.protectStdout');
type GuardHolder = { [ACTIVE]?: ProtectedStdout | undefined };
const holder = globalThis as GuardHolder;

/**
 * Routes every write to `process.stdout` other than the protocol's to `process.stderr`. Idempotent:
 * a second call returns the first call's result.
 * @public
 */
export function protectStdout(): ProtectedStdout {
  const existing = holder[ACTIVE];
  if (existing !== undefined) return existing;
  const stdout = process.stdout;
  const originalWrite = stdout.write;
  const realWrite = originalWrite.bind(stdout) as (
    chunk: string | Uint8Array,
    encoding: BufferEncoding | undefined,
    callback: (error?: Error | null) => void,
  ) => boolean;
  const redirected = ((chunk: string | Uint8Array, encodingOrCallback?: unknown, callback?: unknown) =>
    (process.stderr.write as (...args: unknown[]) => boolean)(
      chunk,
      encodingOrCallback,
      callback,
    )) as typeof stdout.write;
  stdout.write = redirected;
  const protocolOutput = new Writable({
    // Strings reach the real stdout as they are (no copy into a Buffer first).
    decodeStrings: false,
    // The callback fires once the real stdout took the chunk, which is the backpressure.
    write(chunk: string | Buffer, encoding, callback) {
      realWrite(chunk, typeof chunk === 'string' ? encoding : undefined, (error) => callback(error ?? null));
    },
  });
  // Writes that fail because the reader went away end the face through its input; do not crash here.
  protocolOutput.on('error', () => {});
  const guard: ProtectedStdout = {
    protocolOutput,
    restore() {
      if (stdout.write === redirected) stdout.write = originalWrite;
      if (holder[ACTIVE] === guard) holder[ACTIVE] = undefined;
    },
  };
  holder[ACTIVE] = guard;
  return guard;
}
