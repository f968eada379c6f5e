/** Argument parsing for every command: node's parseArgs, strict, with usage errors (exit 2) for anything unknown. */
import { type ParseArgsConfig, parseArgs } from 'node:util';

import { MAX_DURATION_MS } from '@scienceevolve/sdk/workflow';
import { usageError } from './output.js';

/** Options every command takes. */
export const COMMON_OPTIONS = {
  json: { type: 'boolean', default: false },
  debug: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** Parses `argv` with the command's options plus the common ones; unknown options are usage errors. */
export function parse<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O): ParsedFor<O> {
  try {
    return parseArgs({
      args: argv,
      options: { ...COMMON_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    }) as unknown as ParsedFor<O>;
  } catch (error) {
    throw usageError((error as Error).message);
  }
}

/** The parsed values of options `O`, typed by their declared `type`. */
export interface ParsedFor<O> {
  values: {
    [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : O[K] extends { multiple: true } ? string[] : string;
  } & {
    json: boolean;
    debug: boolean;
    help: boolean;
  };
  positionals: string[];
}

/** The value of a required string option, or a usage error naming it. */
export function required(value: string | undefined, flag: string, what: string): string {
  if (value === undefined || value === '') throw usageError(`${flag} is required: ${what}`);
  return value;
}

/**
 * A whole-number option (a count, a port, a version or a duration): decimal digits only, from 0 to
 * 2^31 − 1 (the longest timer; a longer `setTimeout` would fire at once). `0x50`, `1e3`, `-1`, `" 5"` and
 * the empty string are usage errors (exit 2), never read as numbers.
 */
export function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value)) throw usageError(`${flag} takes a whole number in decimal digits, not "${value}"`);
  const n = Number(value);
  if (n > MAX_DURATION_MS) throw usageError(`${flag} takes a whole number from 0 to ${MAX_DURATION_MS}, not ${value}`);
  return n;
}
