/** `@scienceevolve/supervisor`: see `protocol.ts` for what hosts import. */
export {
  MARKER_ENV,
  formatMarker,
  parseMarker,
  processStartTime,
  isHostAlive,
  processGroupOf,
  markerOf,
  scanMarkedProcesses,
} from './protocol.js';
export type { MarkerParts, MarkedProcess } from './protocol.js';
