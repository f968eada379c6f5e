/**
 * The light path: the commands that only read files and print (`LIGHT_COMMANDS` in `lightCommands.ts`:
 * `validate`, `status`, `schema`, `harness-config`; their `--help` too). `npm run build` bundles this module,
 * the SDK's light entries and zod into one file, `dist/light.bundle.cjs` (`scripts/build-light.mjs`;
 * docs/decisions/cli-light-bundle.md): one module to load instead of ~200. The bin runs this for the light
 * commands and `main.ts` for the others, so a process holds one copy of the SDK, never both.
 * Every command here must be light (the lint rule `cli-light-path-stays-light`).
 */
import { writeSync } from 'node:fs';
import { type CommandRun, runCommands } from './dispatch.js';
import type { LightCommand } from './lightCommands.js';
import { type Io, writeProcessStdout } from './output.js';

/** The light commands' modules, loaded when their command runs; `main.ts` takes these lines from here. */
export const LIGHT_MODULES: Readonly<Record<LightCommand, () => Promise<CommandRun>>> = {
  validate: () => import('./commands/validate.js').then((m) => m.validateCommand),
  'harness-config': () => import('./commands/harnessConfig.js').then((m) => m.harnessConfigCommand),
  status: () => import('./commands/status.js').then((m) => m.statusCommand),
  schema: () => import('./commands/schema.js').then((m) => m.schemaCommand),
};

const TABLE = new Map(Object.entries(LIGHT_MODULES));

/** Set once stdout is written through `process.stdout`: from then on all of it goes there, in order. */
let stdoutStream = process.platform === 'win32';

/**
 * Writes `text` to stdout's descriptor directly, without `process.stdout`: building that stream loads
 * `node:stream` (~2 ms of CPU on Node 24) for a command that prints a line. The write blocks until every
 * byte is out, as `process.stdout` does for files, terminals and Linux pipes. A write that fails (a
 * non-blocking pipe full, a reader gone) hands the rest, and everything after it, to `process.stdout`, which
 * then behaves as it always did; on Windows `process.stdout` is used from the start. The light commands
 * never serve MCP on stdio, so the stdout guard (installed only for `services serve` and `bridge
 * http-to-stdio`, before anything loads) is never bypassed by this.
 */
function writeStdout(text: string): void {
  if (stdoutStream) {
    writeProcessStdout(text);
    return;
  }
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written);
  } catch {
    // A reader gone (EPIPE) fails the stream's write too, which drops the rest quietly (output.ts).
    stdoutStream = true;
    writeProcessStdout(bytes.subarray(written));
  }
}

/** The light commands' streams: stdout by its descriptor ({@link writeStdout}), stderr as usual. */
const lightIo: Io = {
  stdout: writeStdout,
  stderr: (text) => process.stderr.write(text),
};

/** Runs a light command (or help, or `--version`) with `argv`; resolves to the exit code. */
export function run(argv: string[], io: Io = lightIo): Promise<number> {
  return runCommands(TABLE, argv, io);
}
