/**
 * Main never widens the operator's tool filters (SPEC §3.2, §9). The filters the version in force puts on
 * the entries for one service are the operator's allowance for it; an entry in Main's snapshot may offer
 * only tools that allowance offers:
 * 1. an entry kept (same agent, same name, same service) keeps or narrows its own filter;
 * 2. a new entry for a service its agent already had is as narrow as one of that agent's entries for it;
 * 3. a new entry for a service its agent did not have is as narrow as every entry for it, in any agent;
 * 4. a service no entry of the version in force names (Main's own new definition, a new remote) is free.
 * A service is a definition's content (its digest: a copy under another name is the same service) or a
 * remote URL's origin and path. "As narrow as" is {@link filterNarrows}: decided from the patterns, refused when
 * the rules cannot show it.
 */
import { definitionDigest } from '../workflow/digest.js';
import { toJsonPath } from '../workflow/jsonPath.js';
import { type StepBudget, filterNarrows } from '../workflow/toolGlob.js';
import type { ValidationIssue } from '../workflow/validate.js';
import type { McpServerEntry, ToolFilter, Workflow } from '../workflow/workflowSchema.js';

/** Characters compared, at most, deciding the filters of one snapshot; past it every entry left is refused. */
export const FILTER_POLICY_STEPS = 20_000_000;

/** The `filter_not_allowed` issues of `next`, against `before` (the version in force). */
export function filterPolicyIssues(before: Workflow, next: Workflow): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const budget: StepBudget = { left: FILTER_POLICY_STEPS };
  const beforeKey = serviceKeys(before);
  const nextKey = serviceKeys(next);
  // Every entry of the version in force, by service.
  const everywhere = new Map<string, Array<{ agent: string; entry: McpServerEntry }>>();
  for (const [agent, { mcpServers }] of Object.entries(before.agents)) {
    for (const entry of mcpServers) {
      const key = beforeKey(entry);
      if (key === undefined) continue;
      const list = everywhere.get(key) ?? [];
      list.push({ agent, entry });
      everywhere.set(key, list);
    }
  }
  for (const [agentName, agent] of Object.entries(next.agents)) {
    agent.mcpServers.forEach((entry, index) => {
      const key = nextKey(entry);
      const operators = key === undefined ? undefined : everywhere.get(key);
      if (operators === undefined) return;
      const path = toJsonPath(['agents', agentName, 'mcpServers', index, 'tools']);
      const own = operators.filter((o) => o.agent === agentName);
      const kept = own.find((o) => o.entry.name === entry.name);
      const what = describe(entry);
      let refusal: string | undefined;
      if (kept !== undefined) {
        if (!filterNarrows(entry.tools, kept.entry.tools, budget)) {
          refusal = `the operator's filter of "${entry.name}" (${shown(kept.entry.tools)}) may be kept or narrowed, never widened: send "tools" as get_workflow returned it, or narrower (${shown(entry.tools)} is not)`;
        }
      } else if (own.length > 0) {
        if (!own.some((o) => filterNarrows(entry.tools, o.entry.tools, budget))) {
          refusal = `a new entry for ${what} may offer "${agentName}" only what one of its entries for it offers (${own.map((o) => `"${o.entry.name}": ${shown(o.entry.tools)}`).join('; ')}): copy one of those filters into "tools", or narrow it`;
        }
      } else {
        const narrowest = operators.filter((o) => !filterNarrows(entry.tools, o.entry.tools, budget));
        if (narrowest.length > 0) {
          const first = narrowest[0] as { agent: string; entry: McpServerEntry };
          refusal = `${what} is given to other agents with tool filters, and a new assignment must be as narrow as each of them; it is not as narrow as "${first.agent}"'s "${first.entry.name}" (${shown(first.entry.tools)}): copy that filter into "tools", or narrow it`;
        }
      }
      if (refusal === undefined) return;
      issues.push({
        code: 'filter_not_allowed',
        path,
        message:
          budget.left < 0
            ? `${refusal}. (The filters were too many to compare; an operator's patterns kept verbatim are always accepted)`
            : refusal,
      });
    });
  }
  return issues;
}

/** The service an entry names, as a key: the digest of its definition, or its URL as parsed. */
function serviceKeys(workflow: Workflow): (entry: McpServerEntry) => string | undefined {
  const digests = new Map<string, string>();
  return (entry) => {
    if (entry.url !== undefined) {
      try {
        // Origin and path: the same endpoint with another query (a redacted token, say) is the same service.
        const url = new URL(entry.url);
        return `url:${url.origin}${url.pathname}`;
      } catch {
        return `url:${entry.url}`;
      }
    }
    const name = entry.project;
    if (name === undefined || !Object.hasOwn(workflow.mcpDefinitions, name)) return undefined;
    let digest = digests.get(name);
    if (digest === undefined) {
      digest = definitionDigest(workflow.mcpDefinitions[name] as Workflow['mcpDefinitions'][string]);
      digests.set(name, digest);
    }
    return `project:${digest}`;
  };
}

function describe(entry: McpServerEntry): string {
  // Never the URL itself: its query may carry a token.
  return entry.url !== undefined ? `the remote service of "${entry.name}"` : `the service "${entry.project}"`;
}

function shown(filter: ToolFilter | undefined): string {
  if (filter === undefined) return 'no filter: every tool';
  return JSON.stringify(filter);
}
