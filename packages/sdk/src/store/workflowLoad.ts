/** The operator's load (`scienceevolve workflow load`): validate, store sources, accept a new version if anything changed. */
import { stat } from 'node:fs/promises';
import { packFolder } from '../workflow/packFolder.js';
import { invalidWorkflowError, validateWorkflowText } from '../workflow/validate.js';
import type { Workflow } from '../workflow/workflowSchema.js';
import { readTextFile } from './atomicFile.js';
import { resolveProjectId } from './projectId.js';
import { openProject } from './projectStore.js';
import { acceptWorkflow } from './workflowVersions.js';

/** Options of {@link loadWorkflow}. @public */
export interface LoadWorkflowOptions {
  /** The data directory (see docs/data-dir.md). */
  dataDir: string;
  /** The project id; derived from `workspace` when absent. */
  project?: string | undefined;
  /** The workspace the project id is derived from when `project` is absent. */
  workspace?: string | undefined;
  /** A path to a `workflow.json` or a workflow folder, or the document itself. */
  workflow: string | Workflow | Record<string, unknown>;
}

/** The result of a load: the shape of `workflow load --json`. @public */
export interface LoadWorkflowResult {
  /** The project id. */
  project: string;
  /** The accepted version: the new one, or the same one when nothing changed. */
  version: number;
  /** True when this load created a new version. */
  changed: boolean;
  /** Definition name → the digest of its stored source. */
  digests: Record<string, string>;
  /** Definitions added or changed by this load. */
  changedMcps: string[];
  /** Agents whose services changed with this load. */
  changedAgents: string[];
}

/**
 * Reads and validates a `workflow.json` file, or packs a workflow folder (`workflow.yaml` and `services/`)
 * when `path` is a directory; throws `invalid_workflow` (every issue in `data.errors`), `io_error`, or one
 * of the folder errors of `packFolder`.
 * @internal
 */
export async function readWorkflowFile(path: string): Promise<Workflow> {
  if ((await stat(path).catch(() => undefined))?.isDirectory()) return (await packFolder(path)).workflow;
  const text = await readTextFile(path, 'workflow file');
  const result = validateWorkflowText(text);
  if (!result.ok) throw invalidWorkflowError(result.errors, path);
  return result.workflow;
}

/** Validates, stores every definition's source and accepts the workflow as the operator. @public */
export async function loadWorkflow(options: LoadWorkflowOptions): Promise<LoadWorkflowResult> {
  const workflow = typeof options.workflow === 'string' ? await readWorkflowFile(options.workflow) : options.workflow;
  const project = resolveProjectId(options);
  const paths = await openProject(options.dataDir, project);
  const result = await acceptWorkflow(paths, workflow, { by: 'operator' });
  return {
    project,
    version: result.version,
    changed: result.version !== result.previousVersion,
    digests: result.digests,
    changedMcps: result.changedMcps,
    changedAgents: result.changedAgents,
  };
}
