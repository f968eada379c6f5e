/**
 * The zod schema of every public run event (SPEC §11): what a reader checks a line of
 * `runs/<runId>/events.jsonl` against before it believes it. The journal is written as plain JSON on the
 * hot path (no zod there); readers that show or act on a line parse it here. The TypeScript types of
 * `events/runEvents.ts` are inferred from these schemas (type-only), so the two cannot drift.
 *
 * Objects are not strict: a line written by a newer SDK with more fields still passes, and the extra
 * fields are dropped from the parsed value.
 */
import * as z from 'zod';
import {
  ErrorRecordSchema,
  ShortErrorSchema,
  TokenCountsSchema,
  UsageTotalsSchema,
  count,
  isoTime,
  pid,
} from './records.js';
import { ServiceEventBodySchemas, ServiceFieldsSchema } from './serviceEvents.js';
import {
  CollectionSchema,
  ElicitationPolicySchema,
  InvocationStateSchema,
  PrestartCollectedReasonSchema,
  RunStatusSchema,
} from './states.js';

/** Fields of every event. */
const base = {
  /** ISO 8601 time. */
  time: isoTime,
  /** The run id. */
  run: z.string(),
};
/** Fields of every event about one invocation. */
const invocationBase = {
  ...base,
  /** The invocation id. */
  invocation: z.string(),
  /** Its agent (role); `main` is Main. */
  agent: z.string(),
};

/** Fields of the service events, as published under the invocation whose attempt started the service. */
const serviceFields = {
  ...invocationBase,
  /** The id the attempt's services run under (`<invocation>` or `<invocation>-<attempt>`). */
  servicesId: z.string(),
  ...ServiceFieldsSchema.shape,
};

/** An OpenTelemetry trace id: 32 lowercase hex digits. */
const TraceIdSchema = z.string().regex(/^[0-9a-f]{32}$/);

/** The schema of each event, by its `type`. */
export const RunEventSchemas = {
  /** The run was accepted and is starting Main. */
  'run.started': z.object({
    ...base,
    type: z.literal('run.started'),
    project: z.string(),
    /** The accepted workflow version. */
    version: count,
    workspace: z.string(),
    /** `runs/<runId>`. */
    runDir: z.string(),
    git: z.boolean(),
    traceId: TraceIdSchema.optional(),
  }),
  /** `resume` took the run over. */
  'run.resumed': z.object({
    ...base,
    type: z.literal('run.resumed'),
    /** How many times the run was resumed, this one included. */
    resumes: count,
    /** The status the run had before (`interrupted` or `cancelled`). */
    from: RunStatusSchema,
    /** Invocations that were in flight and are continued (Main's now; a worker's when Main delegates it again). */
    interrupted: z.array(z.string()),
    version: count,
    traceId: TraceIdSchema.optional(),
  }),
  /** The run ended (or stopped: `cancelled`, `interrupted`). */
  'run.finished': z.object({
    ...base,
    type: z.literal('run.finished'),
    status: RunStatusSchema,
    output: z.string().nullable(),
    error: ErrorRecordSchema.nullable().optional(),
    /** Usage of every model call of the run, across resumes. */
    usage: UsageTotalsSchema,
  }),
  /** An attempt of an invocation started (its services are starting). */
  'invocation.started': z.object({
    ...invocationBase,
    type: z.literal('invocation.started'),
    attempt: count,
    parent: z.string().nullable(),
    version: count,
    /** True for an attempt started by `resume`. */
    restarted: z.boolean(),
    /** True when the attempt continues from a checkpoint of an earlier attempt. */
    fromCheckpoint: z.boolean(),
    /** The agent's service names. */
    services: z.array(z.string()),
    runtimePath: z.string(),
    /** What collects its services' processes on this host. */
    collection: CollectionSchema,
  }),
  /** An invocation changed state. */
  'invocation.state': z.object({
    ...invocationBase,
    type: z.literal('invocation.state'),
    from: InvocationStateSchema.nullable(),
    to: InvocationStateSchema,
    /** The attempt the change belongs to (0 before the first). */
    attempt: count,
  }),
  /** An attempt failed; `willRetry` says whether another starts. */
  'invocation.attempt_failed': z.object({
    ...invocationBase,
    type: z.literal('invocation.attempt_failed'),
    attempt: count,
    error: ErrorRecordSchema.nullable(),
    willRetry: z.boolean(),
  }),
  /** An invocation ended (or stopped). */
  'invocation.finished': z.object({
    ...invocationBase,
    type: z.literal('invocation.finished'),
    status: InvocationStateSchema,
    attempts: count,
    restarted: z.boolean().optional(),
    branch: z.string().optional(),
    commit: z.string().nullable().optional(),
    error: ErrorRecordSchema.optional(),
    usage: UsageTotalsSchema.optional(),
  }),
  /** The harness saved a checkpoint of the invocation (`runs/<run>/checkpoints/<invocation>.json`). */
  'invocation.checkpoint': z.object({
    ...invocationBase,
    type: z.literal('invocation.checkpoint'),
    /** The step the checkpoint holds (a model turn, a script step). */
    step: count,
    path: z.string(),
  }),
  /** A service is listed and serving. */
  'service.ready': z.object({
    ...serviceFields,
    type: z.literal('service.ready'),
    ...ServiceEventBodySchemas['service.ready'].shape,
    /**
     * True when the service was prestarted for this invocation (a warm start): `startMs` and `queuedMs` are
     * those of the prestart, and the event is journaled when the invocation takes the set.
     */
    prestarted: z.boolean().optional(),
  }),
  /** A service could not start, or died while ready. */
  'service.failed': z.object({
    ...serviceFields,
    type: z.literal('service.failed'),
    ...ServiceEventBodySchemas['service.failed'].shape,
  }),
  /** A service is gone. */
  'service.exited': z.object({
    ...serviceFields,
    type: z.literal('service.exited'),
    ...ServiceEventBodySchemas['service.exited'].shape,
  }),
  /** A service wrote lines on stdout that are not JSON-RPC. */
  'service.protocol_pollution': z.object({
    ...serviceFields,
    type: z.literal('service.protocol_pollution'),
    ...ServiceEventBodySchemas['service.protocol_pollution'].shape,
  }),
  /** A service's catalog changed after a list change it announced. */
  'service.catalog_changed': z.object({
    ...serviceFields,
    type: z.literal('service.catalog_changed'),
    ...ServiceEventBodySchemas['service.catalog_changed'].shape,
  }),
  /** A service announced a list change but listing it again failed; its catalog as it was stays in use. */
  'service.catalog_refresh_failed': z.object({
    ...serviceFields,
    type: z.literal('service.catalog_refresh_failed'),
    ...ServiceEventBodySchemas['service.catalog_refresh_failed'].shape,
  }),
  /** A tool call reached the agent's surface. */
  'tool.calling': z.object({ ...invocationBase, type: z.literal('tool.calling'), tool: z.string() }),
  /** A tool call was answered. */
  'tool.called': z.object({
    ...invocationBase,
    type: z.literal('tool.called'),
    tool: z.string(),
    /** The arguments, whole up to 4 KiB of JSON, else `{truncated, bytes, preview}`. */
    arguments: z.unknown(),
    ok: z.boolean(),
    durationMs: z.number().nonnegative(),
    /** The first 1 KiB of the result's text. */
    summary: z.string(),
    /**
     * The caller's id of the call (a model loop's tool call id), when it gave one: `resume` checks a
     * checkpoint's recorded result for this call against `resultDigest`.
     */
    callId: z.string().optional(),
    /**
     * sha256 (hex) of the canonical JSON of the result as a harness records it, `{isError, text}` (the text
     * a model reads; a failed call's error message). Absent in journals written before it was recorded.
     */
    resultDigest: z.string().optional(),
    taskId: z.string().optional(),
    /** The bridge's error code of a call it answered with its own error. */
    code: z.string().optional(),
  }),
  'tool.task_accepted': z.object({
    ...invocationBase,
    type: z.literal('tool.task_accepted'),
    tool: z.string(),
    service: z.string(),
    sourceTool: z.string(),
    taskId: z.string(),
    era: z.enum(['legacy', 'modern']),
    argumentsDigest: z.string(),
    callId: z.string().optional(),
  }),
  'tool.asking': z.object({
    ...invocationBase,
    type: z.literal('tool.asking'),
    tool: z.string(),
    mode: z.enum(['form', 'url']),
    message: z.string(),
    requestedSchema: z.record(z.string(), z.unknown()).optional(),
    url: z.string().optional(),
  }),
  'tool.question': z.object({
    ...invocationBase,
    type: z.literal('tool.question'),
    tool: z.string(),
    mode: z.enum(['form', 'url']),
    message: z.string(),
    requestedSchema: z.record(z.string(), z.unknown()).optional(),
    url: z.string().optional(),
    policy: ElicitationPolicySchema,
    action: z.enum(['accept', 'decline', 'cancel']),
    content: z.record(z.string(), z.unknown()).optional(),
  }),
  /** Main's `apply_workflow` accepted a new version. */
  'workflow.reconfigured': z.object({
    ...invocationBase,
    type: z.literal('workflow.reconfigured'),
    version: count,
    changedMcps: z.array(z.string()),
    changedAgents: z.array(z.string()),
  }),
  /** A model call of a model-loop harness finished. */
  'model.called': z.object({
    ...invocationBase,
    type: z.literal('model.called'),
    /** The turn (1-based) within the invocation. */
    turn: count,
    model: z.string(),
    usage: TokenCountsSchema,
    durationMs: z.number().nonnegative(),
    finishReason: z.string().optional(),
    /**
     * sha256 (hex) of the canonical JSON of the assistant message the response appended to the conversation
     * (of `null` when it appended none): `resume` checks a checkpoint's conversation against it.
     */
    responseDigest: z.string().optional(),
    /**
     * The tool calls of the response the provider library answered itself (an unknown tool, arguments that
     * are not JSON), each with the digest of that answer (as `tool.called`'s `resultDigest`).
     */
    answered: z.array(z.object({ callId: z.string(), tool: z.string(), resultDigest: z.string() })).optional(),
  }),
  /** A model call is retried after a 429/5xx/network failure. */
  'model.retry': z.object({
    ...invocationBase,
    type: z.literal('model.retry'),
    turn: count,
    attempt: count,
    delayMs: z.number().nonnegative(),
    status: z.number().int().optional(),
    message: z.string(),
  }),
  /** A service failed several forwarded calls in a row and is rested: calls are refused until `until`. */
  'service.rested': z.object({
    ...invocationBase,
    type: z.literal('service.rested'),
    service: z.string(),
    /** Calls failed in a row. */
    failures: count,
    /** When the rest ends (ISO 8601). */
    until: isoTime,
  }),
  /** A call after a rest was answered: the service is used normally again. */
  'service.recovered': z.object({ ...invocationBase, type: z.literal('service.recovered'), service: z.string() }),
  /**
   * A warm start is ready: the services of `agent`'s next invocation, started ahead under the id
   * (`invocation`) that invocation will carry.
   */
  'prestart.ready': z.object({
    ...invocationBase,
    type: z.literal('prestart.ready'),
    runtimePath: z.string(),
    /** The services' process ids. */
    pids: z.array(pid),
    /** The set's service names, in plan order (absent in journals written before they were recorded). */
    services: z.array(z.string()).optional(),
    /** When the set is collected if nobody takes it, ISO 8601 (`prestartIdleMs` after it was ready; absent likewise). */
    idleDeadline: isoTime.optional(),
  }),
  /** A prestarted set was collected without serving an invocation, and why. */
  'prestart.collected': z.object({
    ...invocationBase,
    type: z.literal('prestart.collected'),
    reason: PrestartCollectedReasonSchema,
    /** The services' process ids (all gone when the event is journaled). */
    pids: z.array(pid),
    /** Why the start failed, or the collection failed. */
    error: ShortErrorSchema.optional(),
  }),
} as const;

/** Every public event of a run, one schema per `type`. */
export const RunEventSchema = z.discriminatedUnion(
  'type',
  Object.values(RunEventSchemas) as unknown as RunEventSchemaList,
);

type RunEventSchemaList = [
  (typeof RunEventSchemas)[keyof typeof RunEventSchemas],
  ...(typeof RunEventSchemas)[keyof typeof RunEventSchemas][],
];

/**
 * Checks a parsed journal line against its event's schema: the parsed event, or a problem that names the
 * event type and the first field that failed, never a value (a line may hold anything a service managed
 * to write).
 */
export function checkEventLine(value: unknown): { ok: true; event: unknown } | { ok: false; problem: string } {
  const parsed = RunEventSchema.safeParse(value);
  if (parsed.success) return { ok: true, event: parsed.data };
  const type =
    typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
      ? (value as { type: string }).type
      : undefined;
  const issue = parsed.error.issues[0];
  const what = type === undefined ? 'an event without a known type' : `a "${type.slice(0, 64)}" event`;
  const where = issue === undefined || issue.path.length === 0 ? '' : `: field "${issue.path.join('.').slice(0, 128)}"`;
  return { ok: false, problem: `${what}${where} does not match the event's schema (${issue?.code ?? 'invalid'})` };
}
