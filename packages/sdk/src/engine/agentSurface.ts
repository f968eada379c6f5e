/**
 * The one place the engine builds an agent's surface from its live services and in-process tools (runs,
 * `services serve`), so limits given to the engine reach every surface the same way.
 */
import type { GateEvent } from '../surface/serviceGate.js';
import { type Surface, type SurfaceEntry, createSurface } from '../surface/surface.js';
import type { ToolFilter } from '../surface/toolFilter.js';

/** Options of {@link agentSurface}. */
export interface AgentSurfaceOptions {
  /** Keep the one service's own names (`services serve --passthrough`). Default false. */
  passthrough?: boolean;
  /** Milliseconds a forwarded call may take (the run's `forwardTimeoutMs`). Default 60,000. */
  forwardTimeoutMs?: number | undefined;
  /** Receives each service's rests and recoveries (the run journals them). */
  onGateEvent?: ((event: GateEvent) => void) | undefined;
  /** Service (alias) name → its tool filter (`toolFiltersOf` the invocation's plan). Default: none. */
  toolFilters?: ReadonlyMap<string, ToolFilter> | undefined;
}

/** The surface of one agent's invocation over `entries` (its sessions, then the fixed catalog for Main). */
export function agentSurface(entries: readonly SurfaceEntry[], options: AgentSurfaceOptions = {}): Surface {
  return createSurface(entries, {
    passthrough: options.passthrough ?? false,
    ...(options.forwardTimeoutMs === undefined ? {} : { timeoutMs: options.forwardTimeoutMs }),
    ...(options.onGateEvent === undefined ? {} : { onEvent: options.onGateEvent }),
    toolFilters: options.toolFilters,
  });
}
