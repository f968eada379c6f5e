/**
 * `@scienceevolve/supervisor`: everything hosts may import, in one place. The sub-paths are the same
 * pieces one by one: `./protocol` (messages and the marker), `./procfs` (the process table),
 * `./terminate` (the one kill path), `./cgroup` (control groups, where the host may manage them).
 */
export {
  CGROUP_ROOT_NAME,
  cgroupMembers,
  cgroupSupport,
  createServiceCgroup,
  DEFAULT_PIDS_MAX,
  deadHostCgroups,
  isCgroupRef,
  joinCgroupCommand,
  killCgroup,
  MAX_PIDS_MAX,
  pidsLimitReached,
  removeCgroup,
  removeEmptyDirs,
} from './cgroup.js';
export type { CgroupRef, CgroupSupport, CollectionMechanism, CreateCgroupOptions } from './cgroup.js';
export {
  MARKER_ENV,
  hasProcfs,
  isProcessAlive,
  listProcesses,
  markerOf,
  ProcessTable,
  processGroupOf,
  processStartTime,
  readStat,
  scanMarkedProcesses,
} from './procfs.js';
export type { MarkedProcess, ProcessEntry } from './procfs.js';
export { formatMarker, isHostAlive, parseMarker } from './marker.js';
export type { MarkerParts } from './marker.js';
export { isHostMessage, isSupervisorMessage } from './protocol.js';
export type { HostMessage, SupervisorMessage } from './protocol.js';
export {
  cappedDurationMs,
  collectGroup,
  collectMarked,
  DEFAULT_GRACE_MS,
  DEFAULT_KILL_WAIT_MS,
  DEFAULT_POLL_MS,
  groupTarget,
  MAX_TIMER_MS,
  markerTarget,
  terminate,
} from './terminate.js';
export type {
  CollectGroupOptions,
  CollectOptions,
  GroupTargetOptions,
  KnownGroup,
  MarkerTargetOptions,
  Selection,
  TerminateOptions,
  TerminateReport,
  TerminateTarget,
} from './terminate.js';
