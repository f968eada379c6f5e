/**
 * What changed between two workflow versions: the one function both `workflow load` and
 * `apply_workflow` use.
 */
import stableStringify from 'fast-json-stable-stringify';
import { definitionDigest } from './digest.js';
import type { Workflow } from './workflowSchema.js';

/** The difference between two versions. @internal */
export interface WorkflowDiff {
  /** Definitions added, removed, or whose digest changed, sorted. */
  changedMcps: string[];
  /**
   * Agents added, removed, or whose entry changed (harness, instructions, `mcpServers`), plus every agent
   * of the new version that uses a changed definition, sorted. These are the agents whose next invocation
   * starts differently.
   */
  changedAgents: string[];
  /** True when `orchestration` changed. */
  orchestrationChanged: boolean;
  /** True when anything changed. */
  changed: boolean;
}

/** Compares `before` (undefined: nothing accepted yet) with `after`. Both must be validated workflows. @internal */
export function diffWorkflows(before: Workflow | undefined, after: Workflow): WorkflowDiff {
  const oldDefs = before?.mcpDefinitions ?? {};
  const newDefs = after.mcpDefinitions;
  const changedMcps = new Set<string>();
  for (const name of new Set([...Object.keys(oldDefs), ...Object.keys(newDefs)])) {
    // Own entries only: a definition named "constructor" must not meet Object.prototype.
    const a = Object.hasOwn(oldDefs, name) ? oldDefs[name] : undefined;
    const b = Object.hasOwn(newDefs, name) ? newDefs[name] : undefined;
    if (a === undefined || b === undefined || definitionDigest(a) !== definitionDigest(b)) changedMcps.add(name);
  }

  const oldAgents = before?.agents ?? {};
  const changedAgents = new Set<string>();
  for (const name of new Set([...Object.keys(oldAgents), ...Object.keys(after.agents)])) {
    const a = Object.hasOwn(oldAgents, name) ? oldAgents[name] : undefined;
    const b = Object.hasOwn(after.agents, name) ? after.agents[name] : undefined;
    if (a === undefined || b === undefined || stableStringify(a) !== stableStringify(b)) changedAgents.add(name);
    else if (b.mcpServers.some((s) => s.project !== undefined && changedMcps.has(s.project))) changedAgents.add(name);
  }

  const orchestrationChanged =
    before === undefined || stableStringify(before.orchestration) !== stableStringify(after.orchestration);
  return {
    changedMcps: [...changedMcps].sort(),
    changedAgents: [...changedAgents].sort(),
    orchestrationChanged,
    changed: changedMcps.size > 0 || changedAgents.size > 0 || orchestrationChanged,
  };
}
