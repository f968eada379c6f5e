/**
 * Argument parsing for every command, from the option table (`optionTable.ts`): node's parseArgs, strict,
 * then every whole number checked against its stated range and every choice against its list — usage
 * errors (exit 2) for anything unknown or malformed, before the command starts anything.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';

import {
  COMMON_OPTIONS,
  type CommandSpec,
  type IntRange,
  type OptionSpec,
  type OptionSpecs,
  RANGES,
} from './optionTable.js';
import { usageError } from './output.js';

export { type IntRange, RANGES } from './optionTable.js';

/** The parsed value of one option of the table. */
export type ValueOf<S extends OptionSpec> = S['type'] extends 'boolean'
  ? boolean
  : S['type'] extends 'int'
    ? number | undefined
    : S extends { multiple: true }
      ? string[] | undefined
      : string | undefined;

/** The parsed values of a command's options `O` (plus the common ones), typed by the table. */
export interface Parsed<O extends OptionSpecs> {
  values: { [K in keyof O]: ValueOf<O[K]> } & { json: boolean; debug: boolean; help: boolean };
  positionals: string[];
}

/**
 * Parses `argv` with `command`'s options from the table plus the common ones. Unknown options, a value
 * outside an option's range or choices, and a deprecated option given beside its replacement are usage
 * errors. An option with an `env` variable takes that variable's value when the option is not given (an
 * empty variable counts as unset). Booleans default to false.
 */
export function parseCommand<C extends CommandSpec>(
  command: C,
  argv: string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): Parsed<C['options']> {
  const specs: OptionSpecs = { ...COMMON_OPTIONS, ...command.options };
  const config: NonNullable<ParseArgsConfig['options']> = {};
  for (const [name, spec] of Object.entries(specs)) {
    config[name] = {
      type: spec.type === 'boolean' ? 'boolean' : 'string',
      ...(spec.short === undefined ? {} : { short: spec.short }),
      ...(spec.multiple ? { multiple: true } : {}),
    };
  }
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options: config, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError((error as Error).message);
  }
  // Keys are the table's own names: an option named like an Object.prototype member cannot reach it.
  const values: Record<string, unknown> = Object.create(null);
  for (const [name, spec] of Object.entries(specs)) {
    let raw = Object.hasOwn(parsed.values, name) ? parsed.values[name] : undefined;
    if (raw === undefined && spec.env !== undefined && env[spec.env]) raw = env[spec.env];
    values[name] = checkedValue(name, spec, raw);
  }
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.deprecated !== undefined && values[name] !== undefined && values[spec.deprecated] !== undefined) {
      throw usageError(`--${name} and --${spec.deprecated} are one setting; give --${spec.deprecated} alone`);
    }
  }
  return { values, positionals: parsed.positionals } as unknown as Parsed<C['options']>;
}

function checkedValue(name: string, spec: OptionSpec, raw: unknown): unknown {
  if (spec.type === 'boolean') return raw === true;
  if (raw === undefined) return undefined;
  if (spec.type === 'int') return positiveInt(raw as string, `--${name}`, spec.range ?? RANGES.ms);
  if (spec.choices !== undefined) {
    for (const value of (spec.multiple ? raw : [raw]) as string[]) {
      if (!spec.choices.includes(value))
        throw usageError(`--${name} takes ${choiceList(spec.choices)}, not "${value}"`);
    }
  }
  return raw;
}

/** `a or b`, `a, b or c`, or `one of a, b, c, d` for longer lists. */
function choiceList(choices: readonly string[]): string {
  if (choices.length > 3) return `one of ${choices.join(', ')}`;
  return choices.length === 1 ? choices[0]! : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`;
}

/**
 * The SDK options that the table maps `values` to: `{ [spec.sdk]: value }` for every option of `specs`
 * with an `sdk` name whose value is defined. What the SDK takes under one name, the CLI passes under that
 * name from one place.
 */
export function sdkOptions(specs: OptionSpecs, values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.sdk === undefined) continue;
    const value = values[name];
    if (value !== undefined) out[spec.sdk] = value;
  }
  return out;
}

/** The value of a required string option, or a usage error naming it (and its variable, when it has one). */
export function required(value: string | undefined, flag: string, what: string): string {
  if (value === undefined || value === '') {
    const env = flag === '--data-dir' ? ' (or set SCIENCEEVOLVE_DATA_DIR)' : '';
    throw usageError(`${flag} is required${env}: ${what}`);
  }
  return value;
}

/**
 * A whole-number option (a count, a port, a version or a duration): decimal digits only (`0x50`, `1e3`,
 * `+5`, `-1`, `" 5"`, `1.5` and the empty string are refused, never read as numbers), within `range`
 * (default {@link RANGES.ms}: 0 to 2^31 − 1). Anything else is a usage error (exit 2) naming the option and
 * the range.
 */
export function positiveInt(value: string | undefined, flag: string, range: IntRange = RANGES.ms): number | undefined {
  if (value === undefined) return undefined;
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  if (!/^[0-9]+$/.test(value)) {
    throw usageError(
      `${flag} takes a whole number in decimal digits from ${range.min} to ${range.max}, not "${shown}"`,
    );
  }
  // Past 16 digits a number loses precision; it is over every range anyway.
  const n = value.length > 16 ? Number.POSITIVE_INFINITY : Number(value);
  if (n < range.min || n > range.max) {
    throw usageError(`${flag} takes a whole number from ${range.min} to ${range.max}, not ${shown}`);
  }
  return n;
}
