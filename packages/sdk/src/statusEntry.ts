/**
 * `@scienceevolve/sdk/status`: {@link runStatus}, the read-only report of a data dir's runs, invocations
 * and live services. A light entry point: it reads records and the process table, and loads nothing of
 * MCP, processes or HTTP. Every name here is also exported by the package root (public) or by `internal.ts` (internal).
 */
export { runStatus } from './engine/runStatus.js';
export type {
  StatusOptions,
  StatusReport,
  ProjectStatus,
  RunStatusReport,
  InvocationStatus,
  LiveService,
  DamagedStore,
  PrestartedSet,
} from './engine/runStatus.js';
export type { TokenCounts, UsageTotals } from './events/runEvents.js';
