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

/** The longest duration in whole seconds whose milliseconds still fit a timer: 2,147,483 s (about 24.8 days). */
export const MAX_DURATION_SEC = Math.floor(MAX_DURATION_MS / 1000);

/** A stated range of a whole-number option, both ends included. */
export interface IntRange {
  min: number;
  max: number;
}

/** The ranges of the CLI's whole-number options: every numeric option names one. */
export const RANGES = {
  /** A TCP port; 0 asks the system for a free one. */
  port: { min: 0, max: 65_535 },
  /** A duration in milliseconds: up to 2^31 − 1 (a longer `setTimeout` fires at once). */
  ms: { min: 0, max: MAX_DURATION_MS },
  /** A duration in whole seconds whose milliseconds fit a timer. */
  sec: { min: 0, max: MAX_DURATION_SEC },
  /** A timeout in whole seconds that must leave some time: at least 1. */
  positiveSec: { min: 1, max: MAX_DURATION_SEC },
  /** A stored version number. */
  version: { min: 1, max: MAX_DURATION_MS },
} as const satisfies Record<string, IntRange>;

/**
 * A whole-number option (a count, a port, a version or a duration): decimal digits only (`0x50`, `1e3`,
 * `+5`, `-1`, `" 5"`, `1.5` and the empty string are refused, never read as numbers), within `range`
 * (default {@link RANGES.ms}: 0 to 2^31 − 1). Anything else is a usage error (exit 2) naming the option
 * and the range.
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
