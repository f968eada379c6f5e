/**
 * The workflow folder layout (`scienceevolve workflow pack|unpack|init`): the names of its files, the one
 * canonical key order of a packed `workflow.json`, and the canonical text of each file `unpack` writes.
 *
 * ```
 * <dir>/workflow.yaml            agents, orchestration, $schema (or workflow.base.json, never both)
 * <dir>/services/<name>/service.json   the launch settings: entrypoint, command, args, envFrom, …
 * <dir>/services/<name>/**       every other file is a file of the service, path relative to the folder
 * ```
 */
import { stringify } from 'yaml';
import { isPlainObject } from '../plainObject.js';

/** The base file in YAML: the workflow without `mcpDefinitions`. @internal */
export const WORKFLOW_YAML = 'workflow.yaml';
/** The base file in JSON, the alternative to {@link WORKFLOW_YAML}. @internal */
export const WORKFLOW_BASE_JSON = 'workflow.base.json';
/** The folder that holds one folder per definition. @internal */
export const SERVICES_DIR = 'services';
/**
 * The launch file of a service folder: every key of the definition but `files`. It is not a file of the
 * service; a service that needs a root file of this very name writes it inline in the launch file, as
 * `"files": { "service.json": "…" }` (the only key `files` may have there).
 * @internal
 */
export const LAUNCH_FILE = 'service.json';

/** One problem of a workflow folder, located by the folder's own file path. @internal */
export interface FolderIssue {
  /** A stable error code (see `errors.ts`). */
  code: string;
  /** The file or folder, relative to the workflow folder, e.g. `services/tools/lib/x.js`. */
  path: string;
  /** Where inside that file, when it is a YAML or JSON file, e.g. `agents.main.harness`; absent otherwise. */
  at?: string;
  /** What is wrong and how to fix it. */
  message: string;
}

/** A folder issue as one line: `services/tools/lib/x.js: message` or `workflow.yaml at agents.main: message`. */
export function folderIssueLine(issue: FolderIssue): string {
  return `${issue.path}${issue.at === undefined ? '' : ` at ${issue.at}`}: ${issue.message}`;
}

/** Own entries of `object`, with `__proto__` and the like kept as data. */
function entries(object: Record<string, unknown>): Array<[string, unknown]> {
  return Object.keys(object).map((key) => [key, object[key]]);
}

function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The canonical form of a workflow document: its keys as written, except that `mcpDefinitions` comes
 * last with the definitions sorted by name, and in each definition `files` comes last with the paths
 * sorted (UTF-16 code-unit order). Anything that is not an object is returned as it is.
 */
export function canonicalWorkflow(document: unknown): unknown {
  if (!isPlainObject(document)) return document;
  const top = entries(document).filter(([key]) => key !== 'mcpDefinitions');
  if (Object.hasOwn(document, 'mcpDefinitions')) {
    const defs = document.mcpDefinitions;
    top.push(['mcpDefinitions', isPlainObject(defs) ? canonicalDefinitions(defs) : defs]);
  }
  return Object.fromEntries(top);
}

function canonicalDefinitions(defs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    entries(defs)
      .sort(([a], [b]) => byCodeUnits(a, b))
      .map(([name, def]) => [name, isPlainObject(def) ? canonicalDefinition(def) : def]),
  );
}

function canonicalDefinition(def: Record<string, unknown>): Record<string, unknown> {
  const out = entries(def).filter(([key]) => key !== 'files');
  if (Object.hasOwn(def, 'files')) {
    const files = def.files;
    out.push([
      'files',
      isPlainObject(files) ? Object.fromEntries(entries(files).sort(([a], [b]) => byCodeUnits(a, b))) : files,
    ]);
  }
  return Object.fromEntries(out);
}

/**
 * The canonical `workflow.json` text of a document: {@link canonicalWorkflow}, two-space JSON, a final newline.
 * @internal
 */
export function canonicalWorkflowJson(document: unknown): string {
  return `${JSON.stringify(canonicalWorkflow(document), null, 2)}\n`;
}

/**
 * The canonical text of `workflow.yaml` for a base document (no folding of long lines). With a string
 * `$schema`, a first line `# yaml-language-server: $schema=<it>` names the schema to YAML editors too
 * (yaml-language-server reads that comment); `pack` ignores comments.
 */
export function workflowYamlText(base: Record<string, unknown>): string {
  const text = stringify(base, { lineWidth: 0, minContentWidth: 0 });
  const schema = base.$schema;
  if (typeof schema !== 'string' || /[\r\n\u2028\u2029\u0085]/.test(schema)) return text;
  return `# yaml-language-server: $schema=${schema}\n${text}`;
}

/** The canonical text of a launch file or `workflow.base.json`: two-space JSON, a final newline. */
export function jsonFileText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
