/**
 * Every `--json` document of the `scienceevolve` CLI (SPEC §13), one schema each: the contract of what a
 * command prints. The `--json` table of docs/cli.md and `docs/schemas/cli-*.schema.json` are generated
 * from these (`node scripts/generate-schemas.mjs`), and test/cli/jsonShapes.test.ts runs every command for
 * real and parses what it printed with them. Objects are strict: a key added, removed or retyped is a
 * deliberate change here (and a CHANGELOG entry). The CLI prints them; nothing parses them on that path.
 */
import * as z from 'zod';
import { ErrorRecordSchema, UsageTotalsSchema } from './records.js';
import { CorruptRunSchema } from './runRecord.js';
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

/** One problem `workflow verify` found: the file (or directory) and what did not match. */
export const VerifyProblemSchema = z.strictObject({
  /** The absolute path of the file or directory. */
  file: z.string(),
  /** The error code a read would meet (`store_tampered`, `unsafe_path` or `io_error`). */
  code: z.string(),
  message: z.string(),
});

/** One project's verification. */
export const ProjectVerificationSchema = z.strictObject({
  project: z.string(),
  /** True when no problem was found. */
  ok: z.boolean(),
  /** The version `accepted.json` names, or null (none, or unreadable). */
  acceptedVersion: int.nullable(),
  /** How many version files were checked. */
  versions: int,
  /** How many persistent sources were recomputed against their digests. */
  sources: int,
  problems: z.array(VerifyProblemSchema),
  /**
   * What is there but is no problem: a version file above the accepted one (an accept interrupted before
   * the pointer moved; the next accept replaces it), a source no version names (an accept interrupted
   * after storing it).
   */
  notes: strings,
});

/** `workflow verify --json`: the result of `verifyProjects`. */
export const WorkflowVerifyDocumentSchema = z.strictObject({
  dataDir: z.string(),
  /** True when no project has a problem. */
  ok: z.boolean(),
  projects: z.array(ProjectVerificationSchema),
});

/** `migrate --json`. */
export const MigrateDocumentSchema = z.strictObject({ from: int.nullable(), to: int });

/** One service of a probe report (one per `mcpServers` name; aliases share pid and lists). */
export const ProbedServiceSchema = z.strictObject({
  name: z.string(),
  /** The definition (project services) or `null` (remote). */
  definition: z.string().nullable(),
  digest: z.string().nullable(),
  /** The endpoint (remote services only). */
  url: z.string().optional(),
  pid: int.nullable(),
  pgid: int.nullable(),
  state: z.enum(['ready', 'failed']),
  tools: strings,
  resources: strings,
  resourceTemplates: strings,
  prompts: strings,
  /** List methods the service declares but answered "method not found" (counted as empty), e.g. `resources/templates/list`. */
  missingLists: strings,
  /**
   * Whether the service runs sandboxed and why (`orchestration.sandbox`), `detail` what made the sandbox
   * unavailable or a note. `null` for a remote service, and for one whose start failed before this was
   * decided (`sandbox_unavailable` among them).
   */
  sandbox: z
    .strictObject({
      sandboxed: z.boolean(),
      reason: SandboxReasonSchema,
      network: z.boolean(),
      detail: z.string().optional(),
    })
    .nullable(),
  error: z
    .strictObject({
      code: z.string(),
      message: z.string(),
      /** What to do about it: the error's own remedy, or its code's fix. */
      remedy: z.string(),
      log: z.string().nullable(),
    })
    .nullable(),
});

/** `services probe --json`: the result of `probeServices`. */
export const ServicesProbeDocumentSchema = z.strictObject({
  project: z.string(),
  invocation: z.string(),
  runtimePath: z.string(),
  /**
   * What collects the services' processes on this host: `cgroup-v2` or `cgroup-v1` (a control group per
   * service: nothing escapes, `pids.max` holds), or `process-group` (process group and marker sweep only).
   */
  collection: CollectionSchema,
  services: z.array(ProbedServiceSchema),
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

/** One invocation as `status` shows it. */
export const InvocationStatusSchema = z.strictObject({
  id: z.string(),
  agent: z.string(),
  parent: z.string().nullable(),
  state: InvocationStateSchema,
  attempts: int,
  restarted: z.boolean(),
  /** Tool calls that reached the surface, summed over the attempts. */
  toolCalls: int,
  /** Milliseconds the invocation's service starts waited at the admission gate, summed over the attempts. */
  startQueuedMs: int,
  /** Usage of the invocation's model calls (zeros for a harness without a model, or a record from before usage was kept). */
  usage: UsageTotalsSchema.strict(),
});

/** A prestarted set of services waiting for the next invocation of its agent. */
export const PrestartedSetSchema = z.strictObject({
  /** The id the invocation that takes it will carry. */
  invocation: z.string(),
  /** The agent (role) whose next invocation it waits for. */
  agent: z.string(),
  /** When it was ready, ISO 8601. */
  since: z.string(),
  /** Its service names (empty for a journal written before they were recorded). */
  services: strings,
  /** Its services' process ids. */
  pids: z.array(int),
  /** When it is collected if nobody takes it, ISO 8601; null for a journal written before it was recorded. */
  idleDeadline: z.string().nullable(),
});

/** One run as `status` shows it. */
export const RunStatusReportSchema = z.strictObject({
  run: z.string(),
  /** `running` only while its host is alive; a dead host's run shows `interrupted`; `cancelled` after SIGINT/SIGTERM. */
  status: RunStatusSchema,
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  hostPid: int,
  resumes: int,
  /** The requirement the run was given (Main's task). */
  requirement: z.string(),
  /** The absolute workspace it ran in. */
  workspace: z.string(),
  output: z.string().nullable(),
  /** The OpenTelemetry trace id of the run's latest host, when it ran with export on (docs/telemetry.md). */
  traceId: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional(),
  /** Usage of every model call of the run, across resumes. */
  usage: UsageTotalsSchema.strict(),
  invocations: z.array(InvocationStatusSchema),
  /**
   * Warm starts waiting for an invocation (services started ahead for an agent's next `delegate`), read from
   * the run's journal: ready, not taken by an invocation, not collected. Only a `running` run has any.
   */
  prestarted: z.array(PrestartedSetSchema),
});

/** A store read that failed: the code, the message and the file it names. */
export const DamagedStoreSchema = z.strictObject({
  code: z.string(),
  message: z.string(),
  /** The file named by the error, or null. */
  path: z.string().nullable(),
});

/** A live service process of the project (it carries one of the project's markers). */
export const LiveServiceSchema = z.strictObject({
  pid: int,
  pgid: int,
  /** The services id of the invocation attempt it belongs to. */
  invocation: z.string(),
  hostPid: int,
  /** False for a stray of a dead host (the next `run` or `resume` sweeps it). */
  hostAlive: z.boolean(),
});

/** One project as `status` shows it. */
export const ProjectStatusSchema = z.strictObject({
  project: z.string(),
  /** The accepted version, or null when none was accepted or the store is damaged (see `acceptedError`). */
  acceptedVersion: int.nullable(),
  /**
   * Why the accepted version could not be read (`store_tampered`: `accepted.json` or its version file was
   * changed outside the SDK), or null. A damaged store is reported, never shown as "no accepted version".
   */
  acceptedError: DamagedStoreSchema.nullable(),
  runs: z.array(RunStatusReportSchema),
  /** Runs whose `run.json` is damaged (not JSON, or not this run's record): reported, never skipped. */
  corruptRuns: z.array(CorruptRunSchema),
  liveServices: z.array(LiveServiceSchema),
});

/** `status --json`: the result of `runStatus`. */
export const StatusDocumentSchema = z.strictObject({
  dataDir: z.string(),
  projects: z.array(ProjectStatusSchema),
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
