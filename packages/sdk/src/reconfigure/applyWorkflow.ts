/**
 * `apply_workflow` (SPEC §9): Main proposes a complete workflow snapshot; its references to accepted
 * definitions are resolved, the whole resolved snapshot is validated without executing anything, the rules
 * of Main reconfiguration are checked, and the result lands as one new accepted version or not at all.
 */
import stableStringify from 'fast-json-stable-stringify';
import { SdkError } from '../errors.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { type WorkflowVersion, acceptWorkflow, readAccepted } from '../store/workflowVersions.js';
import { definitionDigest } from '../workflow/digest.js';
import { toJsonPath } from '../workflow/jsonPath.js';
import { type ValidationIssue, invalidWorkflowError, validateWorkflow } from '../workflow/validate.js';
import { headerVariables, type Workflow } from '../workflow/workflowSchema.js';
import { remoteUrlRefusal } from './allowedUrls.js';
import { filterPolicyIssues } from './filterPolicy.js';
import { resolveReferences } from './references.js';
import { restoreRedacted } from './workflowView.js';
import { isPlainObject } from '../plainObject.js';

/** The answer of a successful apply. */
export interface ApplyResult {
  version: number;
  changedMcps: string[];
  changedAgents: string[];
}

/** Options of {@link applyWorkflow}. */
export interface ApplyOptions {
  /** `main` applies the rules of Main reconfiguration; `operator` only the general rules. Default `main`. */
  by?: 'main' | 'operator';
}

/**
 * Applies a snapshot. `snapshot.mcpDefinitions` omitted keeps the accepted table; supplied, it is the full
 * table, in which an accepted definition may be stated as `{ "accepted": "<digest>" }` (see
 * `references.ts`): it resolves to the accepted definition of that name with that digest, before
 * validation, so the limits count the resolved snapshot. Throws an SdkError: `reconfiguration_not_allowed`; `workflow_conflict` when, under Main, another
 * apply landed between reading the version in force and taking the project's lock (`data.version` is the
 * version it lost to); or `invalid_workflow` whose `data.errors` lists every issue (codes such as
 * `immutable_definition`, `remote_not_allowed`, `unknown_reference`).
 */
export async function applyWorkflow(
  paths: ProjectPaths,
  snapshot: unknown,
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const by = options.by ?? 'main';
  const current = await readAccepted(paths);
  const resolved = resolveReferences(snapshot, current?.workflow);
  let candidate = mergeSnapshot(resolved.snapshot, current);
  const policyIssues: ValidationIssue[] = [];
  if (by === 'main') {
    // The harness rules look at what Main wrote, before validation fills a default harness in.
    const inForce = requireReconfiguration(current);
    const applied = applyAgentPolicy(restoreRedacted(candidate, inForce.workflow), inForce);
    candidate = applied.snapshot;
    policyIssues.push(...applied.issues);
  }
  const validated = validateWorkflow(candidate);
  if (resolved.issues.length > 0 || policyIssues.length > 0 || !validated.ok) {
    throw invalidWorkflowError(
      sortIssues([...resolved.issues, ...policyIssues, ...validated.errors]),
      'the proposed workflow',
    );
  }
  const basedOn = current?.version ?? 0;
  const result = await acceptWorkflow(paths, validated.workflow, {
    by,
    // Checked inside the project's lock, against the version in force at that moment.
    check: (inForce, next) => {
      if (by !== 'main') return;
      // Two applies prepared from the same version: the first wins, the second must not silently undo it.
      const inForceVersion = inForce?.version ?? 0;
      if (inForceVersion !== basedOn) {
        throw new SdkError(
          'workflow_conflict',
          `the workflow changed to version ${inForceVersion} while this snapshot was prepared from version ${basedOn}; nothing was applied`,
          {
            remedy: 'call get_workflow, make the change again on the new version, and apply that',
            data: { version: inForceVersion, basedOn },
          },
        );
      }
      const issues = mainReconfigurationIssues(inForce, next);
      if (issues.length > 0) throw invalidWorkflowError(sortIssues(issues), 'the proposed workflow');
    },
  });
  return { version: result.version, changedMcps: result.changedMcps, changedAgents: result.changedAgents };
}

function sortIssues(issues: ValidationIssue[]): ValidationIssue[] {
  return issues.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The version in force when Main may reconfigure it; else `reconfiguration_not_allowed`. */
function requireReconfiguration(current: WorkflowVersion | undefined): WorkflowVersion {
  if (current === undefined || !current.workflow.orchestration.allowMainReconfiguration) {
    throw new SdkError('reconfiguration_not_allowed', 'this workflow does not allow Main to reconfigure services', {
      remedy: 'the operator must set orchestration.allowMainReconfiguration to true and load the workflow',
    });
  }
  return current;
}

/**
 * SPEC §9, on the snapshot as Main wrote it: an agent Main adds carries no `harness` and gets
 * `orchestration.defaultHarness`; without a default harness Main may not add agents. An existing agent
 * keeps its harness (checked after validation, in {@link mainReconfigurationIssues}).
 */
function applyAgentPolicy(
  snapshot: unknown,
  current: WorkflowVersion,
): { snapshot: unknown; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  if (!isPlainObject(snapshot) || !isPlainObject(snapshot.agents)) return { snapshot, issues };
  const before = current.workflow;
  const defaultHarness = before.orchestration.defaultHarness;
  const agents: Record<string, unknown> = {};
  for (const [name, agent] of Object.entries(snapshot.agents)) {
    let shown = agent;
    if (!Object.hasOwn(before.agents, name) && isPlainObject(agent)) {
      if (Object.hasOwn(agent, 'harness')) {
        issues.push({
          code: 'harness_not_allowed',
          path: toJsonPath(['agents', name, 'harness']),
          message: `Main never sets a harness: remove "harness" from the new agent "${name}"; it gets the operator's orchestration.defaultHarness`,
        });
      } else if (defaultHarness === undefined) {
        issues.push({
          code: 'harness_not_allowed',
          path: toJsonPath(['agents', name]),
          message: `Main may not add agents to this workflow (orchestration.defaultHarness is not set): give the work to an existing agent, or ask the operator to set a default harness`,
        });
      } else {
        shown = { ...agent, harness: defaultHarness };
      }
    }
    Object.defineProperty(agents, name, { value: shown, enumerable: true, writable: true, configurable: true });
  }
  return { snapshot: { ...snapshot, agents }, issues };
}

function mergeSnapshot(snapshot: unknown, current: WorkflowVersion | undefined): unknown {
  if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) return snapshot;
  const doc = snapshot as Record<string, unknown>;
  if (Object.hasOwn(doc, 'mcpDefinitions') || current === undefined) return doc;
  return { ...doc, mcpDefinitions: current.workflow.mcpDefinitions };
}

/**
 * The rules of SPEC §9 for Main: reconfiguration must be allowed; accepted definitions are immutable
 * (not rewritten, replaced or removed); `orchestration` and harnesses stay the operator's
 * (`harness_not_allowed`); a definition Main adds maps through `envFrom` only the host variables of
 * `orchestration.mainMayMapEnv` (`env_not_allowed`) and never opts out of the sandbox (`"sandbox": false`,
 * `sandbox_not_allowed`; an accepted operator definition keeps its opt-out); a remote URL Main adds must match
 * `orchestration.allowedRemoteUrls`; an entry offers no tool the operator's filters withhold
 * (`filter_not_allowed`, `filterPolicy.ts`).
 */
export function mainReconfigurationIssues(current: WorkflowVersion | undefined, next: Workflow): ValidationIssue[] {
  const before = requireReconfiguration(current).workflow;
  const issues: ValidationIssue[] = [];
  const mayMap = new Set(before.orchestration.mainMayMapEnv ?? []);
  for (const [name, definition] of Object.entries(next.mcpDefinitions)) {
    if (Object.hasOwn(before.mcpDefinitions, name)) continue;
    if (definition.sandbox === false) {
      issues.push({
        code: 'sandbox_not_allowed',
        path: toJsonPath(['mcpDefinitions', name, 'sandbox']),
        message: `a service Main proposes always runs in the sandbox when one is available; only the operator may opt a definition out: remove "sandbox" from "${name}"`,
      });
    }
    for (const [variable, hostVariable] of Object.entries(definition.envFrom)) {
      if (mayMap.has(hostVariable)) continue;
      issues.push({
        code: 'env_not_allowed',
        path: toJsonPath(['mcpDefinitions', name, 'envFrom', variable]),
        message:
          mayMap.size === 0
            ? `a service Main proposes may not read host variables (orchestration.mainMayMapEnv is empty): remove "${variable}" from envFrom`
            : `a service Main proposes may read only the host variables in orchestration.mainMayMapEnv (${[...mayMap].join(', ')}), not "${hostVariable}": map one of those or remove "${variable}"`,
      });
    }
  }
  for (const [name, definition] of Object.entries(before.mcpDefinitions)) {
    const proposed = Object.hasOwn(next.mcpDefinitions, name) ? next.mcpDefinitions[name] : undefined;
    if (proposed === undefined) {
      issues.push({
        code: 'immutable_definition',
        path: toJsonPath(['mcpDefinitions', name]),
        message: `the accepted service "${name}" cannot be removed by Main; keep it in mcpDefinitions unchanged (an agent that no longer needs it can simply stop referencing it)`,
      });
    } else if (definitionDigest(proposed) !== definitionDigest(definition)) {
      issues.push({
        code: 'immutable_definition',
        path: toJsonPath(['mcpDefinitions', name]),
        message: `the accepted service "${name}" cannot be changed; keep it as it is, add the new version under a new name, and move the agents' references to that name`,
      });
    }
  }
  if (stableStringify(before.orchestration) !== stableStringify(next.orchestration)) {
    issues.push({
      code: 'reconfiguration_not_allowed',
      path: '$.orchestration',
      message: "orchestration is the operator's to change; send it exactly as get_workflow returned it",
    });
  }
  const allowed = before.orchestration.allowedRemoteUrls;
  for (const [agentName, agent] of Object.entries(next.agents)) {
    const previous = Object.hasOwn(before.agents, agentName) ? before.agents[agentName] : undefined;
    if (previous !== undefined && stableStringify(previous.harness) !== stableStringify(agent.harness)) {
      issues.push({
        code: 'harness_not_allowed',
        path: toJsonPath(['agents', agentName, 'harness']),
        message: `the harness of "${agentName}" is the operator's to change; send it as get_workflow returned it`,
      });
    }
    // Who answers a service's questions is the operator's: Main may keep it, or narrow it to `decline` (no
    // answer at all); it never moves it to the model or the operator (an agent it adds starts at `model`).
    const answeredBefore = previous?.elicitation ?? 'model';
    const answeredAfter = agent.elicitation ?? 'model';
    if (answeredAfter !== answeredBefore && answeredAfter !== 'decline') {
      issues.push({
        code: 'reconfiguration_not_allowed',
        path: toJsonPath(['agents', agentName, 'elicitation']),
        message: `who answers the questions services ask "${agentName}" is the operator's ("${answeredBefore}"); Main may keep it or set "decline", never "${answeredAfter}"`,
      });
    }
    const knownUrls = new Set((previous?.mcpServers ?? []).map((s) => s.url).filter((u) => u !== undefined));
    agent.mcpServers.forEach((entry, index) => {
      if (entry.url === undefined || knownUrls.has(entry.url)) return;
      const refusal = remoteUrlRefusal(entry.url, allowed);
      if (refusal !== undefined) {
        issues.push({
          code: 'remote_not_allowed',
          path: toJsonPath(['agents', agentName, 'mcpServers', index, 'url']),
          message: refusal,
        });
      }
    });
  }
  issues.push(...filterPolicyIssues(before, next));
  issues.push(...remoteCredentialIssues(before, next, mayMap));
  return issues;
}

/**
 * A remote entry's credentials under Main (SPEC §8): an entry may keep headers and OAuth settings exactly as
 * an operator's entry of the same URL has them (so a credential never goes to a URL Main chose); otherwise
 * its `headers` may read only `orchestration.mainMayMapEnv` variables, and `oauth` (secrets from host
 * variables or files) is the operator's alone.
 */
function remoteCredentialIssues(before: Workflow, next: Workflow, mayMap: ReadonlySet<string>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const accepted = new Set<string>();
  for (const agent of Object.values(before.agents)) {
    for (const entry of agent.mcpServers) {
      if (entry.url !== undefined)
        accepted.add(stableStringify([entry.url, entry.headers ?? null, entry.oauth ?? null]));
    }
  }
  for (const [agentName, agent] of Object.entries(next.agents)) {
    agent.mcpServers.forEach((entry, index) => {
      if (entry.url === undefined || (entry.headers === undefined && entry.oauth === undefined)) return;
      if (accepted.has(stableStringify([entry.url, entry.headers ?? null, entry.oauth ?? null]))) return;
      if (entry.oauth !== undefined) {
        issues.push({
          code: 'env_not_allowed',
          path: toJsonPath(['agents', agentName, 'mcpServers', index, 'oauth']),
          message:
            'OAuth settings (client secrets and keys) are the operator\'s: remove "oauth", or keep an operator entry of this URL exactly as get_workflow returned it',
        });
      }
      for (const variable of headerVariables(entry.headers ?? {})) {
        if (mayMap.has(variable)) continue;
        issues.push({
          code: 'env_not_allowed',
          path: toJsonPath(['agents', agentName, 'mcpServers', index, 'headers']),
          message:
            mayMap.size === 0
              ? `a remote entry Main proposes may not send host variables (orchestration.mainMayMapEnv is empty): remove "headers", or keep an operator entry of this URL unchanged`
              : `a remote entry Main proposes may send only the host variables in orchestration.mainMayMapEnv (${[...mayMap].join(', ')}), not "${variable}"`,
        });
      }
    });
  }
  return issues;
}
