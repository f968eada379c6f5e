/**
 * What `get_workflow` answers (SPEC §9): the accepted workflow and its version. Without sources (the
 * default) each definition is a summary — its digest, its launch settings and its file list with sizes —
 * so a model reads a large workflow for a few hundred bytes a service and keeps those services in
 * `apply_workflow` by reference; with sources, each definition is shown in full, with its digest.
 */
import type { ProjectPaths } from '../store/projectStore.js';
import { readAccepted } from '../store/workflowVersions.js';
import { definitionDigest } from '../workflow/digest.js';
import type { McpDefinition, Workflow } from '../workflow/workflowSchema.js';

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
    const shown = options.sources === true ? fullView(definition) : summaryView(definition);
    Object.defineProperty(definitions, name, { value: shown, enumerable: true, writable: true, configurable: true });
  }
  return { ...workflow, mcpDefinitions: definitions };
}

function fullView(definition: McpDefinition): Record<string, unknown> {
  return { digest: safeDigest(definition) ?? null, ...definition };
}

function summaryView(definition: McpDefinition): DefinitionSummary {
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
