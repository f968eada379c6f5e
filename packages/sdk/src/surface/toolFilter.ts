/**
 * Per-assignment tool filters (SPEC §3.2): an agent's `mcpServers` entry may name the tools it is
 * offered (`include`) or withheld (`exclude`), by exact name or `*` glob over the service's own tool
 * names. The surface lists only what passes, so a withheld tool has no surface name and cannot be called.
 */
import type { ToolFilter } from '../workflow/workflowSchema.js';

export type { ToolFilter };

/**
 * Whether `name` matches `pattern`, where `*` stands for any run of characters (also none) and every
 * other character stands for itself. Linear in practice (greedy match with one backtrack point), so a
 * pattern with many `*` cannot blow up on a long name the way a regular expression could.
 */
export function globMatches(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  while (n < name.length) {
    if (p < pattern.length && pattern[p] === '*') {
      starP = p;
      starN = n;
      p += 1;
    } else if (p < pattern.length && pattern[p] === name[n]) {
      p += 1;
      n += 1;
    } else if (starP !== -1) {
      p = starP + 1;
      starN += 1;
      n = starN;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p += 1;
  return p === pattern.length;
}

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
