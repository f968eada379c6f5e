/**
 * The light path: the commands that only read files and print (`LIGHT_COMMANDS` in `lightCommands.ts`:
 * `validate`, `status`, `schema`, `harness-config`; their `--help` too). `npm run build` bundles this module,
 * the SDK's light entries and zod into one file, `dist/light.bundle.cjs` (`scripts/build-light.mjs`;
 * docs/decisions/cli-light-bundle.md): one module to load instead of ~200. The bin runs this for the light
 * commands and `main.ts` for the others, so a process holds one copy of the SDK, never both.
 * Every command here must be light (the lint rule `cli-light-path-stays-light`).
 */
import { type CommandRun, runCommands } from './dispatch.js';
import type { LightCommand } from './lightCommands.js';
import { type Io, processIo } from './output.js';

/** The light commands' modules, loaded when their command runs; `main.ts` takes these lines from here. */
export const LIGHT_MODULES: Readonly<Record<LightCommand, () => Promise<CommandRun>>> = {
  validate: () => import('./commands/validate.js').then((m) => m.validateCommand),
  'harness-config': () => import('./commands/harnessConfig.js').then((m) => m.harnessConfigCommand),
  status: () => import('./commands/status.js').then((m) => m.statusCommand),
  schema: () => import('./commands/schema.js').then((m) => m.schemaCommand),
};

const TABLE = new Map(Object.entries(LIGHT_MODULES));

/** Runs a light command (or help, or `--version`) with `argv`; resolves to the exit code. */
export function run(argv: string[], io: Io = processIo): Promise<number> {
  return runCommands(TABLE, argv, io);
}
