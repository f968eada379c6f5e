/** The `scienceevolve` command: parse, call the SDK, print. Nothing here that the SDK's API cannot do. */
import { type CommandRun, runCommands } from './dispatch.js';
import { LIGHT_MODULES } from './light.js';
import { type Io, processIo } from './output.js';

export { cliVersion } from './dispatch.js';

/**
 * The commands' modules. Each loads with a dynamic `import()` only when its command runs, so a command
 * loads only the SDK layers it needs (`validate` never loads MCP, process or HTTP code). To add a command,
 * declare it and its options in `optionTable.ts`, and add one line here — `name: () =>
 * import('./commands/x.js').then((m) => m.xCommand)` — and nothing else: a static import of a command
 * module in this file would load it for every command. Help comes from the table and loads none of them.
 * A light command (one that reads files and prints, nothing of MCP, processes or HTTP) goes in
 * `LIGHT_COMMANDS` and `light.ts` instead. The light commands (`LIGHT_COMMANDS` in `lightCommands.ts`) are declared in `light.ts`, which the bin runs
 * for them (bundled); they are in this table too, for the embedders and tests that call this `run`.
 */
const MODULES = new Map<string, () => Promise<CommandRun>>([
  ...Object.entries(LIGHT_MODULES),
  ['workflow', () => import('./commands/workflow.js').then((m) => m.workflowCommand)],
  ['services', () => import('./commands/services.js').then((m) => m.servicesCommand)],
  ['bridge', () => import('./commands/bridge.js').then((m) => m.bridgeCommand)],
  ['gateway', () => import('./commands/gateway.js').then((m) => m.gatewayCommand)],
  ['run', () => import('./commands/run.js').then((m) => m.runCommand)],
  ['resume', () => import('./commands/resume.js').then((m) => m.resumeCommand)],
  ['worker', () => import('./commands/worker.js').then((m) => m.workerCommand)],
  ['ui', () => import('./commands/ui.js').then((m) => m.uiCommand)],
  ['migrate', () => import('./commands/migrate.js').then((m) => m.migrateCommand)],
  ['auth', () => import('./commands/auth.js').then((m) => m.authCommand)],
  ['init', () => import('./commands/init.js').then((m) => m.initCommand)],
]);

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code. */
export function run(argv: string[], io: Io = processIo): Promise<number> {
  return runCommands(MODULES, argv, io);
}
