/** The operator's load (`scienceevolve workflow load`): validate, store sources, accept a new version if anything changed. */
import { readFile, stat } from 'node:fs/promises';
import { SdkError } from '../errors.js';
import { packFolder } from '../workflow/packFolder.js';
import { invalidWorkflowError, validateWorkflowText } from '../workflow/validate.js';
import type { Workflow } from '../workflow/workflowSchema.js';
import { resolveProjectId } from './projectId.js';
import { type ProjectPaths, openProject } from './projectStore.js';
import { acceptWorkflow } from './workflowVersions.js';

/** Options of {@link loadWorkflow}. */
export interface LoadWorkflowOptions {
  dataDir: string;
  /** The project id; derived from `workspace` when absent. */
  project?: string | undefined;
  workspace?: string | undefined;
  /** A path to a `workflow.json` or a workflow folder, or the document itself. */
  workflow: string | Workflow | Record<string, unknown>;
}

/** The result of a load: the shape of `workflow load --json`. */
export interface LoadWorkflowResult {
  project: string;
  version: number;
  /** True when this load created a new version. */
  changed: boolean;
  digests: Record<string, string>;
  changedMcps: string[];
  changedAgents: string[];
}

/**
 * Reads and validates a `workflow.json` file, or packs a workflow folder (`workflow.yaml` and `services/`)
 * when `path` is a directory; throws `invalid_workflow` (every issue in `data.errors`), `io_error`, or one
 * of the folder errors of `packFolder`.
 */
export async function readWorkflowFile(path: string): Promise<Workflow> {
  if ((await stat(path).catch(() => undefined))?.isDirectory()) return (await packFolder(path)).workflow;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SdkError('io_error', `could not read the workflow file ${path}: ${(error as Error).message}`, {
      remedy: 'check the path',
      data: { path },
      cause: error,
    });
  }
  const result = validateWorkflowText(text);
  if (!result.ok) throw invalidWorkflowError(result.errors, path);
  return result.workflow;
}

/** Validates, stores every definition's source and accepts the workflow as the operator. */
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
