/** How the CLI speaks: one JSON document on stdout with `--json`, human text otherwise; progress and errors on stderr. */
import { SdkError, isSdkError, toSdkError } from '@scienceevolve/sdk/errors';

/** Exit codes (SPEC §13). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Where a command writes. Tests and embedders may pass their own. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** The process's own streams. */
export const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** A usage error: exit 2 with the usage line. */
export function usageError(message: string, remedy?: string): SdkError {
  return new SdkError('usage', message, {
    remedy: remedy ?? 'run `scienceevolve --help` for the commands and options',
  });
}

/** Prints an error as the CLI's contract says: code, message, remedy; never a stack unless `debug`. Returns the exit code. */
export function reportError(error: unknown, io: Io, options: { json: boolean; debug: boolean }): number {
  const sdkError = isSdkError(error) ? toSdkError(error) : toSdkError(error, 'internal');
  const exit = sdkError.code === 'usage' ? EXIT.usage : EXIT.failed;
  if (options.json) {
    io.stdout(`${JSON.stringify({ ok: false, error: sdkError.toJSON() }, null, 2)}\n`);
  }
  io.stderr(`error [${sdkError.code}]: ${sdkError.message}\n`);
  if (sdkError.remedy) io.stderr(`  fix: ${sdkError.remedy}\n`);
  if (sdkError.code === 'internal' && !options.debug) io.stderr('  (run again with --debug for the stack trace)\n');
  if (options.debug) {
    const stack = (sdkError.cause instanceof Error ? sdkError.cause.stack : undefined) ?? sdkError.stack;
    if (stack) io.stderr(`${stack}\n`);
  }
  return exit;
}

/** Prints a JSON document on stdout. */
export function printJson(io: Io, value: unknown): void {
  io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}
