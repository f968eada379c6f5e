/**
 * The supervisor's protocol: the marker every service process carries in its environment, the way to
 * find processes by it, and the messages between a host and its supervisor. This module is the only part
 * of `@scienceevolve/supervisor` that the SDK imports.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The environment variable that carries a service's marker (SPEC §5.3). */
export const MARKER_ENV = 'SCIENCEEVOLVE_MARKER';

/** What a marker names: the project, the host process (pid and its start time), the invocation. */
export interface MarkerParts {
  /** The project id (SPEC §2); never contains `:`. */
  projectId: string;
  /** The host's pid. */
  hostPid: number;
  /** The host's start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`), so a reused pid is not mistaken for the host. */
  hostStart: string;
  /** The invocation id; never contains `:`. */
  invocationId: string;
}

const MARKER_PREFIX = 'se1';

/** `se1:<projectId>:<hostPid>:<hostStart>:<invocationId>` */
export function formatMarker(parts: MarkerParts): string {
  for (const [k, v] of Object.entries(parts)) {
    if (String(v).includes(':') || String(v) === '')
      throw new Error(`marker part ${k} must be non-empty and contain no ":"`);
  }
  return `${MARKER_PREFIX}:${parts.projectId}:${parts.hostPid}:${parts.hostStart}:${parts.invocationId}`;
}

/** The parts of a marker, or `undefined` when the text is not one. */
export function parseMarker(text: string): MarkerParts | undefined {
  const parts = text.split(':');
  if (parts.length !== 5 || parts[0] !== MARKER_PREFIX) return undefined;
  const [, projectId, pid, hostStart, invocationId] = parts as [string, string, string, string, string];
  const hostPid = Number(pid);
  if (!Number.isInteger(hostPid) || hostPid <= 0 || !projectId || !hostStart || !invocationId) return undefined;
  return { projectId, hostPid, hostStart, invocationId };
}

/**
 * The start time of a process in clock ticks since boot, or `undefined` when it is gone (or this is not
 * Linux). Field 22 of `/proc/<pid>/stat`; the command name (field 2) may hold spaces and parentheses, so
 * fields are counted after its closing parenthesis.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // rest[0] is field 3 (state); field 22 is rest[19].
    return rest[19];
  } catch {
    return undefined;
  }
}

/** True while the host a marker names is alive (same pid, same start time). */
export function isHostAlive(parts: Pick<MarkerParts, 'hostPid' | 'hostStart'>): boolean {
  return processStartTime(parts.hostPid) === parts.hostStart;
}

/** One process found by {@link scanMarkedProcesses}. */
export interface MarkedProcess {
  pid: number;
  /** Its process group id. */
  pgid: number;
  marker: string;
}

/** The process group id of `pid` (field 5 of `/proc/<pid>/stat`), or `undefined` when it is gone. */
export function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pgid = Number(rest[2]);
    return Number.isInteger(pgid) ? pgid : undefined;
  } catch {
    return undefined;
  }
}

/** The marker in a process's environment, or `undefined` (gone, not readable, or unmarked). */
export function markerOf(pid: number): string | undefined {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return undefined;
  }
  const key = Buffer.from(`${MARKER_ENV}=`);
  let start = 0;
  while (start < environ.length) {
    let end = environ.indexOf(0, start);
    if (end === -1) end = environ.length;
    if (environ.subarray(start, start + key.length).equals(key)) {
      return environ.subarray(start + key.length, end).toString('utf8');
    }
    start = end + 1;
  }
  return undefined;
}

/**
 * Every live process whose environment carries a marker accepted by `match`, read from `/proc`
 * (readable for processes of the same user). A process that cleared its own environment cannot be
 * found this way. Zombies are skipped: they hold no resources and vanish when reaped.
 */
export function scanMarkedProcesses(match: (marker: string) => boolean): MarkedProcess[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: MarkedProcess[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    const marker = markerOf(pid);
    if (marker === undefined || !match(marker)) continue;
    if (isZombie(pid)) continue;
    const pgid = processGroupOf(pid);
    if (pgid === undefined) continue;
    found.push({ pid, pgid, marker });
  }
  return found;
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}

/** Default milliseconds between SIGTERM and SIGKILL when a group is collected (SPEC §5.7): 2000. */
export const DEFAULT_GRACE_MS = 2000;

/**
 * What a host sends its supervisor over the IPC channel. The channel is ordered, so a message is
 * recorded before any later one is; every message is idempotent, so a host may send its whole state
 * again to a new supervisor and then keep sending as usual.
 */
export type HostMessage =
  /** First message: where to log and how long to wait between SIGTERM and SIGKILL. */
  | { type: 'hello'; graceMs: number; logPath: string; hostPid: number }
  /** A marker the host is about to put into a service's environment; answered with `ack`. */
  | { type: 'intent'; id: number; marker: string }
  /** A process group was started: `pgid` is the leader's pid, its processes carry `marker`. */
  | { type: 'register'; pgid: number; marker: string }
  /** The host collected the group itself; the supervisor forgets it. */
  | { type: 'release'; pgid: number }
  /** The host will use the marker no more; the supervisor stops sweeping for it. */
  | { type: 'releaseMarker'; marker: string }
  /** Answered with `ack` once everything sent before it is recorded. */
  | { type: 'sync'; id: number };

/** What a supervisor sends its host. */
export type SupervisorMessage =
  /** The `intent` or `sync` with this id is recorded. */
  { type: 'ack'; id: number };

const isPositiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0;
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** True when `value` is a well-formed {@link HostMessage} (the supervisor ignores anything else). */
export function isHostMessage(value: unknown): value is HostMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  switch (m.type) {
    case 'hello':
      return typeof m.graceMs === 'number' && m.graceMs >= 0 && isNonEmptyString(m.logPath) && isPositiveInt(m.hostPid);
    case 'intent':
      return isPositiveInt(m.id) && isNonEmptyString(m.marker);
    case 'register':
      return isPositiveInt(m.pgid) && isNonEmptyString(m.marker);
    case 'release':
      return isPositiveInt(m.pgid);
    case 'releaseMarker':
      return isNonEmptyString(m.marker);
    case 'sync':
      return isPositiveInt(m.id);
    default:
      return false;
  }
}

/** True when `value` is a well-formed {@link SupervisorMessage}. */
export function isSupervisorMessage(value: unknown): value is SupervisorMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return m.type === 'ack' && isPositiveInt(m.id);
}
