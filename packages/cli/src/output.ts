/** How the CLI speaks: one JSON document on stdout with `--json`, human text otherwise; progress and errors on stderr. */
import { SdkError, isSdkError, remedyOf, toSdkError } from '@scienceevolve/sdk/errors';

/** Exit codes (SPEC §13). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Where a command writes. Tests and embedders may pass their own. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** Set once stdout's reader went away (EPIPE): what is left to print has no one to read it. */
let stdoutGone = false;
/** Whether {@link writeProcessStdout} listens to `process.stdout`'s errors yet. */
let watchingStdout = false;

/**
 * Writes to `process.stdout`. A reader that goes away before the output ends (`scienceevolve schema | head
 * -c 100`) ends the output quietly: the rest is dropped and the command finishes with its own exit code,
 * instead of an unhandled `EPIPE` and a stack trace. Any other error of the stream is thrown, as before.
 */
export function writeProcessStdout(text: string | Uint8Array): void {
  if (stdoutGone) return;
  if (!watchingStdout) {
    watchingStdout = true;
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      stdoutGone = true;
    });
  }
  process.stdout.write(text);
}

/** The process's own streams. */
export const processIo: Io = {
  stdout: writeProcessStdout,
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
  io.stderr(failureText(sdkError.toJSON()));
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

/** An error as the CLI shows it: a code, a message, and where there are some, a remedy and facts. */
export interface ShownError {
  code: string;
  message: string;
  remedy?: string;
  data?: Record<string, unknown>;
}

/** Lines of a service's stderr shown under its error: at most 12, after folding stack frames. */
export const SCREEN_TAIL_LINES = 12;
/** Bytes of a service's stderr shown under its error: at most 2 KiB (UTF-8). */
export const SCREEN_TAIL_BYTES = 2048;
/** Characters of one stderr line shown; a longer line is cut with `…`. */
const SCREEN_LINE_CHARS = 300;

/** A stack frame of a JavaScript trace (`    at fn (file:1:2)`). */
const STACK_FRAME = /^\s+at\s/;

/**
 * The end of a service's stderr as the screen shows it: blank lines dropped, each run of JavaScript stack
 * frames folded into one `… N stack frames` line (the cause — `Cannot find module './config.json'` — sits
 * above them), then the last {@link SCREEN_TAIL_LINES} lines within {@link SCREEN_TAIL_BYTES}. The lines
 * come from `data.stderrTail`, which the SDK already redacted (mapped values never show); a service wrote
 * them, so their control characters are shown as `\xNN` (an escape sequence never reaches the terminal).
 */
export function screenTail(lines: readonly unknown[]): string[] {
  const folded: string[] = [];
  let frames = 0;
  const flush = () => {
    if (frames > 0) folded.push(`    … ${frames} stack frame${frames === 1 ? '' : 's'}`);
    frames = 0;
  };
  for (const raw of lines) {
    if (typeof raw !== 'string' || raw.trim() === '') continue;
    if (STACK_FRAME.test(raw)) {
      frames += 1;
      continue;
    }
    flush();
    const line = visible(raw);
    folded.push(line.length > SCREEN_LINE_CHARS ? `${line.slice(0, SCREEN_LINE_CHARS)}…` : line);
  }
  flush();
  const shown: string[] = [];
  let bytes = 0;
  for (const line of folded.slice(-SCREEN_TAIL_LINES).reverse()) {
    bytes += Buffer.byteLength(line) + 1;
    if (bytes > SCREEN_TAIL_BYTES) break;
    shown.unshift(line);
  }
  return shown;
}

/** C0 and C1 control characters but tab: a terminal would act on them (escape sequences: colours, title, clipboard). */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;

/** `line` (a service's stderr, a service's question) with every control character shown as `\xNN`: it cannot drive the terminal. */
export function visible(line: string): string {
  return line.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The stderr tails an error carries: its own, or each of an aggregate's `data.failures` (several services). */
function tailsOf(error: ShownError): { service: string; lines: string[] }[] {
  const failures = Array.isArray(error.data?.failures) ? (error.data.failures as ShownError[]) : [error];
  return failures.flatMap((f) => {
    const tail = f?.data?.stderrTail;
    if (!Array.isArray(tail)) return [];
    const lines = screenTail(tail);
    const service = typeof f.data?.service === 'string' ? f.data.service : 'the service';
    return lines.length === 0 ? [] : [{ service, lines }];
  });
}

/**
 * One failure as text, every line ending in a newline: `error [code]: message`, then the end of each
 * failed service's stderr (see {@link screenTail}), then `  fix: …` — the error's own remedy, or its code's
 * fix (`remedyOf`: every code has one). `indent` prefixes every line; `head` replaces `error`.
 */
export function failureText(error: ShownError, options: { indent?: string; head?: string } = {}): string {
  const indent = options.indent ?? '';
  const lines = [`${options.head ?? 'error'} [${error.code}]: ${error.message}`];
  for (const { service, lines: tail } of tailsOf(error)) {
    lines.push(`  stderr of ${service} (its last lines):`);
    for (const line of tail) lines.push(`    | ${line}`);
  }
  lines.push(`  fix: ${remedyOf(error)}`);
  return (
    lines
      .join('\n')
      .split('\n')
      // The message can quote a service's or an endpoint's words: no control character reaches the terminal.
      .map((line) => `${indent}${visible(line)}\n`)
      .join('')
  );
}
