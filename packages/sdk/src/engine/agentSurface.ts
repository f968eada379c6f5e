/**
 * The one place the engine builds an agent's surface from its live services and in-process tools (runs,
 * `services serve`), so limits given to the engine reach every surface the same way.
 */
import { type Surface, type SurfaceEntry, createSurface } from '../bridge/surface.js';

/** Options of {@link agentSurface}. */
export interface AgentSurfaceOptions {
  /** Keep the one service's own names (`services serve --passthrough`). Default false. */
  passthrough?: boolean;
}

/** The surface of one agent's invocation over `entries` (its sessions, then the fixed catalog for Main). */
export function agentSurface(entries: readonly SurfaceEntry[], options: AgentSurfaceOptions = {}): Surface {
  return createSurface(entries, { passthrough: options.passthrough ?? false });
}
