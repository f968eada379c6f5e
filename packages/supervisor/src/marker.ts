/**
 * The marker every service process carries in its environment (`SCIENCEEVOLVE_MARKER`, SPEC §5.3): it
 * names the project, the host process and the invocation, so that strays are found by it (SPEC §6).
 */
import { readStat } from './procfs.js';

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
 * True while the host a marker names is alive: the same pid with the same start time (so a reused pid is
 * not mistaken for it), and not a zombie (a killed host may linger as one until its parent reaps it).
 */
export function isHostAlive(parts: Pick<MarkerParts, 'hostPid' | 'hostStart'>): boolean {
  const host = readStat(parts.hostPid);
  return host !== undefined && !host.exited && host.startTime === parts.hostStart;
}
