/**
 * The zod schema of every public run event (SPEC §11): what a reader checks a line of
 * `runs/<runId>/events.jsonl` against before it believes it. The journal is written as plain JSON on the
 * hot path (no zod there); readers that show or act on a line parse it here. The TypeScript types in
 * `events/runEvents.ts` are checked at compile time to be exactly what these schemas accept, so the two
 * cannot drift: a field added to one and not the other fails the build.
 *
 * Objects are not strict: a line written by a newer SDK with more fields still passes, and the extra
 * fields are dropped from the parsed value.
 */
import { z } from 'zod';

const RunStatusSchema = z.enum(['running', 'succeeded', 'failed', 'cancelled', 'interrupted']);
const InvocationStateSchema = z.enum(['starting', 'running', 'succeeded', 'failed', 'interrupted']);

/** A count the SDK wrote: a non-negative integer. */
const count = z.number().int().nonnegative();

const ErrorRecordSchema = z.object({
  code: z.string(),
  message: z.string(),
  remedy: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});

const TokenCountsSchema = z.object({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  cachedInputTokens: z.number().optional(),
  reasoningTokens: z.number().optional(),
  totalTokens: z.number().optional(),
});

const UsageTotalsSchema = z.object({
  modelCalls: count,
  inputTokens: count,
  outputTokens: count,
  cachedInputTokens: count,
  reasoningTokens: count,
  totalTokens: count,
});

const base = { time: z.iso.datetime({ offset: true }), run: z.string() };
const invocationBase = { ...base, invocation: z.string(), agent: z.string() };

const serviceFields = {
  ...invocationBase,
  servicesId: z.string(),
  service: z.string(),
  kind: z.enum(['project', 'remote']),
  definition: z.string().optional(),
  digest: z.string().optional(),
  pid: z.number().int().optional(),
  pgid: z.number().int().optional(),
  log: z.string().optional(),
  url: z.string().optional(),
  sandbox: z.object({ sandboxed: z.boolean(), reason: z.string(), network: z.boolean() }).optional(),
};

const CatalogNamesSchema = z.object({
  tools: z.array(z.string()),
  resources: z.array(z.string()),
  resourceTemplates: z.array(z.string()),
  prompts: z.array(z.string()),
});

const ListNamesSchema = z.array(z.enum(['tools', 'resources', 'prompts']));
const ShortErrorSchema = z.object({ code: z.string(), message: z.string() });

/** The schema of each event, by its `type`. */
export const RunEventSchemas = {
  'run.started': z.object({
    ...base,
    type: z.literal('run.started'),
    project: z.string(),
    version: count,
    workspace: z.string(),
    runDir: z.string(),
    git: z.boolean(),
  }),
  'run.resumed': z.object({
    ...base,
    type: z.literal('run.resumed'),
    resumes: count,
    from: RunStatusSchema,
    interrupted: z.array(z.string()),
    version: count,
  }),
  'run.finished': z.object({
    ...base,
    type: z.literal('run.finished'),
    status: RunStatusSchema,
    output: z.string().nullable(),
    error: ErrorRecordSchema.nullable().optional(),
    usage: UsageTotalsSchema,
  }),
  'invocation.started': z.object({
    ...invocationBase,
    type: z.literal('invocation.started'),
    attempt: count,
    parent: z.string().nullable(),
    version: count,
    restarted: z.boolean(),
    fromCheckpoint: z.boolean(),
    services: z.array(z.string()),
    runtimePath: z.string(),
    collection: z.enum(['cgroup-v2', 'cgroup-v1', 'process-group']),
  }),
  'invocation.state': z.object({
    ...invocationBase,
    type: z.literal('invocation.state'),
    from: InvocationStateSchema.nullable(),
    to: InvocationStateSchema,
    attempt: count,
  }),
  'invocation.attempt_failed': z.object({
    ...invocationBase,
    type: z.literal('invocation.attempt_failed'),
    attempt: count,
    error: ErrorRecordSchema.nullable(),
    willRetry: z.boolean(),
  }),
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
  'invocation.checkpoint': z.object({
    ...invocationBase,
    type: z.literal('invocation.checkpoint'),
    step: count,
    path: z.string(),
  }),
  'service.ready': z.object({
    ...serviceFields,
    type: z.literal('service.ready'),
    startMs: z.number().nonnegative(),
    queuedMs: z.number().nonnegative().optional(),
    prestarted: z.boolean().optional(),
    tools: count,
    resources: count,
    resourceTemplates: count,
    prompts: count,
    protocolVersion: z.string().optional(),
  }),
  'service.failed': z.object({
    ...serviceFields,
    type: z.literal('service.failed'),
    error: z.object({ code: z.string(), message: z.string(), log: z.string().optional() }),
  }),
  'service.exited': z.object({
    ...serviceFields,
    type: z.literal('service.exited'),
    expected: z.boolean(),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable(),
    forced: z.boolean(),
    swept: z.array(z.number().int()),
    survivors: z.array(z.number().int()),
    pollutedLines: count,
    invalidLines: count,
  }),
  'service.protocol_pollution': z.object({
    ...serviceFields,
    type: z.literal('service.protocol_pollution'),
    phase: z.enum(['first', 'close']),
    pollutedLines: count,
    invalidLines: count,
  }),
  'service.catalog_changed': z.object({
    ...serviceFields,
    type: z.literal('service.catalog_changed'),
    lists: ListNamesSchema,
    added: CatalogNamesSchema,
    removed: CatalogNamesSchema,
    changed: CatalogNamesSchema,
  }),
  'service.catalog_refresh_failed': z.object({
    ...serviceFields,
    type: z.literal('service.catalog_refresh_failed'),
    lists: ListNamesSchema,
    error: ShortErrorSchema,
  }),
  'tool.calling': z.object({ ...invocationBase, type: z.literal('tool.calling'), tool: z.string() }),
  'tool.called': z.object({
    ...invocationBase,
    type: z.literal('tool.called'),
    tool: z.string(),
    arguments: z.unknown(),
    ok: z.boolean(),
    durationMs: z.number().nonnegative(),
    summary: z.string(),
    callId: z.string().optional(),
    resultDigest: z.string().optional(),
    taskId: z.string().optional(),
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
  'tool.question': z.object({
    ...invocationBase,
    type: z.literal('tool.question'),
    tool: z.string(),
    mode: z.enum(['form', 'url']),
    message: z.string(),
    requestedSchema: z.record(z.string(), z.unknown()).optional(),
    url: z.string().optional(),
    policy: z.enum(['model', 'operator', 'decline']),
    action: z.enum(['accept', 'decline', 'cancel']),
    content: z.record(z.string(), z.unknown()).optional(),
  }),
  'workflow.reconfigured': z.object({
    ...invocationBase,
    type: z.literal('workflow.reconfigured'),
    version: count,
    changedMcps: z.array(z.string()),
    changedAgents: z.array(z.string()),
  }),
  'model.called': z.object({
    ...invocationBase,
    type: z.literal('model.called'),
    turn: count,
    model: z.string(),
    usage: TokenCountsSchema,
    durationMs: z.number().nonnegative(),
    finishReason: z.string().optional(),
    responseDigest: z.string().optional(),
    answered: z.array(z.object({ callId: z.string(), tool: z.string(), resultDigest: z.string() })).optional(),
  }),
  'model.retry': z.object({
    ...invocationBase,
    type: z.literal('model.retry'),
    turn: count,
    attempt: count,
    delayMs: z.number().nonnegative(),
    status: z.number().int().optional(),
    message: z.string(),
  }),
  'service.rested': z.object({
    ...invocationBase,
    type: z.literal('service.rested'),
    service: z.string(),
    failures: count,
    until: z.iso.datetime({ offset: true }),
  }),
  'service.recovered': z.object({ ...invocationBase, type: z.literal('service.recovered'), service: z.string() }),
  'prestart.ready': z.object({
    ...invocationBase,
    type: z.literal('prestart.ready'),
    runtimePath: z.string(),
    pids: z.array(z.number().int()),
    services: z.array(z.string()).optional(),
    idleDeadline: z.iso.datetime({ offset: true }).optional(),
  }),
  'prestart.collected': z.object({
    ...invocationBase,
    type: z.literal('prestart.collected'),
    reason: z.enum(['idle', 'workflow_changed', 'service_exited', 'start_failed', 'run_end']),
    pids: z.array(z.number().int()),
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
