/**
 * Every document that crosses a boundary, by name, and what is generated from its schema: one JSON Schema
 * per document (`docs/schemas/<name>.schema.json`) and the `--json` table of docs/cli.md, written by
 * `node scripts/generate-schemas.mjs` after a build; test/sdk/schemas/generated.test.ts fails when a
 * generated file is stale. Not loaded by the SDK at run time.
 */
import * as z from 'zod';
import {
  CheckpointFileSchema,
  CheckpointLogHeaderSchema,
  CheckpointLogRecordSchema,
  ModelLoopCheckpointSchema,
  ScriptCheckpointSchema,
} from './checkpoints.js';
import { CLI_DOCUMENTS } from './cliDocuments.js';
import { EraRecordSchema } from './eraCache.js';
import { RunEventSchema } from './runEvents.js';
import { RunRecordSchema } from './runRecord.js';
import { AcceptedPointerSchema, FormatFileSchema, LockHolderSchema, WorkflowVersionRecordSchema } from './store.js';

/** One document: its schema and what it is. */
export interface DocumentEntry {
  schema: z.ZodType;
  /** What the document is, for the JSON Schema's title. */
  title: string;
}

/** The documents the SDK writes and reads back (data dir files, journal lines), by file name stem. */
export const STORED_DOCUMENTS: Readonly<Record<string, DocumentEntry>> = {
  'run-record': { schema: RunRecordSchema, title: 'runs/<runId>/run.json: a run’s durable state' },
  'run-event': { schema: RunEventSchema, title: 'one line of runs/<runId>/events.jsonl: a public run event' },
  'checkpoint-file': {
    schema: CheckpointFileSchema,
    title: 'runs/<runId>/checkpoints/<invocationId>.json: an invocation’s checkpoint',
  },
  'checkpoint-log-header': {
    schema: CheckpointLogHeaderSchema,
    title: 'the first line of runs/<runId>/checkpoints/<invocationId>.log: the checkpoint file the log continues',
  },
  'checkpoint-log-record': {
    schema: CheckpointLogRecordSchema,
    title: 'a record of runs/<runId>/checkpoints/<invocationId>.log: the fields before the state’s text',
  },
  'model-loop-checkpoint': {
    schema: ModelLoopCheckpointSchema,
    title: 'the state of a model-loop harness’s checkpoint',
  },
  'script-checkpoint': { schema: ScriptCheckpointSchema, title: 'the state of the scripted harness’s checkpoint' },
  'accepted-pointer': { schema: AcceptedPointerSchema, title: 'workflow/accepted.json: the version in force' },
  'workflow-version': {
    schema: WorkflowVersionRecordSchema,
    title: 'workflow/versions/<n>.json: one accepted version',
  },
  'lock-holder': { schema: LockHolderSchema, title: 'workflow/.lock: who holds the store’s write lock' },
  'format-file': { schema: FormatFileSchema, title: '<dataDir>/format.json: the data dir’s layout version' },
  'era-record': {
    schema: EraRecordSchema,
    title: 'cache/eras/<digest>.json: the protocol era remembered for a definition digest',
  },
};

/** The JSON Schema file stem of a CLI document: `cli-` and the command, e.g. `cli-services-serve-http`. */
export function cliDocumentFile(command: string): string {
  return `cli-${command.replace(/--/g, '').replace(/[^a-z0-9]+/g, '-')}`;
}

/** Every document, stored and CLI, by its JSON Schema file stem. */
export function allDocuments(): Map<string, DocumentEntry> {
  const all = new Map<string, DocumentEntry>(Object.entries(STORED_DOCUMENTS));
  for (const [command, schema] of Object.entries(CLI_DOCUMENTS)) {
    all.set(cliDocumentFile(command), { schema, title: `scienceevolve ${command} --json` });
  }
  return all;
}

/** The `$id` base of the generated schemas. */
export const SCHEMA_ID_BASE = 'https://scienceevolve.dev/schema/';

/** The JSON Schema (draft 7) of one document, as a plain object. */
export function documentJsonSchema(stem: string, entry: DocumentEntry): Record<string, unknown> {
  const generated = z.toJSONSchema(entry.schema, {
    target: 'draft-7',
    io: 'output',
    override: (ctx) => {
      // The table's key name of a record is for the docs only.
      delete (ctx.jsonSchema as Record<string, unknown>).keyName;
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return { $schema, $id: `${SCHEMA_ID_BASE}${stem}.schema.json`, title: entry.title, ...rest };
}

/** Every generated JSON Schema file: `<stem>.schema.json` → its text (two-space JSON, final newline). */
export function jsonSchemaFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const [stem, entry] of allDocuments()) {
    files.set(`${stem}.schema.json`, `${JSON.stringify(documentJsonSchema(stem, entry), null, 2)}\n`);
  }
  return files;
}

type Def = { type: string } & Record<string, unknown>;

function defOf(schema: z.ZodType): Def {
  return schema._zod.def as unknown as Def;
}

/**
 * A schema in the notation of docs/cli.md: `{ key: T, key?: T }` an object with exactly these keys, `…`
 * further keys allowed, `{ [name]: T }` keys that are names, `T[]`, `A | B`, `"x"`, `integer`, `unknown`.
 */
export function notation(schema: z.ZodType): string {
  const def = defOf(schema);
  switch (def.type) {
    case 'string':
      return 'string';
    case 'number':
      return (schema as z.ZodNumber).isInt ? 'integer' : 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'unknown':
    case 'any':
      return 'unknown';
    case 'literal':
      return (def.values as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
    case 'enum':
      return Object.values(def.entries as Record<string, string>)
        .map((v) => JSON.stringify(v))
        .join(' | ');
    case 'nullable':
      return `${notation(def.innerType as z.ZodType)} | null`;
    case 'optional':
      return notation(def.innerType as z.ZodType);
    case 'array': {
      const item = notation(def.element as z.ZodType);
      return item.includes(' | ') && !item.startsWith('{') ? `(${item})[]` : `${item}[]`;
    }
    case 'union':
      return (def.options as z.ZodType[]).map(notation).join(' | ');
    case 'record': {
      const keyName = (schema.meta() as { keyName?: string } | undefined)?.keyName ?? 'name';
      return `{ [${keyName}]: ${notation(def.valueType as z.ZodType)} }`;
    }
    case 'object': {
      const shape = def.shape as Record<string, z.ZodType>;
      const fields = Object.entries(shape).map(
        ([key, value]) => `${key}${defOf(value).type === 'optional' ? '?' : ''}: ${notation(value)}`,
      );
      const catchall = def.catchall as z.ZodType | undefined;
      if (catchall !== undefined && defOf(catchall).type !== 'never') fields.push('…');
      return `{ ${fields.join(', ')} }`;
    }
    default:
      throw new Error(`notation: no notation for a zod ${def.type}`);
  }
}

/** `command: notation`, wrapped at `width` after a comma, continuation lines indented by four spaces. */
export function tableLine(command: string, text: string, width = 116): string {
  const lines: string[] = [];
  let line = `${command}:`;
  for (const part of text.split(/(?<=,) /)) {
    if (line.length + 1 + part.length > width && line.trim() !== '') {
      lines.push(line);
      line = `    ${part}`;
    } else {
      line = `${line} ${part}`;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

/** The `--json` table of docs/cli.md: one row per command, in the order of `CLI_DOCUMENTS`. */
export function cliShapeTable(): string {
  return Object.entries(CLI_DOCUMENTS)
    .map(([command, schema]) => tableLine(command, notation(schema)))
    .join('\n');
}

/** The markers of the generated table in docs/cli.md. */
export const SHAPES_BEGIN = '<!-- json-shapes: generated from packages/sdk/src/schemas/cliDocuments.ts -->';
export const SHAPES_END = '<!-- /json-shapes -->';

/** docs/cli.md with its `--json` table block rewritten from the schemas; throws when the markers are missing. */
export function updateShapeTable(page: string): string {
  const start = page.indexOf(SHAPES_BEGIN);
  const end = page.indexOf(SHAPES_END);
  if (start < 0 || end < start) throw new Error(`docs/cli.md has no ${SHAPES_BEGIN} … ${SHAPES_END} block`);
  const block = `${SHAPES_BEGIN}\n\`\`\`text\n${cliShapeTable()}\n\`\`\`\n`;
  return page.slice(0, start) + block + page.slice(end);
}
