/** The `scienceevolve` command: parse, call the SDK, print. Nothing here that the SDK's API cannot do. */
import { readFileSync } from 'node:fs';
import { EXIT, type Io, printJson, processIo, reportError, usageError } from './output.js';

/** Runs one command with its arguments (the command name removed); resolves to the exit code. */
type CommandRun = (argv: string[], io: Io) => Promise<number>;

/**
 * The commands' modules. Each loads with a dynamic `import()` only when its command runs, so a command
 * loads only the SDK layers it needs (`validate` never loads MCP, process or HTTP code). To add a command,
 * declare it and its options in `optionTable.ts`, and add one line here — `name: () =>
 * import('./commands/x.js').then((m) => m.xCommand)` — and nothing else: a static import of a command
 * module in this file would load it for every command. Help comes from the table and loads none of them.
 */
const MODULES = new Map<string, () => Promise<CommandRun>>([
  ['validate', () => import('./commands/validate.js').then((m) => m.validateCommand)],
  ['workflow', () => import('./commands/workflow.js').then((m) => m.workflowCommand)],
  ['services', () => import('./commands/services.js').then((m) => m.servicesCommand)],
  ['bridge', () => import('./commands/bridge.js').then((m) => m.bridgeCommand)],
  ['gateway', () => import('./commands/gateway.js').then((m) => m.gatewayCommand)],
  ['harness-config', () => import('./commands/harnessConfig.js').then((m) => m.harnessConfigCommand)],
  ['run', () => import('./commands/run.js').then((m) => m.runCommand)],
  ['resume', () => import('./commands/resume.js').then((m) => m.resumeCommand)],
  ['status', () => import('./commands/status.js').then((m) => m.statusCommand)],
  ['worker', () => import('./commands/worker.js').then((m) => m.workerCommand)],
  ['ui', () => import('./commands/ui.js').then((m) => m.uiCommand)],
  ['migrate', () => import('./commands/migrate.js').then((m) => m.migrateCommand)],
  ['auth', () => import('./commands/auth.js').then((m) => m.authCommand)],
  ['schema', () => import('./commands/schema.js').then((m) => m.schemaCommand)],
  ['init', () => import('./commands/init.js').then((m) => m.initCommand)],
]);

/** The CLI's version, from its package.json (one small file read; nothing else loads). */
export function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: unknown;
  };
  return String(manifest.version);
}

/**
 * The help `--help` asks for in `name rest…`: the subcommand's (`services probe --help`), the command's
 * (`run --help`), the group's (`services --help`: each subcommand), or the top-level help for a name that
 * is no command.
 */
async function helpFor(name: string | undefined, rest: readonly string[]): Promise<string> {
  // Loaded only for help: the commands never need the help text.
  const { commandHelp, groupHelp, topHelp } = await import('./help.js');
  const { findCommand } = await import('./optionTable.js');
  if (name === undefined) return topHelp();
  const sub = rest[0] === undefined || rest[0].startsWith('-') ? undefined : findCommand(`${name} ${rest[0]}`);
  if (sub !== undefined) return commandHelp(sub);
  const command = findCommand(name);
  if (command !== undefined) return commandHelp(command);
  return groupHelp(name) ?? topHelp();
}

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code. */
export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const json = argv.includes('--json');
  const debug = argv.includes('--debug');
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      io.stdout(await helpFor(undefined, []));
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (name === '--version') {
      if (json) printJson(io, { version: cliVersion() });
      else io.stdout(`${cliVersion()}\n`);
      return EXIT.ok;
    }
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout(await helpFor(name, rest));
      return EXIT.ok;
    }
    // A Map: `constructor` or `toString` is an unknown command, not Object.prototype's.
    const load = MODULES.get(name);
    if (load === undefined) throw usageError(`unknown command "${name}"`);
    const command = await load();
    return await command(rest, io);
  } catch (error) {
    return reportError(error, io, { json, debug });
  }
}
