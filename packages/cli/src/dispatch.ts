/**
 * What every command table shares: help, `--version`, the lookup of a command in a table and the error
 * report. `main.ts` runs it over every command; `light.ts` over the light ones (the path the bin bundles).
 */
import { readFileSync } from 'node:fs';
import { cliPackageJsonUrl } from './cliPaths.js';
import { EXIT, type Io, printJson, reportError, usageError } from './output.js';

/** Runs one command with its arguments (the command name removed); resolves to the exit code. */
export type CommandRun = (argv: string[], io: Io) => Promise<number>;

/** A command table: a command's name → a loader of its module's run function (a dynamic `import()`). */
export type CommandTable = ReadonlyMap<string, () => Promise<CommandRun>>;

/** The CLI's version, from its package.json (one small file read; nothing else loads). */
export function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(cliPackageJsonUrl(), 'utf8')) as {
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

/** Runs `argv` (without node and the script) against `commands`; resolves to the exit code. */
export async function runCommands(commands: CommandTable, argv: string[], io: Io): Promise<number> {
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
    const load = commands.get(name);
    if (load === undefined) throw usageError(`unknown command "${name}"`);
    const command = await load();
    return await command(rest, io);
  } catch (error) {
    return reportError(error, io, { json, debug });
  }
}
