/**
 * The supervisor's protocol: the messages between a host and its supervisor, and the marker every
 * service process carries in its environment. The process table is `@scienceevolve/supervisor/procfs`,
 * the kill path `@scienceevolve/supervisor/terminate`.
 */
import { type CgroupRef, isCgroupRef } from './cgroup.js';

export { formatMarker, isHostAlive, type MarkerParts, parseMarker } from './marker.js';

/**
 * What a host sends its supervisor over the IPC channel. The channel is ordered, so a message is
 * recorded before any later one is; every message is idempotent, so a host may send its whole state
 * again to a new supervisor and then keep sending as usual.
 */
export type HostMessage =
  /** First message: where to log and how long to wait between SIGTERM and SIGKILL. */
  | { type: 'hello'; graceMs: number; logPath: string; hostPid: number }
  /**
   * A marker the host is about to put into a service's environment; answered with `ack`. With `cgroup`, the
   * service's control group (created, empty), collected with the marker and removed when the host is gone.
   */
  | { type: 'intent'; id: number; marker: string; cgroup?: CgroupRef }
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
      return isPositiveInt(m.id) && isNonEmptyString(m.marker) && (m.cgroup === undefined || isCgroupRef(m.cgroup));
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
