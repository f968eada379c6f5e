/**
 * Every `--json` document of the `scienceevolve` CLI (SPEC §13), one schema each: the contract of what a
 * command prints. The `--json` table of docs/cli.md and `docs/schemas/cli-*.schema.json` are generated
 * from these (`node scripts/generate-schemas.mjs`), and test/cli/jsonShapes.test.ts runs every command for
 * real and parses what it printed with them. Objects are strict: a key added, removed or retyped is a
 * deliberate change here (and a CHANGELOG entry). The CLI prints them; nothing parses them on that path.
 */
import { z } from 'zod';
import { ErrorRecordSchema, UsageTotalsSchema } from './records.js';
import {
  AcceptedBySchema,
  CollectionSchema,
  HarnessFormatSchema,
  InitHarnessSchema,
  InvocationStateSchema,
  RunEndSchema,
  RunStatusSchema,
  SandboxReasonSchema,
} from './states.js';

/** An object whose keys are names (definitions, data keys): `{ [<keyName>]: T }` in the table. */
function named<T extends z.ZodType>(keyName: string, value: T) {
  return z.record(z.string(), value).meta({ keyName });
}

const int = z.number().int();
const strings = z.array(z.string());

/** `validate --json`. */
export const ValidateDocumentSchema = z.strictObject({
  ok: z.boolean(),
  errors: z.array(z.strictObject({ code: z.string(), path: z.string(), message: z.string() })),
});

/** `workflow load --json`. */
export const WorkflowLoadDocumentSchema = z.strictObject({
  project: z.string(),
  version: int,
  digests: named('definition', z.string()),
  changedMcps: strings,
  changedAgents: strings,
});

/** `workflow show --json`. */
export const WorkflowShowDocumentSchema = z.strictObject({
  project: z.string(),
  version: int,
  acceptedAt: z.string(),
  by: AcceptedBySchema,
  digests: named('definition', z.string()),
  workflow: z.looseObject({}),
});

/** `workflow history --json`. */
export const WorkflowHistoryDocumentSchema = z.strictObject({
  project: z.string(),
  versions: z.array(
    z.strictObject({
      version: int,
      acceptedAt: z.string(),
      by: AcceptedBySchema,
      changedMcps: strings,
      changedAgents: strings,
    }),
  ),
});

/** `workflow diff A B --json`. */
export const WorkflowDiffDocumentSchema = z.strictObject({
  project: z.string(),
  from: int,
  to: int,
  changedMcps: strings,
  changedAgents: strings,
  orchestrationChanged: z.boolean(),
  digests: named('definition', z.strictObject({ from: z.string().nullable(), to: z.string().nullable() })),
});

/** `workflow verify --json`. */
export const WorkflowVerifyDocumentSchema = z.strictObject({
  dataDir: z.string(),
  ok: z.boolean(),
  projects: z.array(
    z.strictObject({
      project: z.string(),
      ok: z.boolean(),
      acceptedVersion: int.nullable(),
      versions: int,
      sources: int,
      problems: z.array(z.strictObject({ file: z.string(), code: z.string(), message: z.string() })),
      notes: strings,
    }),
  ),
});

/** `migrate --json`. */
export const MigrateDocumentSchema = z.strictObject({ from: int.nullable(), to: int });

/** `services probe --json`. */
export const ServicesProbeDocumentSchema = z.strictObject({
  project: z.string(),
  invocation: z.string(),
  runtimePath: z.string(),
  collection: CollectionSchema,
  services: z.array(
    z.strictObject({
      name: z.string(),
      definition: z.string().nullable(),
      digest: z.string().nullable(),
      url: z.string().optional(),
      pid: int.nullable(),
      pgid: int.nullable(),
      state: z.enum(['ready', 'failed']),
      tools: strings,
      resources: strings,
      resourceTemplates: strings,
      prompts: strings,
      missingLists: strings,
      sandbox: z
        .strictObject({
          sandboxed: z.boolean(),
          reason: SandboxReasonSchema,
          network: z.boolean(),
          detail: z.string().optional(),
        })
        .nullable(),
      error: z.strictObject({ code: z.string(), message: z.string(), log: z.string().nullable() }).nullable(),
    }),
  ),
});

/** `services serve --http --json`: printed once the face is listening. */
export const ServicesServeHttpDocumentSchema = z.strictObject({
  project: z.string(),
  invocation: z.string(),
  url: z.string(),
  tokenFile: z.string(),
});

/** `gateway --json`: printed once the endpoint was checked. */
export const GatewayDocumentSchema = z.strictObject({ url: z.string(), pid: int, pgid: int, tools: strings });

/** `harness-config --json`. */
export const HarnessConfigDocumentSchema = z.strictObject({
  format: HarnessFormatSchema,
  name: z.string(),
  face: z.enum(['stdio', 'http']),
  text: z.string(),
});

/** `run --json`. */
export const RunDocumentSchema = z.strictObject({
  run: z.string(),
  status: RunEndSchema,
  output: z.string().nullable(),
  /** The run's events (see docs/schemas/run-event.schema.json for each type). */
  events: z.array(z.looseObject({ type: z.string(), time: z.string(), run: z.string() })),
});

/** `worker --json`: how it stopped. */
export const WorkerDocumentSchema = z.strictObject({ worker: z.string(), stopped: z.enum(['drained', 'forced']) });

/** `resume --json`. */
export const ResumeDocumentSchema = z.strictObject({
  runs: z.array(
    z.strictObject({
      run: z.string(),
      status: RunEndSchema,
      output: z.string().nullable(),
      error: ErrorRecordSchema.strict().nullable(),
    }),
  ),
});

/** `status --json`. */
export const StatusDocumentSchema = z.strictObject({
  dataDir: z.string(),
  projects: z.array(
    z.strictObject({
      project: z.string(),
      acceptedVersion: int.nullable(),
      acceptedError: z.strictObject({ code: z.string(), message: z.string(), path: z.string().nullable() }).nullable(),
      runs: z.array(
        z.strictObject({
          run: z.string(),
          status: RunStatusSchema,
          startedAt: z.string(),
          finishedAt: z.string().nullable(),
          hostPid: int,
          resumes: int,
          output: z.string().nullable(),
          usage: UsageTotalsSchema.strict(),
          invocations: z.array(
            z.strictObject({
              id: z.string(),
              agent: z.string(),
              parent: z.string().nullable(),
              state: InvocationStateSchema,
              attempts: int,
              restarted: z.boolean(),
              toolCalls: int,
              startQueuedMs: int,
              usage: UsageTotalsSchema.strict(),
            }),
          ),
          prestarted: z.array(
            z.strictObject({
              invocation: z.string(),
              agent: z.string(),
              since: z.string(),
              services: strings,
              pids: z.array(int),
              idleDeadline: z.string().nullable(),
            }),
          ),
        }),
      ),
      corruptRuns: z.array(z.strictObject({ run: z.string(), path: z.string(), message: z.string() })),
      liveServices: z.array(
        z.strictObject({ pid: int, pgid: int, invocation: z.string(), hostPid: int, hostAlive: z.boolean() }),
      ),
    }),
  ),
});

/** `workflow pack <dir> --out F --json`. */
export const WorkflowPackDocumentSchema = z.strictObject({
  out: z.string(),
  services: strings,
  files: strings,
  bytes: int,
});

/** `workflow unpack --json`. */
export const WorkflowUnpackDocumentSchema = z.strictObject({ dir: z.string(), files: strings });

/** `schema --out F --json`. */
export const SchemaOutDocumentSchema = z.strictObject({ out: z.string(), bytes: int });

/** `init --json`. */
export const InitDocumentSchema = z.strictObject({
  dir: z.string(),
  harness: InitHarnessSchema,
  files: strings,
  env: strings,
});

/** `ui --json`. */
export const UiDocumentSchema = z.strictObject({ url: z.string(), port: int, dataDir: z.string() });

/** `--version --json`. */
export const VersionDocumentSchema = z.strictObject({ version: z.string() });

/** The document of any command that fails with `--json` (its message also goes to stderr). */
export const ErrorDocumentSchema = z.strictObject({ ok: z.literal(false), error: ErrorRecordSchema.strict() });

/**
 * Every `--json` document by the command that prints it, as docs/cli.md's table lists them (in this order).
 * `workflow pack` and `schema` without `--out` print the workflow and the schema themselves; `services serve`
 * without `--http` and `bridge http-to-stdio` print no document (their stdout is the MCP protocol).
 */
export const CLI_DOCUMENTS = {
  validate: ValidateDocumentSchema,
  'workflow load': WorkflowLoadDocumentSchema,
  'workflow show': WorkflowShowDocumentSchema,
  'workflow history': WorkflowHistoryDocumentSchema,
  'workflow diff': WorkflowDiffDocumentSchema,
  'workflow verify': WorkflowVerifyDocumentSchema,
  migrate: MigrateDocumentSchema,
  'services probe': ServicesProbeDocumentSchema,
  'services serve --http': ServicesServeHttpDocumentSchema,
  gateway: GatewayDocumentSchema,
  'harness-config': HarnessConfigDocumentSchema,
  run: RunDocumentSchema,
  worker: WorkerDocumentSchema,
  resume: ResumeDocumentSchema,
  status: StatusDocumentSchema,
  'workflow pack --out': WorkflowPackDocumentSchema,
  'workflow unpack': WorkflowUnpackDocumentSchema,
  'schema --out': SchemaOutDocumentSchema,
  init: InitDocumentSchema,
  ui: UiDocumentSchema,
  version: VersionDocumentSchema,
  error: ErrorDocumentSchema,
} as const;

/** A command as the `--json` table names it. */
export type CliDocumentName = keyof typeof CLI_DOCUMENTS;
