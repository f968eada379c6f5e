/**
 * Every public event of a run (SPEC §11), as one union: what `runs/<runId>/events.jsonl` holds, what
 * `RunHandle.events()` yields and what `onEvent` receives. Events carry ids, times, numbers and paths,
 * never service logs or secret values. The lifecycle states of runs and invocations live here too, since
 * their transitions are events.
 */
import type { z } from 'zod';
import type { RunEventSchemas } from '../schemas/runEvents.js';

/**
 * The life of a run. `running → succeeded | failed`; `running → cancelled` when its host was asked to stop
 * (SIGINT/SIGTERM, an aborted signal); a `running` run whose host died is shown as `interrupted`.
 * `interrupted → running` and `cancelled → running` by `resume`.
 */
export type RunStatus =
  /** A host is taking the requirement through Main. */
  | 'running'
  /** Main finished and returned its answer. Final. */
  | 'succeeded'
  /** Main's invocation failed after its retries (or the run could not continue). Final. */
  | 'failed'
  /** The host was cancelled (SIGINT/SIGTERM, an aborted signal) before Main finished; `resume` continues it. */
  | 'cancelled'
  /** The host stopped or died before Main finished; `resume` continues it. */
  | 'interrupted';

/**
 * The life of an invocation: `starting → running → succeeded`; a failed attempt goes back to `starting`
 * while retries remain, else to `failed`; `interrupted` when its host stopped, was cancelled or died
 * mid-way; `resume` takes an interrupted invocation back to `starting` and continues it from its
 * checkpoint. Every transition is journaled as an `invocation.state` event.
 */
export type InvocationState =
  /** Its services are being started (the harness has not started). */
  | 'starting'
  /** Every service is ready and the harness is running. */
  | 'running'
  /** The harness returned its final answer. Final. */
  | 'succeeded'
  /** Every attempt failed. Final. */
  | 'failed'
  /** Its host stopped before it finished; `resume` continues it (Main's, and a worker Main delegates again). */
  | 'interrupted';

/** An error as stored and published: `SdkError.toJSON()`. */
export interface ErrorRecord {
  code: string;
  message: string;
  remedy?: string;
  data?: Record<string, unknown>;
}

/** Token counts of one model call, as the provider reported them (missing counts are omitted). */
export interface TokenCounts {
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
  totalTokens?: number;
}

/** Usage summed over model calls (an invocation's or a run's); counts the provider never reported stay 0. */
export interface UsageTotals {
  /** Model calls that finished. */
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  reasoningTokens: number;
  totalTokens: number;
}

/** Fields of every event. */
interface EventBase {
  /** ISO 8601 time. */
  time: string;
  /** The run id. */
  run: string;
}

/** Fields of every event about one invocation. */
interface InvocationEventBase extends EventBase {
  /** The invocation id. */
  invocation: string;
  /** Its agent (role); `main` is Main. */
  agent: string;
}

/** The run was accepted and is starting Main. */
export interface RunStartedEvent extends EventBase {
  type: 'run.started';
  project: string;
  /** The accepted workflow version. */
  version: number;
  workspace: string;
  /** `runs/<runId>`. */
  runDir: string;
  git: boolean;
}

/** `resume` took the run over. */
export interface RunResumedEvent extends EventBase {
  type: 'run.resumed';
  /** How many times the run was resumed, this one included. */
  resumes: number;
  /** The status the run had before (`interrupted` or `cancelled`). */
  from: RunStatus;
  /** Invocations that were in flight and are continued (Main's now; a worker's when Main delegates it again). */
  interrupted: string[];
  version: number;
}

/** The run ended (or stopped: `cancelled`, `interrupted`). */
export interface RunFinishedEvent extends EventBase {
  type: 'run.finished';
  status: RunStatus;
  output: string | null;
  error?: ErrorRecord | null;
  /** Usage of every model call of the run, across resumes. */
  usage: UsageTotals;
}

/** An attempt of an invocation started (its services are starting). */
export interface InvocationStartedEvent extends InvocationEventBase {
  type: 'invocation.started';
  attempt: number;
  parent: string | null;
  version: number;
  /** True for an attempt started by `resume`. */
  restarted: boolean;
  /** True when the attempt continues from a checkpoint of an earlier attempt. */
  fromCheckpoint: boolean;
  /** The agent's service names. */
  services: string[];
  runtimePath: string;
  /**
   * What collects its services' processes on this host: `cgroup-v2` or `cgroup-v1` (a control group per
   * service), or `process-group` (process group and marker sweep).
   */
  collection: 'cgroup-v2' | 'cgroup-v1' | 'process-group';
}

/** An invocation changed state. */
export interface InvocationStateEvent extends InvocationEventBase {
  type: 'invocation.state';
  from: InvocationState | null;
  to: InvocationState;
  /** The attempt the change belongs to (0 before the first). */
  attempt: number;
}

/** An attempt failed; `willRetry` says whether another starts. */
export interface InvocationAttemptFailedEvent extends InvocationEventBase {
  type: 'invocation.attempt_failed';
  attempt: number;
  error: ErrorRecord | null;
  willRetry: boolean;
}

/** An invocation ended (or stopped). */
export interface InvocationFinishedEvent extends InvocationEventBase {
  type: 'invocation.finished';
  status: InvocationState;
  attempts: number;
  restarted?: boolean;
  branch?: string;
  commit?: string | null;
  error?: ErrorRecord;
  usage?: UsageTotals;
}

/** The harness saved a checkpoint of the invocation (`runs/<run>/checkpoints/<invocation>.json`). */
export interface InvocationCheckpointEvent extends InvocationEventBase {
  type: 'invocation.checkpoint';
  /** The step the checkpoint holds (a model turn, a script step). */
  step: number;
  path: string;
}

/** Fields of the service events, as published under the invocation whose attempt started the service. */
interface ServiceEventFields extends InvocationEventBase {
  /** The id the attempt's services run under (`<invocation>` or `<invocation>-<attempt>`). */
  servicesId: string;
  service: string;
  kind: 'project' | 'remote';
  definition?: string;
  digest?: string;
  pid?: number;
  pgid?: number;
  /** The stderr log's path (never its content). */
  log?: string;
  url?: string;
  /** Whether a project service runs sandboxed, and why (`orchestration.sandbox`). */
  sandbox?: { sandboxed: boolean; reason: string; network: boolean };
}

/** A service is listed and serving. */
export interface ServiceReadyEvent extends ServiceEventFields {
  type: 'service.ready';
  /** Milliseconds from the start (for a project service: from its admission) to ready. */
  startMs: number;
  /** Milliseconds a project service's start waited at the admission gate before it began. */
  queuedMs?: number;
  /**
   * True when the service was prestarted for this invocation (a warm start): `startMs` and `queuedMs` are
   * those of the prestart, and the event is journaled when the invocation takes the set.
   */
  prestarted?: boolean;
  tools: number;
  resources: number;
  resourceTemplates: number;
  prompts: number;
  protocolVersion?: string;
}

/** A service could not start, or died while ready. */
export interface ServiceFailedEvent extends ServiceEventFields {
  type: 'service.failed';
  error: { code: string; message: string; log?: string };
}

/** A service is gone. */
export interface ServiceExitedEvent extends ServiceEventFields {
  type: 'service.exited';
  expected: boolean;
  exitCode: number | null;
  signal: string | null;
  forced: boolean;
  swept: number[];
  survivors: number[];
  pollutedLines: number;
  invalidLines: number;
}

/** A service wrote lines on stdout that are not JSON-RPC. */
export interface ServiceProtocolPollutionEvent extends ServiceEventFields {
  type: 'service.protocol_pollution';
  phase: 'first' | 'close';
  pollutedLines: number;
  invalidLines: number;
}

/** Names per list of a service's catalog: tool and prompt names, resource URIs, template URI templates. */
export interface CatalogNames {
  tools: string[];
  resources: string[];
  resourceTemplates: string[];
  prompts: string[];
}

/**
 * A service announced a list change (`notifications/…/list_changed`), was listed again, and its catalog
 * changed: what was added, removed, or listed again with another definition (its own names).
 */
export interface ServiceCatalogChangedEvent extends ServiceEventFields {
  type: 'service.catalog_changed';
  /** The lists the service said had changed. */
  lists: ('tools' | 'resources' | 'prompts')[];
  added: CatalogNames;
  removed: CatalogNames;
  changed: CatalogNames;
}

/** A service announced a list change but listing it again failed; its catalog as it was stays in use. */
export interface ServiceCatalogRefreshFailedEvent extends ServiceEventFields {
  type: 'service.catalog_refresh_failed';
  lists: ('tools' | 'resources' | 'prompts')[];
  error: { code: string; message: string };
}

/** A tool call reached the agent's surface. */
export interface ToolCallingEvent extends InvocationEventBase {
  type: 'tool.calling';
  tool: string;
}

/** A tool call was answered. */
export interface ToolCalledEvent extends InvocationEventBase {
  type: 'tool.called';
  tool: string;
  /** The arguments, whole up to 4 KiB of JSON, else `{truncated, bytes, preview}`. */
  arguments: unknown;
  ok: boolean;
  durationMs: number;
  /** The first 1 KiB of the result's text. */
  summary: string;
  /**
   * The caller's id of the call (a model loop's tool call id), when it gave one: `resume` checks a
   * checkpoint's recorded result for this call against {@link ToolCalledEvent.resultDigest}.
   */
  callId?: string;
  /**
   * sha256 (hex) of the canonical JSON of the result as a harness records it, `{isError, text}` (the text
   * a model reads; a failed call's error message). Absent in journals written before it was recorded.
   */
  resultDigest?: string;
  /** The MCP task the call ran as, when the service answered it with one (see {@link ToolTaskAcceptedEvent}). */
  taskId?: string;
}

/**
 * A service answered a tool call with an MCP task (SPEC §7), journaled the moment it was accepted and
 * before it is polled: `resume` re-attaches to the task instead of calling the tool again.
 */
export interface ToolTaskAcceptedEvent extends InvocationEventBase {
  type: 'tool.task_accepted';
  /** The surface name of the tool. */
  tool: string;
  /** The service (its first name) and its own name of the tool. */
  service: string;
  sourceTool: string;
  taskId: string;
  /** `legacy`: 2025-11-25 experimental tasks; `modern`: the 2026-07-28 tasks extension. */
  era: 'legacy' | 'modern';
  /** sha256 (hex) of the canonical JSON of the call's arguments: `resume` matches the call made again by it. */
  argumentsDigest: string;
  /** The caller's id of the call, when it gave one. */
  callId?: string;
}

/**
 * A service asked a question during a tool call (`elicitation/create`, or an `input_required` result) and
 * how it was answered; answered values of fields the schema marks secret are `REDACTED`.
 */
export interface ToolQuestionEvent extends InvocationEventBase {
  type: 'tool.question';
  /** The surface name of the tool. */
  tool: string;
  mode: 'form' | 'url';
  message: string;
  requestedSchema?: Record<string, unknown>;
  /** URL mode: shown, never opened. */
  url?: string;
  /** Who answered: the agent's policy. */
  policy: 'model' | 'operator' | 'decline';
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

/** Main's `apply_workflow` accepted a new version. */
export interface WorkflowReconfiguredEvent extends InvocationEventBase {
  type: 'workflow.reconfigured';
  version: number;
  changedMcps: string[];
  changedAgents: string[];
}

/** A model call of a model-loop harness finished. */
export interface ModelCalledEvent extends InvocationEventBase {
  type: 'model.called';
  /** The turn (1-based) within the invocation. */
  turn: number;
  model: string;
  usage: TokenCounts;
  durationMs: number;
  finishReason?: string;
  /**
   * sha256 (hex) of the canonical JSON of the assistant message the response appended to the conversation
   * (of `null` when it appended none): `resume` checks a checkpoint's conversation against it.
   */
  responseDigest?: string;
  /**
   * The tool calls of the response the provider library answered itself (an unknown tool, arguments that
   * are not JSON), each with the digest of that answer (as {@link ToolCalledEvent.resultDigest}).
   */
  answered?: { callId: string; tool: string; resultDigest: string }[];
}

/** A model call is retried after a 429/5xx/network failure. */
export interface ModelRetryEvent extends InvocationEventBase {
  type: 'model.retry';
  turn: number;
  attempt: number;
  delayMs: number;
  status?: number;
  message: string;
}

/** A service failed several forwarded calls in a row and is rested: calls are refused until `until`. */
export interface ServiceRestedEvent extends InvocationEventBase {
  type: 'service.rested';
  service: string;
  /** Calls failed in a row. */
  failures: number;
  /** When the rest ends (ISO 8601). */
  until: string;
}

/** A call after a rest was answered: the service is used normally again. */
export interface ServiceRecoveredEvent extends InvocationEventBase {
  type: 'service.recovered';
  service: string;
}

/**
 * A warm start is ready: the services of `agent`'s next invocation, started ahead under the id
 * (`invocation`) that invocation will carry.
 */
export interface PrestartReadyEvent extends InvocationEventBase {
  type: 'prestart.ready';
  runtimePath: string;
  /** The services' process ids. */
  pids: number[];
  /** The set's service names, in plan order (absent in journals written before they were recorded). */
  services?: string[];
  /** When the set is collected if nobody takes it, ISO 8601 (`prestartIdleMs` after it was ready; absent likewise). */
  idleDeadline?: string;
}

/** A prestarted set was collected without serving an invocation, and why. */
export interface PrestartCollectedEvent extends InvocationEventBase {
  type: 'prestart.collected';
  reason: 'idle' | 'workflow_changed' | 'service_exited' | 'start_failed' | 'run_end';
  /** The services' process ids (all gone when the event is journaled). */
  pids: number[];
  /** Why the start failed, or the collection failed. */
  error?: { code: string; message: string };
}

/** Every public event of a run. */
export type RunEvent =
  | RunStartedEvent
  | RunResumedEvent
  | RunFinishedEvent
  | InvocationStartedEvent
  | InvocationStateEvent
  | InvocationAttemptFailedEvent
  | InvocationFinishedEvent
  | InvocationCheckpointEvent
  | ServiceReadyEvent
  | ServiceFailedEvent
  | ServiceExitedEvent
  | ServiceProtocolPollutionEvent
  | ServiceCatalogChangedEvent
  | ServiceCatalogRefreshFailedEvent
  | ToolCallingEvent
  | ToolCalledEvent
  | ToolTaskAcceptedEvent
  | ToolQuestionEvent
  | WorkflowReconfiguredEvent
  | ModelCalledEvent
  | ModelRetryEvent
  | ServiceRestedEvent
  | ServiceRecoveredEvent
  | PrestartReadyEvent
  | PrestartCollectedEvent;

/** The type names of {@link RunEvent}. */
export type RunEventType = RunEvent['type'];

/** The event of one type. */
export type RunEventOf<T extends RunEventType> = Extract<RunEvent, { type: T }>;

/**
 * An event before the journal stamps it: without `run`, and with `time` optional (the journal fills it).
 * Distributes over the union, so each member keeps its own fields.
 */
export type RunEventInput = RunEvent extends infer E
  ? E extends RunEvent
    ? Omit<E, 'run' | 'time'> & { time?: string }
    : never
  : never;

/** Usage totals with nothing counted. */
export function emptyUsage(): UsageTotals {
  return { modelCalls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 0 };
}

/** Adds one model call's counts to `totals` (in place). */
export function addUsage(totals: UsageTotals, counts: TokenCounts): void {
  totals.modelCalls += 1;
  totals.inputTokens += count(counts.inputTokens);
  totals.outputTokens += count(counts.outputTokens);
  totals.cachedInputTokens += count(counts.cachedInputTokens);
  totals.reasoningTokens += count(counts.reasoningTokens);
  totals.totalTokens += count(counts.totalTokens ?? count(counts.inputTokens) + count(counts.outputTokens));
}

/** A reported count as a number to add: a missing, negative or non-finite count adds nothing. */
function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

// The types above are exactly what the journal's readers accept (`schemas/runEvents.ts`): checked here at
// compile time, type-only (no zod is loaded with this module), so a field added to one and not the other
// fails the build.
type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SchemaOf<T extends RunEventType> = z.infer<(typeof RunEventSchemas)[T]>;
/** The event types whose TypeScript type and schema differ (none). */
type Mismatched = { [T in RunEventType]: SameType<SchemaOf<T>, RunEventOf<T>> extends true ? never : T }[RunEventType];
type SchemasCoverEveryType = SameType<keyof typeof RunEventSchemas, RunEventType>;
/** Fails to compile, naming the event types, when a type and its schema differ. */
type Assert<T extends true> = T;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, used by being compiled.
type EventSchemasMatch = Assert<[Mismatched] extends [never] ? SchemasCoverEveryType : Mismatched>;
