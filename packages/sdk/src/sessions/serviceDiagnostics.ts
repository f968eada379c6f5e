/**
 * The errors of a service's life (SPEC §5 "Diagnostics", §12): every one names the service, what failed
 * and the log path, and carries the facts as data: service, definition, digest, the launch line, exit
 * code or signal, the last lines of stderr, and the log path.
 */
import { type ErrorCode, ERROR_FIXES, SdkError } from '../errors.js';

/** Who a project service is and how it was launched. */
export interface ServiceIdentity {
  service: string;
  definition: string;
  digest: string;
  /** The launch line: the resolved command, the absolute entrypoint, the args. */
  launch: { command: string; entrypoint: string; args: readonly string[] };
  /** The stderr log file. */
  log: string;
}

/** Facts about one failure, beyond the identity. */
export interface FailureFacts {
  exitCode?: number | null;
  signal?: string | null;
  /** The last lines of stderr (data only, never in the message or an event). */
  stderrTail?: string[];
  remedy?: string;
  cause?: unknown;
  /** Further data (e.g. `timeoutMs`, `method`, `reason`). */
  extra?: Record<string, unknown>;
}

/** The launch line as text: `node /abs/server.cjs --flag`. */
export function launchLine(identity: ServiceIdentity): string {
  return [identity.launch.command, identity.launch.entrypoint, ...identity.launch.args].join(' ');
}

/**
 * An SdkError for a project service: `service "<name>" <what> (<launch line>); see <log>`.
 *
 * @param what what failed, e.g. `did not finish initialize within 35 s`
 */
export function serviceError(
  code: ErrorCode,
  identity: ServiceIdentity,
  what: string,
  facts: FailureFacts = {},
): SdkError {
  const data: Record<string, unknown> = {
    service: identity.service,
    definition: identity.definition,
    digest: identity.digest,
    launch: { ...identity.launch, args: [...identity.launch.args] },
    log: identity.log,
    ...facts.extra,
  };
  if (facts.exitCode !== undefined) data.exitCode = facts.exitCode;
  if (facts.signal !== undefined) data.signal = facts.signal;
  if (facts.stderrTail !== undefined) data.stderrTail = facts.stderrTail;
  return new SdkError(code, `service "${identity.service}" ${what} (${launchLine(identity)}); see ${identity.log}`, {
    remedy: facts.remedy ?? ERROR_FIXES[code],
    data,
    cause: facts.cause,
  });
}

/** `with code 3`, `by SIGKILL`, or `` when nothing is known. */
export function describeExit(exitCode: number | null | undefined, signal: string | null | undefined): string {
  if (signal) return ` by ${signal}`;
  if (exitCode !== null && exitCode !== undefined) return ` with code ${exitCode}`;
  return '';
}

/** `35 s`, `1.5 s`, `200 ms`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
