/**
 * Tool patterns (SPEC §3.2): an exact tool name, or a glob where `*` stands for any run of characters
 * (also none) and every other character for itself. The one owner of what a pattern means: the surface
 * matches tool names with {@link globMatches}, and Main's policy decides with {@link filterNarrows} whether
 * one filter offers only tools another offers — exactly, for the cases below, and by refusing otherwise.
 */
import type { ToolFilter } from './workflowSchema.js';

/**
 * A bound on the work of deciding containment over many patterns (one step is one character compared).
 * When it runs out, every answer still to come is the cautious one (not contained, may intersect).
 */
export interface StepBudget {
  left: number;
}

/**
 * Whether `name` matches `pattern`. Linear in practice (greedy match with one backtrack point), so a
 * pattern with many `*` cannot blow up on a long name the way a regular expression could.
 *
 * With a pattern as `name`, this also decides containment: every name `inner` matches, `pattern` matches
 * exactly when `globMatches(pattern, inner)`. (Write each `*` of `inner` as a letter no literal of
 * `pattern` is: only a `*` of `pattern` can take it, and a `*` that takes one letter takes any run.) A
 * `*` of `name` is never taken by a literal of `pattern`, since a literal is never `*`.
 */
export function globMatches(pattern: string, name: string, budget?: StepBudget): boolean {
  let p = 0;
  let n = 0;
  let starP = -1;
  let starN = 0;
  while (n < name.length) {
    if (budget !== undefined && --budget.left < 0) return false;
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

/**
 * Whether some name matches both `a` and `b`: a search over pairs of positions (at most
 * `(a.length + 1) × (b.length + 1)` states). When `budget` runs out the answer is `true` (the cautious one).
 */
export function globsIntersect(a: string, b: string, budget?: StepBudget): boolean {
  const width = b.length + 1;
  const seen = new Uint8Array((a.length + 1) * width);
  const stack: number[] = [0];
  seen[0] = 1;
  const visit = (i: number, j: number) => {
    const k = i * width + j;
    if (seen[k] === 0) {
      seen[k] = 1;
      stack.push(k);
    }
  };
  while (stack.length > 0) {
    if (budget !== undefined && --budget.left < 0) return true;
    const k = stack.pop() as number;
    const i = Math.floor(k / width);
    const j = k % width;
    if (i === a.length && j === b.length) return true;
    const x = i < a.length ? a[i] : undefined;
    const y = j < b.length ? b[j] : undefined;
    // A `*` may take nothing more; a `*` takes the other side's literal; equal literals advance both.
    if (x === '*') visit(i + 1, j);
    if (y === '*') visit(i, j + 1);
    if (x === '*' && y !== undefined && y !== '*') visit(i, j + 1);
    if (y === '*' && x !== undefined && x !== '*') visit(i + 1, j);
    if (x !== undefined && x !== '*' && x === y) visit(i + 1, j + 1);
  }
  return false;
}

/** Whether `pattern` is all `*`: it matches every name. */
function matchesAll(pattern: string): boolean {
  return /^\*+$/.test(pattern);
}

/**
 * Whether `proposed` offers only tools that `allowed` offers, whatever the service's tool names are
 * (`undefined` is no filter: every tool). Decided from the patterns alone:
 * - include ⊆ include: each proposed pattern is covered by one allowed pattern;
 * - include ⊆ exclude: no proposed pattern shares a name with an excluded one (exact);
 * - exclude ⊆ exclude: each excluded pattern is covered by one proposed exclude pattern;
 * - no filter or exclude ⊆ include: only when an allowed pattern is all `*`.
 * A case these rules cannot show (a pattern covered only by several together) is not narrower.
 */
export function filterNarrows(
  proposed: ToolFilter | undefined,
  allowed: ToolFilter | undefined,
  budget?: StepBudget,
): boolean {
  if (allowed === undefined) return true;
  if (allowed.include !== undefined) {
    if (allowed.include.some(matchesAll)) return true;
    if (proposed?.include === undefined) return false;
    const verbatim = new Set(allowed.include);
    return proposed.include.every((p) => verbatim.has(p) || allowed.include?.some((a) => globMatches(a, p, budget)));
  }
  const excluded = allowed.exclude ?? [];
  if (excluded.length === 0) return true;
  if (proposed === undefined) return false;
  if (proposed.include !== undefined) {
    return proposed.include.every((p) => excluded.every((e) => !globsIntersect(p, e, budget)));
  }
  const mine = proposed.exclude ?? [];
  const verbatim = new Set(mine);
  return excluded.every((e) => verbatim.has(e) || mine.some((p) => globMatches(p, e, budget)));
}
