/**
 * Per-assignment tool filters (SPEC §3.2): an agent's `mcpServers` entry may name the tools it is
 * offered (`include`) or withheld (`exclude`), by exact name or `*` glob over the service's own tool
 * names. The surface lists only what passes, so a withheld tool has no surface name and cannot be called.
 */
import { globMatches } from '../workflow/toolGlob.js';
import type { ToolFilter } from '../workflow/workflowSchema.js';

/** What a pattern means is owned by `workflow/toolGlob.ts`, which Main's filter policy uses too. */
export { globMatches };

export type { ToolFilter };

/** Whether the service's tool `name` passes `filter` (every tool passes when there is no filter). */
export function toolPasses(name: string, filter: ToolFilter | undefined): boolean {
  if (filter === undefined) return true;
  if (filter.include !== undefined) return filter.include.some((pattern) => globMatches(pattern, name));
  if (filter.exclude !== undefined) return !filter.exclude.some((pattern) => globMatches(pattern, name));
  return true;
}

/** The tools of `tools` that pass `filter`, in their order. */
export function filterTools<T extends { name: string }>(
  tools: readonly T[],
  filter: ToolFilter | undefined,
): readonly T[] {
  return filter === undefined ? tools : tools.filter((tool) => toolPasses(tool.name, filter));
}
