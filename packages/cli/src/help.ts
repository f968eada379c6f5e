/**
 * Help text and the option lists of `docs/cli.md`, both made from the option table (`optionTable.ts`).
 * Imports the table only: `--help` loads no command module and no SDK code.
 */
import { COMMANDS, COMMON_OPTIONS, type CommandSpec, type OptionSpec, subcommandsOf } from './optionTable.js';

/** The variable the data dir comes from when `--data-dir` is not given. */
const DATA_DIR_ENV = 'SCIENCEEVOLVE_DATA_DIR';

/** `--name VALUE` as usage shows it. */
function flag(name: string, spec: OptionSpec): string {
  const short = spec.short === undefined ? '' : `, -${spec.short}`;
  if (spec.type === 'boolean') return `--${name}${short}`;
  return `--${name}${short} ${spec.value ?? (spec.type === 'int' ? 'N' : 'V')}`;
}

/** What an option takes, in words: `ms, 1–2147483647`, `info|debug|none`. Empty for a switch or free text. */
function takes(spec: OptionSpec): string {
  if (spec.type === 'int' && spec.range !== undefined)
    return `${spec.unit ?? 'count'}, ${spec.range.min}–${spec.range.max}`;
  if (spec.choices !== undefined) return spec.choices.join('|');
  return '';
}

/** The help line of an option with its range, default, variable and deprecation. */
function describe(spec: OptionSpec): string {
  const facts = [
    takes(spec),
    spec.default === undefined ? '' : `default ${spec.default}`,
    spec.env === undefined ? '' : `or $${spec.env}`,
    spec.multiple ? 'repeatable' : '',
  ].filter((f) => f !== '');
  const text = `${spec.help}${facts.length === 0 ? '' : ` (${facts.join('; ')})`}`;
  return spec.deprecated === undefined ? text : `deprecated, use --${spec.deprecated}: ${text}`;
}

/** Every option of `command`, its own first, then the common ones. */
function allOptions(command: CommandSpec): [string, OptionSpec][] {
  return [...Object.entries(command.options), ...Object.entries(COMMON_OPTIONS)];
}

/** The usage line of a command: `services probe [options]` plus its positional arguments. */
function usage(command: CommandSpec): string {
  return `scienceevolve ${command.name} [options]${command.args === undefined ? '' : ` ${command.args}`}`;
}

/** `--help` of one command: usage, what it does, and every option the table declares for it, one a line. */
export function commandHelp(command: CommandSpec): string {
  const options = allOptions(command);
  const width = Math.min(34, Math.max(...options.map(([name, spec]) => flag(name, spec).length)) + 2);
  const lines = options.map(([name, spec]) => {
    const left = flag(name, spec);
    const pad = left.length + 2 > width ? `\n  ${' '.repeat(width)}` : ' '.repeat(width - left.length);
    return `  ${left}${pad}${describe(spec)}`;
  });
  return `Usage: ${usage(command)}\n\n${command.summary}\n\nOptions:\n${lines.join('\n')}\n`;
}

/** `--help` of a command group (`services`): each subcommand's help. */
export function groupHelp(group: string): string | undefined {
  const subs = subcommandsOf(group);
  if (subs.length === 0) return undefined;
  return subs.map(commandHelp).join('\n');
}

/** The top-level help: every command with its positional arguments and what it does. */
export function topHelp(): string {
  const commands: readonly CommandSpec[] = COMMANDS;
  const names = commands.map((c) => `${c.name}${c.args === undefined ? '' : ` ${c.args}`}`);
  const width = Math.min(36, Math.max(...names.map((n) => n.length)) + 2);
  const lines = commands.map((c, i) => {
    const left = names[i]!;
    const pad = left.length + 2 > width ? `\n  ${' '.repeat(width)}` : ' '.repeat(width - left.length);
    return `  ${left}${pad}${c.summary}`;
  });
  return `scienceevolve — workflows of agents with supervised MCP services

Usage: scienceevolve <command> [options]
       scienceevolve <command> --help    the command's options
       scienceevolve --version           the version

Commands:
${lines.join('\n')}

Every command takes --json (one JSON document on stdout) and --debug (stack traces on errors).
Exit codes: 0 success, 1 the work failed, 2 usage error.
Environment: ${DATA_DIR_ENV} is the data dir wherever --data-dir is not given (the option wins).
`;
}

/** A Markdown table cell: pipes escaped, so a choice list `a|b` stays one cell. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** The Markdown table of a command's own options (the common ones are described once, at the top of the page). */
export function optionsMarkdown(command: CommandSpec): string {
  const rows = Object.entries(command.options).map(([name, spec]) => {
    const what = spec.sdk === undefined ? '' : ` (SDK: \`${spec.sdk}\`)`;
    const help =
      spec.deprecated === undefined ? spec.help : `**deprecated**, use \`--${spec.deprecated}\`: ${spec.help}`;
    const env = spec.env === undefined ? '' : `; or \`$${spec.env}\``;
    return `| \`${cell(flag(name, spec))}\` | ${cell(takes(spec) || (spec.type === 'boolean' ? 'switch' : 'text'))} | ${cell(spec.default ?? '')} | ${cell(`${help}${env}${what}${spec.multiple ? '; repeatable' : ''}`)} |`;
  });
  if (rows.length === 0) return 'Options: only the common `--json`, `--debug` and `--help`.';
  return [
    'Options (besides the common `--json`, `--debug` and `--help`):',
    '',
    '| option | takes | default | does |',
    '| --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

const BEGIN = /<!-- options: ([a-z -]+) -->\n[\s\S]*?<!-- \/options -->/g;

/**
 * `docs/cli.md` with every generated block brought up to date: the text between
 * `<!-- options: <command> -->` and `<!-- /options -->` becomes that command's option table. Throws for a
 * block naming no command, and for a command of the table without a block.
 */
export function updateCliDocs(markdown: string): string {
  const seen = new Set<string>();
  const updated = markdown.replace(BEGIN, (_, name: string) => {
    const command = COMMANDS.find((c) => c.name === name);
    if (command === undefined) throw new Error(`docs/cli.md has an options block for "${name}", which is no command`);
    seen.add(name);
    return `<!-- options: ${name} -->\n${optionsMarkdown(command)}\n<!-- /options -->`;
  });
  const missing = COMMANDS.filter((c) => !seen.has(c.name)).map((c) => c.name);
  if (missing.length > 0) throw new Error(`docs/cli.md has no options block for ${missing.join(', ')}`);
  return updated;
}
