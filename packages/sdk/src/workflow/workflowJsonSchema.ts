/**
 * The JSON Schema of `workflow.json` for editors, generated from {@link WorkflowSchema} with zod's own
 * conversion, so it follows the zod schema. It describes a document as written (defaults may be left out).
 * What it cannot say (zod refinements, and the cross-field rules of `validate.ts`) is listed in
 * docs/workflow-json.md; `scienceevolve validate` checks everything.
 */
import * as z from 'zod';
import { WorkflowSchema } from './workflowSchema.js';

/** The `$id` of the schema. @internal */
export const WORKFLOW_JSON_SCHEMA_ID = 'https://scienceevolve.dev/schema/workflow.schema.json';

/**
 * The JSON Schema (draft 7) of `workflow.json`, as a plain object. The package ships the same
 * document as `@scienceevolve/sdk/workflow.schema.json`; `scienceevolve schema` prints it.
 * @internal
 */
export function workflowJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(WorkflowSchema, {
    io: 'input',
    // Draft 7: what yaml-language-server and most editors support in full.
    target: 'draft-7',
    override: (ctx) => {
      // zod renders z.url({ protocol }) as format "uri" alone: say the scheme too, so "ftp://…" is refused.
      const def = ctx.zodSchema._zod.def as { format?: unknown; protocol?: unknown };
      if (def.format === 'url' && def.protocol instanceof RegExp) {
        const pattern = schemePattern(def.protocol);
        if (pattern !== undefined) ctx.jsonSchema.pattern = pattern;
      }
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return {
    $schema,
    $id: WORKFLOW_JSON_SCHEMA_ID,
    title: 'ScienceEvolve workflow.json',
    description:
      "Agents, their harnesses and MCP services, and orchestration settings. Generated from the SDK's zod schema; `scienceevolve validate` checks the rules a JSON Schema cannot say.",
    ...rest,
  };
}

/** {@link workflowJsonSchema} as the text of `workflow.schema.json`: two-space JSON and a final newline. @internal */
export function workflowJsonSchemaText(): string {
  return `${JSON.stringify(workflowJsonSchema(), null, 2)}\n`;
}

/**
 * A JSON Schema pattern for the start of a URL whose scheme matches `protocol` (a simple anchored regex of
 * letters, `?`, `|` and groups, such as `/^https?$/`), case-insensitive as URL schemes are; undefined for
 * any other regex.
 */
function schemePattern(protocol: RegExp): string | undefined {
  const match = /^\^([a-z?|()+]+)\$$/.exec(protocol.source);
  if (match === null || protocol.flags !== '') return undefined;
  const caseless = match[1]!.replace(/[a-z]/g, (c) => `[${c.toUpperCase()}${c}]`);
  return `^(?:${caseless})://`;
}
