/**
 * What `get_workflow` answers (SPEC §9): the accepted workflow and its version. Without sources (the
 * default) each definition is a summary — its digest, its launch settings and its file list with sizes —
 * so a model reads a large workflow for a few hundred bytes a service and keeps those services in
 * `apply_workflow` by reference; with sources, each definition is shown in full, with its digest. Every
 * URL (remote entries, model endpoints, `allowedRemoteUrls`) is shown redacted, and
 * {@link restoreRedacted} puts the accepted values back when Main echoes them.
 */
import stableStringify from 'fast-json-stable-stringify';
import type { z } from 'zod';
import { redactUrl } from '../redact.js';
import type { ProjectPaths } from '../store/projectStore.js';
import { readAccepted } from '../store/workflowVersions.js';
import { definitionDigest } from '../workflow/digest.js';
import {
  type WorkflowAgent,
  type Harness,
  HarnessSchema,
  type McpDefinition,
  type WorkflowOrchestration,
  OrchestrationSchema,
  type Workflow,
} from '../workflow/workflowSchema.js';
import { isPlainObject } from '../plainObject.js';

/** Options of {@link readWorkflowView}. */
export interface WorkflowViewOptions {
  /** Show every definition's files in full. Default `false`: a summary without file contents. */
  sources?: boolean;
}

/** One definition as `get_workflow` shows it without sources. */
export interface DefinitionSummary {
  /** The definition's digest (SPEC §2): what a reference `{ "accepted": "<digest>" }` names. */
  digest: string;
  /** The launch settings, as accepted (`entrypoint`, `command`, `args`, `envFrom`, …). */
  [setting: string]: unknown;
  /** Path → size of the file in UTF-8 bytes, in the order of the accepted definition; no contents. */
  fileBytes: Record<string, number>;
}

/** The answer of `get_workflow`: `workflow` is `null` when no version was accepted yet (version 0). */
export interface WorkflowView {
  version: number;
  workflow: Record<string, unknown> | null;
}

/** Reads the accepted workflow and shows it as `get_workflow` answers. */
export async function readWorkflowView(paths: ProjectPaths, options: WorkflowViewOptions = {}): Promise<WorkflowView> {
  const accepted = await readAccepted(paths);
  if (accepted === undefined) return { version: 0, workflow: null };
  return { version: accepted.version, workflow: workflowView(accepted.workflow, options) };
}

/** The accepted workflow with each definition shown with its digest: in full with `sources`, else as a summary. */
export function workflowView(workflow: Workflow, options: WorkflowViewOptions = {}): Record<string, unknown> {
  const definitions: Record<string, unknown> = {};
  for (const [name, definition] of Object.entries(workflow.mcpDefinitions)) {
    const shown = options.sources === true ? fullView(definition) : definitionSummary(definition);
    Object.defineProperty(definitions, name, { value: shown, enumerable: true, writable: true, configurable: true });
  }
  return { ...redactWorkflowUrls(workflow), mcpDefinitions: definitions };
}

/**
 * `workflow` with every URL redacted as {@link workflowView} shows it (remote entries, model endpoints,
 * `allowedRemoteUrls`), its definitions whole: what any other output (the run viewer) may show of a version.
 * @internal
 */
export function redactWorkflowUrls(workflow: Workflow): Workflow {
  const agents: Record<string, WorkflowAgent> = {};
  for (const [name, agent] of Object.entries(workflow.agents)) {
    Object.defineProperty(agents, name, {
      value: agentView(agent),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return { ...workflow, orchestration: orchestrationView(workflow.orchestration), agents };
}

/**
 * An agent as the model sees it: every URL redacted (`redactUrl`: no user information, query values
 * `REDACTED`), so a token in an operator's remote URL or model endpoint never reaches the model.
 */
export function agentView(agent: WorkflowAgent): WorkflowAgent {
  return {
    ...agent,
    harness: harnessView(agent.harness),
    mcpServers: agent.mcpServers.map((entry) =>
      entry.url === undefined ? entry : { ...entry, url: redactUrl(entry.url) },
    ),
  };
}

/** `orchestration` as the model sees it: its URLs redacted, like {@link agentView}. */
export function orchestrationView(orchestration: WorkflowOrchestration): WorkflowOrchestration {
  return {
    ...orchestration,
    allowedRemoteUrls: orchestration.allowedRemoteUrls.map(redactUrl),
    ...(orchestration.defaultHarness === undefined
      ? {}
      : { defaultHarness: harnessView(orchestration.defaultHarness) }),
  };
}

function harnessView(harness: Harness): Harness {
  if (!('baseUrl' in harness) || harness.baseUrl === undefined) return harness;
  return { ...harness, baseUrl: redactUrl(harness.baseUrl) };
}

/**
 * Undoes {@link workflowView}'s redaction in a snapshot Main sends back: an `orchestration` equal to the
 * view of the accepted one, an existing agent's harness equal to the view of its accepted harness, and a
 * remote entry whose URL is the view of the URL of that agent's entry of the same name become the
 * accepted values again. Anything else is left as Main wrote it, for the rules to judge.
 */
export function restoreRedacted(snapshot: unknown, accepted: Workflow): unknown {
  if (!isPlainObject(snapshot)) return snapshot;
  const out: Record<string, unknown> = { ...snapshot };
  if (sameAs(OrchestrationSchema, snapshot.orchestration, orchestrationView(accepted.orchestration))) {
    out.orchestration = accepted.orchestration;
  }
  if (isPlainObject(snapshot.agents)) {
    const agents: Record<string, unknown> = {};
    for (const [name, agent] of Object.entries(snapshot.agents)) {
      let restored = agent;
      const before = Object.hasOwn(accepted.agents, name) ? accepted.agents[name] : undefined;
      if (before !== undefined && isPlainObject(agent)) restored = restoreAgent(agent, before);
      Object.defineProperty(agents, name, { value: restored, enumerable: true, writable: true, configurable: true });
    }
    out.agents = agents;
  }
  return out;
}

function restoreAgent(agent: Record<string, unknown>, before: WorkflowAgent): Record<string, unknown> {
  const out: Record<string, unknown> = { ...agent };
  if (Object.hasOwn(agent, 'harness') && sameAs(HarnessSchema, agent.harness, harnessView(before.harness))) {
    out.harness = before.harness;
  }
  if (Array.isArray(agent.mcpServers)) {
    out.mcpServers = agent.mcpServers.map((entry: unknown) => {
      if (!isPlainObject(entry) || typeof entry.url !== 'string') return entry;
      const original = before.mcpServers.find(
        (b) => b.name === entry.name && b.url !== undefined && b.url !== entry.url && redactUrl(b.url) === entry.url,
      );
      return original === undefined ? entry : { ...entry, url: original.url };
    });
  }
  return out;
}

/** Whether `value`, with its defaults filled by `schema`, is `view`. */
function sameAs(schema: z.ZodType, value: unknown, view: unknown): boolean {
  if (value === undefined) return false;
  const parsed = schema.safeParse(value);
  return parsed.success && stableStringify(parsed.data) === stableStringify(view);
}

function fullView(definition: McpDefinition): Record<string, unknown> {
  return { digest: safeDigest(definition) ?? null, ...definition };
}

/** A definition as `get_workflow` shows it without sources: its digest, its settings, its files' sizes. */
export function definitionSummary(definition: McpDefinition): DefinitionSummary {
  const { files, ...settings } = definition;
  const fileBytes: Record<string, number> = {};
  for (const [path, content] of Object.entries(files ?? {})) {
    const bytes = typeof content === 'string' ? Buffer.byteLength(content, 'utf8') : 0;
    Object.defineProperty(fileBytes, path, { value: bytes, enumerable: true, writable: true, configurable: true });
  }
  return { digest: safeDigest(definition) ?? '', ...settings, fileBytes };
}

/**
 * The digest of an accepted definition, or `undefined` when what was read from the data dir is not a
 * definition at all (a hand-edited file): such a definition has no digest a reference could name.
 */
export function safeDigest(definition: McpDefinition | undefined): string | undefined {
  if (typeof definition !== 'object' || definition === null) return undefined;
  if (typeof definition.files !== 'object' || definition.files === null) return undefined;
  try {
    return definitionDigest(definition);
  } catch {
    return undefined;
  }
}
