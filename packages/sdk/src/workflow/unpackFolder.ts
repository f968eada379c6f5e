/**
 * `scienceevolve workflow unpack`: a `workflow.json` becomes a workflow folder (see `folderLayout.ts`),
 * the reverse of `packFolder`. Packing what `unpack` wrote gives the canonical `workflow.json` of the
 * document it was given (`canonicalWorkflowJson`); unpacking what `pack` wrote from a folder in canonical
 * form (as `unpack` and `init` write them) gives the same files, byte for byte.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isSdkError, SdkError } from '../errors.js';
import { makeDirs } from '../fileModes.js';
import { jsonFileText, LAUNCH_FILE, SERVICES_DIR, WORKFLOW_YAML, workflowYamlText } from './folderLayout.js';
import { invalidWorkflowError, validateWorkflow, validateWorkflowText } from './validate.js';
import type { Workflow } from './workflowTypes.js';

/** The result of {@link unpackWorkflow}: what was written. @public */
export interface UnpackedFolder {
  /** The folder written. */
  dir: string;
  /** Every file written, relative to `dir`, in the order written. */
  files: string[];
}

/**
 * Writes the workflow `workflow` (the text of a `workflow.json`, or its parsed document) as a folder at
 * `dir`, which must be absent or empty. The document is validated first (`invalid_workflow`, every issue
 * in `data.errors`; `invalid_json`); it is written as given, without defaults filled. Throws
 * `folder_not_empty` when `dir` holds anything, `io_error` when a file cannot be written.
 * @public
 */
export async function unpackWorkflow(
  workflow: string | Workflow | Record<string, unknown>,
  dir: string,
): Promise<UnpackedFolder> {
  const result = typeof workflow === 'string' ? validateWorkflowText(workflow) : validateWorkflow(workflow);
  if (!result.ok) throw invalidWorkflowError(result.errors);
  const document = (typeof workflow === 'string' ? JSON.parse(workflow) : workflow) as Record<string, unknown>;
  const out = new Map<string, string>();
  out.set(
    WORKFLOW_YAML,
    workflowYamlText(
      Object.fromEntries(
        Object.keys(document)
          .filter((k) => k !== 'mcpDefinitions')
          .map((k) => [k, document[k]]),
      ),
    ),
  );
  const defs = (document.mcpDefinitions ?? {}) as Record<string, Record<string, unknown>>;
  const dirs = Object.hasOwn(document, 'mcpDefinitions') ? [SERVICES_DIR] : [];
  for (const name of Object.keys(defs).sort()) {
    const def = defs[name]!;
    const files = def.files as Record<string, string>;
    const launch = Object.fromEntries(
      Object.keys(def)
        .filter((k) => k !== 'files')
        .map((k) => [k, def[k]]),
    );
    // A root file named like the launch file is written inside it: the folder has room for one of them.
    if (Object.hasOwn(files, LAUNCH_FILE)) launch.files = { [LAUNCH_FILE]: files[LAUNCH_FILE] };
    dirs.push(`${SERVICES_DIR}/${name}`);
    out.set(`${SERVICES_DIR}/${name}/${LAUNCH_FILE}`, jsonFileText(launch));
    for (const path of Object.keys(files).sort()) {
      if (path !== LAUNCH_FILE) out.set(`${SERVICES_DIR}/${name}/${path}`, files[path]!);
    }
  }
  await prepareEmpty(dir);
  try {
    for (const d of dirs) makeDirs(join(dir, d));
    for (const [path, text] of out) {
      makeDirs(dirname(join(dir, path)));
      // `wx`: never write through something that appeared meanwhile.
      await writeFile(join(dir, path), text, { flag: 'wx' });
    }
  } catch (error) {
    throw new SdkError('io_error', `could not write the workflow folder ${dir}: ${(error as Error).message}`, {
      remedy: 'check that the folder is writable and that nothing else writes into it',
      data: { dir },
      cause: error,
    });
  }
  return { dir, files: [...out.keys()] };
}

/**
 * Makes sure `dir` exists and is empty: creates it when absent; throws `folder_not_empty` when it holds
 * anything, `io_error` when it cannot be made or read.
 */
export async function prepareEmpty(dir: string): Promise<void> {
  try {
    makeDirs(dir);
    const entries = await readdir(dir);
    if (entries.length > 0) {
      throw new SdkError('folder_not_empty', `${dir} is not empty (it holds ${entries.length} entries)`, {
        remedy: 'give a new or empty folder: nothing is ever written over existing files',
        data: { dir },
      });
    }
  } catch (error) {
    if (isSdkError(error)) throw error;
    throw new SdkError('io_error', `could not prepare the folder ${dir}: ${(error as Error).message}`, {
      remedy: 'give a path where a folder can be created',
      data: { dir },
      cause: error,
    });
  }
}
