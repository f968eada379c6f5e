/** The `scienceevolve` command: parse, call the SDK, print. Nothing here that the SDK's API cannot do. */
import { EXIT, type Io, processIo, reportError, usageError } from './output.js';

/** One command's module, as the table below loads it. */
interface CommandModule {
  /** Runs the command with its arguments (the command name removed); resolves to the exit code. */
  run: (argv: string[], io: Io) => Promise<number>;
  /** The command's lines of the top-level help. */
  help: string;
}

/**
 * The commands, in the order of the help text. Each loads its module with a dynamic `import()` only when
 * it runs, so a command loads only the SDK layers it needs (`validate` never loads MCP, process or HTTP
 * code). To add a command, add one line here — `name: () => import('./commands/x.js').then((m) => ({ run:
 * m.xCommand, help: m.X_HELP }))` — and nothing else: a static import of a command module in this file
 * would load it for every command. `--help` loads them all.
 */
const COMMANDS = new Map<string, () => Promise<CommandModule>>([
  ['validate', () => import('./commands/validate.js').then((m) => ({ run: m.validateCommand, help: m.VALIDATE_HELP }))],
  ['workflow', () => import('./commands/workflow.js').then((m) => ({ run: m.workflowCommand, help: m.WORKFLOW_HELP }))],
  ['services', () => import('./commands/services.js').then((m) => ({ run: m.servicesCommand, help: m.SERVICES_HELP }))],
  ['bridge', () => import('./commands/bridge.js').then((m) => ({ run: m.bridgeCommand, help: m.BRIDGE_HELP }))],
  ['gateway', () => import('./commands/gateway.js').then((m) => ({ run: m.gatewayCommand, help: m.GATEWAY_HELP }))],
  [
    'harness-config',
    () =>
      import('./commands/harnessConfig.js').then((m) => ({ run: m.harnessConfigCommand, help: m.HARNESS_CONFIG_HELP })),
  ],
  ['run', () => import('./commands/run.js').then((m) => ({ run: m.runCommand, help: m.RUN_HELP }))],
  ['resume', () => import('./commands/resume.js').then((m) => ({ run: m.resumeCommand, help: m.RESUME_HELP }))],
  ['status', () => import('./commands/status.js').then((m) => ({ run: m.statusCommand, help: m.STATUS_HELP }))],
  ['ui', () => import('./commands/ui.js').then((m) => ({ run: m.uiCommand, help: m.UI_HELP }))],
  ['migrate', () => import('./commands/migrate.js').then((m) => ({ run: m.migrateCommand, help: m.MIGRATE_HELP }))],
  ['schema', () => import('./commands/schema.js').then((m) => ({ run: m.schemaCommand, help: m.SCHEMA_HELP }))],
  ['init', () => import('./commands/init.js').then((m) => ({ run: m.initCommand, help: m.INIT_HELP }))],
]);

/** The top-level help: every command's lines, which loads every command module. */
async function helpText(): Promise<string> {
  const modules = await Promise.all([...COMMANDS.values()].map((load) => load()));
  return `scienceevolve — workflows of agents with supervised MCP services

Usage: scienceevolve <command> [options]

  ${modules
    .map((m) => m.help)
    .join('\n')
    .split('\n')
    .join('\n  ')}

Every command takes --json (one JSON document on stdout) and --debug (stack traces on errors).
Exit codes: 0 success, 1 the work failed, 2 usage error.
`;
}

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code. */
export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const json = argv.includes('--json');
  const debug = argv.includes('--debug');
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      io.stdout(await helpText());
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout(await helpText());
      return EXIT.ok;
    }
    // A Map: `constructor` or `toString` is an unknown command, not Object.prototype's.
    const load = COMMANDS.get(name);
    if (load === undefined) throw usageError(`unknown command "${name}"`);
    const command = await load();
    return await command.run(rest, io);
  } catch (error) {
    return reportError(error, io, { json, debug });
  }
}
