/**
 * The plan of an invocation's services (SPEC §5.1): an agent's `mcpServers` resolved against the accepted
 * workflow. Entries that name the same definition share one process in the invocation (aliases); every
 * alias still appears under its own name. Remote entries are one connection each.
 */
import { SdkError } from '../errors.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import { definitionDigest } from '../workflow/digest.js';
import type { McpDefinition, McpServerEntry, RemoteOAuth, ToolFilter } from '../workflow/workflowSchema.js';

/** One process to start: a definition and every name the agent sees it under. */
export interface PlannedProjectService {
  kind: 'project';
  /** The first alias: the name of its copy directory and its stderr log. */
  name: string;
  /** Every `mcpServers` name that points at this definition, in the order the agent lists them. */
  aliases: string[];
  definitionName: string;
  digest: string;
  definition: McpDefinition;
  /** Alias → its tool filter (`mcpServers[].tools`), for the aliases that have one. */
  toolFilters: Map<string, ToolFilter>;
}

/** One remote service to connect. */
export interface PlannedRemoteService {
  kind: 'remote';
  name: string;
  aliases: string[];
  url: string;
  /** Header → value template (`Bearer ${VAR}`), read from the host when connected. */
  headers?: Readonly<Record<string, string>>;
  /** The entry's OAuth settings. */
  oauth?: RemoteOAuth;
  /** Alias → its tool filter, for the aliases that have one. */
  toolFilters: Map<string, ToolFilter>;
}

/** One entry of an invocation's plan. */
export type PlannedService = PlannedProjectService | PlannedRemoteService;

/** Resolves `agent`'s services in `version`. `unknown_agent` when the workflow has no such agent. */
export function planServices(version: WorkflowVersion, agent: string): PlannedService[] {
  const agents = version.workflow.agents;
  // Own keys only: an agent named `constructor` or `toString` is absent, not Object.prototype's.
  const agentConfig = Object.hasOwn(agents, agent) ? agents[agent] : undefined;
  if (agentConfig === undefined) {
    throw new SdkError('unknown_agent', `the workflow (version ${version.version}) has no agent "${agent}"`, {
      remedy: `use one of: ${Object.keys(version.workflow.agents).join(', ')}`,
      data: { agent, version: version.version },
    });
  }
  const plan: PlannedService[] = [];
  const byDefinition = new Map<string, PlannedProjectService>();
  for (const entry of agentConfig.mcpServers) {
    if (entry.url !== undefined) {
      plan.push({
        kind: 'remote',
        name: entry.name,
        aliases: [entry.name],
        url: entry.url,
        ...(entry.headers === undefined ? {} : { headers: entry.headers }),
        ...(entry.oauth === undefined ? {} : { oauth: entry.oauth }),
        toolFilters: filtersOf(entry),
      });
      continue;
    }
    const definitionName = entry.project!;
    const shared = byDefinition.get(definitionName);
    if (shared !== undefined) {
      // The filter belongs to the assignment, not the definition: aliases with different filters share the process.
      shared.aliases.push(entry.name);
      if (entry.tools !== undefined) shared.toolFilters.set(entry.name, entry.tools);
      continue;
    }
    const definitions = version.workflow.mcpDefinitions;
    const definition = Object.hasOwn(definitions, definitionName) ? definitions[definitionName] : undefined;
    if (definition === undefined) {
      // Validation refuses this; a hand-edited data dir is the only way here.
      throw new SdkError('unknown_reference', `agent "${agent}" names the undefined service "${definitionName}"`, {
        remedy: 'load a corrected workflow with `scienceevolve workflow load`',
        data: { agent, definition: definitionName },
      });
    }
    const planned: PlannedProjectService = {
      kind: 'project',
      name: entry.name,
      aliases: [entry.name],
      definitionName,
      digest:
        (Object.hasOwn(version.digests, definitionName) ? version.digests[definitionName] : undefined) ??
        definitionDigest(definition),
      definition,
      toolFilters: filtersOf(entry),
    };
    byDefinition.set(definitionName, planned);
    plan.push(planned);
  }
  return plan;
}

function filtersOf(entry: McpServerEntry): Map<string, ToolFilter> {
  return new Map(entry.tools === undefined ? [] : [[entry.name, entry.tools]]);
}

/** Every alias's tool filter across a plan: what the agent's surface is built with (`toolFilters`). */
export function toolFiltersOf(plan: readonly PlannedService[]): Map<string, ToolFilter> {
  return new Map(plan.flatMap((planned) => [...planned.toolFilters]));
}
