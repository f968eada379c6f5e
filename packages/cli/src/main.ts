/** The `scienceevolve` command: parse, call the SDK, print. Nothing here that the SDK's API cannot do. */
import { BRIDGE_HELP, bridgeCommand } from './commands/bridge.js';
import { GATEWAY_HELP, gatewayCommand } from './commands/gateway.js';
import { HARNESS_CONFIG_HELP, harnessConfigCommand } from './commands/harnessConfig.js';
import { INIT_HELP, initCommand } from './commands/init.js';
import { MIGRATE_HELP, migrateCommand } from './commands/migrate.js';
import { RESUME_HELP, resumeCommand } from './commands/resume.js';
import { RUN_HELP, runCommand } from './commands/run.js';
import { SCHEMA_HELP, schemaCommand } from './commands/schema.js';
import { SERVICES_HELP, servicesCommand } from './commands/services.js';
import { STATUS_HELP, statusCommand } from './commands/status.js';
import { UI_HELP, uiCommand } from './commands/ui.js';
import { VALIDATE_HELP, validateCommand } from './commands/validate.js';
import { WORKFLOW_HELP, workflowCommand } from './commands/workflow.js';
import { EXIT, type Io, processIo, reportError, usageError } from './output.js';

type Command = (argv: string[], io: Io) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  validate: validateCommand,
  workflow: workflowCommand,
  migrate: migrateCommand,
  services: servicesCommand,
  bridge: bridgeCommand,
  gateway: gatewayCommand,
  'harness-config': harnessConfigCommand,
  run: runCommand,
  resume: resumeCommand,
  status: statusCommand,
  schema: schemaCommand,
  init: initCommand,
  ui: uiCommand,
};

const HELP = `scienceevolve — workflows of agents with supervised MCP services

Usage: scienceevolve <command> [options]

  ${[VALIDATE_HELP, WORKFLOW_HELP, SERVICES_HELP, BRIDGE_HELP, GATEWAY_HELP, HARNESS_CONFIG_HELP, RUN_HELP, RESUME_HELP, STATUS_HELP, UI_HELP, MIGRATE_HELP, SCHEMA_HELP, INIT_HELP].join('\n').split('\n').join('\n  ')}

Every command takes --json (one JSON document on stdout) and --debug (stack traces on errors).
Exit codes: 0 success, 1 the work failed, 2 usage error.
`;

/** Runs the CLI with `argv` (without node and the script); resolves to the exit code. */
export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const json = argv.includes('--json');
  const debug = argv.includes('--debug');
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
      io.stdout(HELP);
      return name === undefined ? EXIT.usage : EXIT.ok;
    }
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout(HELP);
      return EXIT.ok;
    }
    // Own keys only: `constructor` or `toString` is an unknown command, not Object.prototype's.
    if (!Object.hasOwn(COMMANDS, name)) throw usageError(`unknown command "${name}"`);
    return await COMMANDS[name]!(rest, io);
  } catch (error) {
    return reportError(error, io, { json, debug });
  }
}
