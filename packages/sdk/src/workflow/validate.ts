/**
 * Validation of a workflow document: every violation of a document in one report, each with a stable
 * code, its JSON path and a message that names the fix. Validation never executes anything and never
 * throws past this API.
 */
import type { z } from 'zod';
import { type ErrorCode, SdkError } from '../errors.js';
import { fileDirectoryConflicts, unsafePathReason } from './filePaths.js';
import { scanDocument } from './documentScan.js';
import { toJsonPath } from './jsonPath.js';
import { FIXED_CATALOG_NAMES, LIMITS, RESERVED_ENV_NAMES } from './limits.js';
import { toolFilterShapeProblem, type Workflow, WorkflowSchema } from './workflowSchema.js';
import { isPlainObject } from '../plainObject.js';

/** One violation. @internal */
export interface ValidationIssue {
  /** A stable code (see `errors.ts`). */
  code: ErrorCode;
  /** Where: a JSON path such as `$.agents.main.mcpServers[0].project`. */
  path: string;
  /** What is wrong and how to fix it. */
  message: string;
}

/** The result of validating a document: the workflow with defaults filled, or every issue. @internal */
export type ValidationResult = { ok: true; workflow: Workflow; errors: [] } | { ok: false; errors: ValidationIssue[] };

/** Parses and validates the text of a `workflow.json`. @internal */
export function validateWorkflowText(text: string): ValidationResult {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return fail([{ code: 'invalid_json', path: '$', message: `not valid JSON (${detail}); fix the syntax` }]);
  }
  return validateWorkflow(document);
}

/** Validates a parsed workflow document. @internal */
export function validateWorkflow(document: unknown): ValidationResult {
  try {
    const issues: ValidationIssue[] = [];
    if (!isPlainObject(document)) {
      return fail([
        {
          code: 'invalid_workflow',
          path: '$',
          message: `a workflow is a JSON object with "agents" (and optionally "mcpDefinitions", "orchestration"), not ${describe(document)}`,
        },
      ]);
    }
    // Before anything recurses into the document: its depth, lone surrogates and `__proto__` keys.
    const scanned = scanDocument(document);
    if (scanned.some((f) => f.code === 'too_deep')) return fail(scanned);
    issues.push(...scanned);
    const references = checkDocument(document, issues);
    // reportInput: an issue of the wrong type carries the value, so the message can say what was given.
    // jitless: zod would otherwise compile a parser (`new Function`) for each object schema on its first
    // parse, which pays back only over many parses; a document is validated once (~3 ms of CPU saved per
    // `scienceevolve validate`, docs/decisions/cli-light-bundle.md). The result is the same either way.
    const parsed = WorkflowSchema.safeParse(document, { reportInput: true, jitless: true });
    if (!parsed.success) {
      // A reference's own issue says it all; the schema would add "unknown key" and "files: required".
      const inReference = (issue: z.core.$ZodIssue) =>
        issue.code !== 'invalid_key' &&
        issue.path[0] === 'mcpDefinitions' &&
        typeof issue.path[1] === 'string' &&
        references.has(issue.path[1]);
      issues.push(...parsed.error.issues.filter((i) => !inReference(i)).flatMap(fromZodIssue));
    }
    // The sizes count the workflow as it is stored, with defaults filled: measured as written, a document
    // just under a limit would pass here and be refused when its stored form is validated again.
    issues.push(...sizeIssues(parsed.success ? parsed.data : document, parsed.success));
    if (issues.length > 0) return fail(issues);
    if (parsed.success) return { ok: true, workflow: parsed.data, errors: [] };
    return fail(issues);
  } catch (error) {
    // Validation must answer, not throw: a document that trips the validator itself is still reported.
    const detail = error instanceof Error ? error.message : String(error);
    return fail([{ code: 'invalid_workflow', path: '$', message: `the document could not be validated (${detail})` }]);
  }
}

/**
 * Validates and returns the workflow, or throws one `invalid_workflow` SdkError whose `data.errors` lists every issue.
 * @public
 */
export function parseWorkflow(document: unknown): Workflow {
  const result = validateWorkflow(document);
  if (result.ok) return result.workflow;
  throw invalidWorkflowError(result.errors);
}

/** The SdkError that carries a list of validation issues. */
export function invalidWorkflowError(errors: ValidationIssue[], subject = 'the workflow'): SdkError {
  const lines = errors.map((e) => `  ${e.code} at ${e.path}: ${e.message}`).join('\n');
  return new SdkError(
    'invalid_workflow',
    `${subject} has ${errors.length} error${errors.length === 1 ? '' : 's'}:\n${lines}`,
    {
      remedy: 'fix each error at its path, then try again',
      data: { errors },
    },
  );
}

function fail(issues: ValidationIssue[]): ValidationResult {
  const seen = new Set<string>();
  const errors = issues.filter((i) => {
    const key = `${i.code}\0${i.path}\0${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  errors.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { ok: false, errors };
}

/**
 * The rules zod cannot see: sizes, counts of record entries, file paths, entrypoint, references, reserved
 * names. Returns the names of definitions stated as `{ "accepted": … }`, a form only `apply_workflow` resolves.
 */
function checkDocument(doc: Record<string, unknown>, issues: ValidationIssue[]): Set<string> {
  const add = (code: ErrorCode, path: PropertyKey[], message: string) =>
    issues.push({ code, path: toJsonPath(path), message });

  const defs = doc.mcpDefinitions;
  const definitionNames = new Set<string>();
  const references = new Set<string>();
  if (isPlainObject(defs)) {
    const names = Object.keys(defs);
    for (const n of names) definitionNames.add(n);
    if (names.length > LIMITS.definitions) {
      add(
        'limit_exceeded',
        ['mcpDefinitions'],
        `${names.length} project services; at most ${LIMITS.definitions} are allowed: remove some`,
      );
    }
    for (const [name, def] of Object.entries(defs)) {
      if (isPlainObject(def) && Object.hasOwn(def, 'accepted')) {
        references.add(name);
        add(
          'invalid_workflow',
          ['mcpDefinitions', name, 'accepted'],
          'a reference {"accepted": "<digest>"} is valid only in an apply_workflow snapshot, never in a workflow file the operator loads: state the definition in full (`scienceevolve workflow show` prints the accepted one)',
        );
      } else if (isPlainObject(def)) {
        checkDefinition(name, def, add);
      }
    }
  }

  const agents = doc.agents;
  if (isPlainObject(agents)) {
    if (!Object.hasOwn(agents, 'main')) {
      add(
        'invalid_workflow',
        ['agents'],
        'there is no agent named "main": add the Main agent, which takes the requirement',
      );
    }
    for (const [agentName, agent] of Object.entries(agents)) {
      if (!isPlainObject(agent) || !Array.isArray(agent.mcpServers)) continue;
      const seen = new Map<string, number>();
      agent.mcpServers.forEach((entry: unknown, index: number) => {
        if (!isPlainObject(entry)) return;
        const at = ['agents', agentName, 'mcpServers', index];
        if (typeof entry.name === 'string') {
          if (FIXED_CATALOG_NAMES.includes(entry.name)) {
            add(
              'reserved_name',
              [...at, 'name'],
              `"${entry.name}" is the name of a built-in service of the SDK; choose another name`,
            );
          }
          const first = seen.get(entry.name);
          if (first !== undefined) {
            add(
              'duplicate_name',
              [...at, 'name'],
              `"${entry.name}" is already used by mcpServers[${first}] of this agent; give each entry its own name`,
            );
          } else {
            seen.set(entry.name, index);
          }
        }
        if (isPlainObject(entry.tools)) {
          const problem = toolFilterShapeProblem(entry.tools);
          if (problem !== undefined) add('invalid_workflow', [...at, 'tools'], problem);
        }
        if (typeof entry.project === 'string' && !definitionNames.has(entry.project)) {
          add(
            'unknown_reference',
            [...at, 'project'],
            `there is no definition "${entry.project}" in mcpDefinitions; add it there or fix the name`,
          );
        }
      });
    }
  }
  return references;
}

/**
 * The two JSON size limits, in `JSON.stringify` UTF-8 bytes. They count the workflow as it is stored,
 * with defaults filled (`filled`); a document that does not parse is measured as written.
 */
function sizeIssues(doc: Workflow | Record<string, unknown>, filled: boolean): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const how = filled ? 'as JSON with defaults filled' : 'as JSON';
  const size = jsonBytes(doc);
  if (size > LIMITS.workflowJsonBytes) {
    issues.push({
      code: 'limit_exceeded',
      path: '$',
      message: `the workflow is ${size} bytes ${how}; at most ${LIMITS.workflowJsonBytes} (2 MiB) are allowed: move large data out of the workflow`,
    });
  }
  const defs: unknown = doc.mcpDefinitions;
  const defsSize = isPlainObject(defs) ? jsonBytes(defs) : 0;
  if (defsSize > LIMITS.definitionsJsonBytes) {
    issues.push({
      code: 'limit_exceeded',
      path: toJsonPath(['mcpDefinitions']),
      message: `mcpDefinitions is ${defsSize} bytes ${how}; at most ${LIMITS.definitionsJsonBytes} (1 MiB) are allowed: move large data out of the service files`,
    });
  }
  return issues;
}

function checkDefinition(
  name: string,
  def: Record<string, unknown>,
  add: (code: ErrorCode, path: PropertyKey[], message: string) => void,
): void {
  const at = ['mcpDefinitions', name];
  const files = def.files;
  if (isPlainObject(files)) {
    const paths = Object.keys(files);
    if (paths.length > LIMITS.filesPerDefinition) {
      add(
        'limit_exceeded',
        [...at, 'files'],
        `${paths.length} files; a definition may have at most ${LIMITS.filesPerDefinition}`,
      );
    }
    if (paths.length === 0)
      add('invalid_workflow', [...at, 'files'], 'a definition needs at least its entrypoint file');
    for (const path of paths) {
      const reason = unsafePathReason(path);
      if (reason !== undefined) add('unsafe_path', [...at, 'files', path], reason);
    }
    for (const { file, below } of fileDirectoryConflicts(paths)) {
      add(
        'unsafe_path',
        [...at, 'files', file],
        `"${file}" is a file, and "${below}" needs it to be a directory: rename one of them`,
      );
    }
    if (typeof def.entrypoint === 'string' && def.entrypoint !== '') {
      if (!Object.hasOwn(files, def.entrypoint)) {
        add(
          'unknown_reference',
          [...at, 'entrypoint'],
          `"${def.entrypoint}" is not a key of files: add that file or name one of the files`,
        );
      } else if (files[def.entrypoint] === '') {
        add(
          'invalid_workflow',
          [...at, 'entrypoint'],
          `the entrypoint "${def.entrypoint}" is empty: give it the service's code`,
        );
      }
    }
  }
  if (isPlainObject(def.envFrom)) {
    for (const key of Object.keys(def.envFrom)) {
      if (RESERVED_ENV_NAMES.includes(key) || key.startsWith('SCIENCEEVOLVE_')) {
        add(
          'reserved_name',
          [...at, 'envFrom', key],
          `"${key}" is set by the SDK for every service and cannot be mapped; read it as it is, or map another name`,
        );
      }
    }
  }
}

const UNKNOWN_KEY_HINTS: Record<string, string> = {
  $: 'orchestration, agents, mcpDefinitions',
};

function allowedKeysHint(issuePath: readonly PropertyKey[], path: string): string {
  if (Object.hasOwn(UNKNOWN_KEY_HINTS, path)) return ` (allowed: ${UNKNOWN_KEY_HINTS[path]})`;
  if (isToolFilterPath(issuePath, 5)) return ' (allowed: include or exclude)';
  return '';
}

/** True when `path` is `agents.<a>.mcpServers[<i>].tools…` and `length` long. */
function isToolFilterPath(path: readonly PropertyKey[], length: number): boolean {
  return path.length === length && path[0] === 'agents' && path[2] === 'mcpServers' && path[4] === 'tools';
}

/** The fix for a value of the wrong type inside an entry's `tools` filter. */
function toolFilterHint(path: readonly PropertyKey[]): string {
  if (isToolFilterPath(path, 5)) return ': write {"include": ["name", "prefix_*"]} or {"exclude": [...]}';
  if (isToolFilterPath(path, 6)) return ': write a list of tool names or globs, e.g. ["search", "fetch_*"]';
  if (isToolFilterPath(path, 7)) {
    return ': write each tool name or pattern as a string, an exact tool name such as "search" or a glob such as "search_*"';
  }
  return '';
}

function fromZodIssue(issue: z.core.$ZodIssue): ValidationIssue[] {
  const path = toJsonPath(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        code: 'invalid_workflow',
        path: toJsonPath([...issue.path, key]),
        message: `unknown key "${key}": remove it or fix its spelling${allowedKeysHint(issue.path, path)}`,
      }));
    case 'invalid_key': {
      const inner = issue.issues[0];
      return [{ code: 'invalid_workflow', path, message: `invalid name: ${inner?.message ?? issue.message}` }];
    }
    case 'invalid_format':
      if (issue.path.at(-1) === 'command') return [{ code: 'invalid_command', path, message: issue.message }];
      return [{ code: 'invalid_workflow', path, message: issue.message }];
    case 'too_small':
      if (issue.path.at(-1) === 'command') return [{ code: 'invalid_command', path, message: issue.message }];
      return [{ code: 'invalid_workflow', path, message: issue.message }];
    case 'too_big':
      return [{ code: 'limit_exceeded', path, message: issue.message }];
    case 'custom': {
      const code = (issue.params as { code?: ErrorCode } | undefined)?.code ?? 'invalid_workflow';
      return [{ code, path, message: issue.message }];
    }
    case 'invalid_type':
      if (issue.input === undefined) {
        return [{ code: 'invalid_workflow', path, message: `required: add it (expected ${issue.expected})` }];
      }
      return [
        {
          code: 'invalid_workflow',
          path,
          message: `expected ${issue.expected}, not ${describe(issue.input)}${toolFilterHint(issue.path)}`,
        },
      ];
    case 'invalid_union':
      if ('discriminator' in issue && issue.discriminator !== undefined) {
        return [
          {
            code: 'invalid_workflow',
            path,
            message: 'unknown "type": use one of "scripted", "openai", "anthropic", "command"',
          },
        ];
      }
      return [{ code: 'invalid_workflow', path, message: issue.message }];
    case 'invalid_value':
      return [
        {
          code: 'invalid_workflow',
          path,
          message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`,
        },
      ];
    default:
      return [{ code: 'invalid_workflow', path, message: issue.message }];
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return typeof value;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}
