/** Errors as events publish them (SPEC §11: events never carry service logs). */
import type { ErrorRecord } from './runEvents.js';

/**
 * An error as published in events and in CLI `--json` output: the service layer's diagnostics keep the
 * last lines of a service's stderr (`stderrTail`) for run.json, but published errors never carry log content.
 * @internal
 */
export function publicError(error: ErrorRecord | null): ErrorRecord | null {
  if (error === null) return null;
  const strip = (data: Record<string, unknown> | undefined): Record<string, unknown> | undefined => {
    if (data === undefined) return undefined;
    const { stderrTail: _tail, failures, ...rest } = data;
    return Array.isArray(failures) ? { ...rest, failures: failures.map((f) => publicError(f as ErrorRecord)) } : rest;
  };
  const data = strip(error.data);
  return { ...error, ...(data === undefined ? {} : { data }) };
}
