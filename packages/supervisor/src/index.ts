/** `@scienceevolve/supervisor`: see `protocol.ts` for what hosts import. */
export {
  MARKER_ENV,
  DEFAULT_GRACE_MS,
  formatMarker,
  parseMarker,
  processStartTime,
  isHostAlive,
  processGroupOf,
  markerOf,
  scanMarkedProcesses,
  isHostMessage,
  isSupervisorMessage,
} from './protocol.js';
export type { MarkerParts, MarkedProcess, HostMessage, SupervisorMessage } from './protocol.js';
export { collectMarked, findMarked, listProcesses, isProcessAlive } from './collect.js';
export type { CollectOptions, CollectReport, KnownGroup, ProcessEntry } from './collect.js';
