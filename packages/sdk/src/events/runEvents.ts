/**
 * Every public event of a run (SPEC §11), as one union: what `runs/<runId>/events.jsonl` holds, what
 * `RunHandle.events()` yields and what `onEvent` receives. Events carry ids, times, numbers and paths,
 * never service logs or secret values. The lifecycle states of runs and invocations live here too, since
 * their transitions are events.
 */
import type { z } from 'zod';
import type {
  CatalogNames,
  ErrorRecord,
  ModelCall,
  ModelRetry,
  Question,
  QuestionAnswer,
  TokenCounts,
  UsageTotals,
} from '../schemas/records.js';
import type { RunEventSchemas } from '../schemas/runEvents.js';
import type { Assert, SameShape } from '../schemas/sameShape.js';
import type { ElicitationPolicy } from '../workflow/workflowTypes.js';

export type { CatalogNames, ErrorRecord, ModelCall, ModelRetry, TokenCounts, UsageTotals };

/** The former name of {@link CatalogNames} (the same type). @public @deprecated Use `CatalogNames`. */
export type RunEventCatalogNames = CatalogNames;

/**
 * The life of a run. `running → succeeded | failed`; `running → cancelled` when its host was asked to stop
 * (SIGINT/SIGTERM, an aborted signal); a `running` run whose host died is shown as `interrupted`.
 * `interrupted → running` and `cancelled → running` by `resume`.
 * @public
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
 * @public
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

/** Fields of every event. @public */
export interface EventBase {
  /** ISO 8601 time. */
  time: string;
  /** The run id. */
  run: string;
}

/** Fields of every event about one invocation. @public */
export interface InvocationEventBase extends EventBase {
  /** The invocation id. */
  invocation: string;
  /** Its agent (role); `main` is Main. */
  agent: string;
}

/** The run was accepted and is starting Main. @public */
export interface RunStartedEvent extends EventBase {
  /** The event type. */
  type: 'run.started';
  /** The project id. */
  project: string;
  /** The accepted workflow version. */
  version: number;
  /** The workspace the agents work in. */
  workspace: string;
  /** `runs/<runId>`. */
  runDir: string;
  /** Whether the run is Git-on (`orchestration.git`): a worktree per role. */
  git: boolean;
  /** The OpenTelemetry trace id of the run (32 hex), when export is on (docs/telemetry.md). */
  traceId?: string;
}

/** `resume` took the run over. @public */
export interface RunResumedEvent extends EventBase {
  /** The event type. */
  type: 'run.resumed';
  /** How many times the run was resumed, this one included. */
  resumes: number;
  /** The status the run had before (`interrupted` or `cancelled`). */
  from: RunStatus;
  /** Invocations that were in flight and are continued (Main's now; a worker's when Main delegates it again). */
  interrupted: string[];
  /** The accepted workflow version the run continues with. */
  version: number;
  /** The OpenTelemetry trace id of the resumed run's new trace, when export is on. */
  traceId?: string;
}

/** The run ended (or stopped: `cancelled`, `interrupted`). @public */
export interface RunFinishedEvent extends EventBase {
  /** The event type. */
  type: 'run.finished';
  /** How the run ended (or stopped). */
  status: RunStatus;
  /** Main's final answer, or null. */
  output: string | null;
  /** Why the run failed or stopped, or null. */
  error?: ErrorRecord | null;
  /** Usage of every model call of the run, across resumes. */
  usage: UsageTotals;
}

/** An attempt of an invocation started (its services are starting). @public */
export interface InvocationStartedEvent extends InvocationEventBase {
  /** The event type. */
  type: 'invocation.started';
  /** The attempt number, from 1. */
  attempt: number;
  /** The invocation that delegated this one (null for Main's). */
  parent: string | null;
  /** The workflow version the attempt runs. */
  version: number;
  /** True for an attempt started by `resume`. */
  restarted: boolean;
  /** True when the attempt continues from a checkpoint of an earlier attempt. */
  fromCheckpoint: boolean;
  /** The agent's service names. */
  services: string[];
  /** The attempt's runtime directory (`runs/<run>/invocations/<servicesId>/`). */
  runtimePath: string;
  /**
   * What collects its services' processes on this host: `cgroup-v2` or `cgroup-v1` (a control group per
   * service), or `process-group` (process group and marker sweep).
   */
  collection: 'cgroup-v2' | 'cgroup-v1' | 'process-group';
}

/** An invocation changed state. @public */
export interface InvocationStateEvent extends InvocationEventBase {
  /** The event type. */
  type: 'invocation.state';
  /** The state before (null for the first). */
  from: InvocationState | null;
  /** The state now. */
  to: InvocationState;
  /** The attempt the change belongs to (0 before the first). */
  attempt: number;
}

/** An attempt failed; `willRetry` says whether another starts. @public */
export interface InvocationAttemptFailedEvent extends InvocationEventBase {
  /** The event type. */
  type: 'invocation.attempt_failed';
  /** The attempt that failed. */
  attempt: number;
  /** Why it failed. */
  error: ErrorRecord | null;
  /** Whether another attempt starts. */
  willRetry: boolean;
}

/** An invocation ended (or stopped). @public */
export interface InvocationFinishedEvent extends InvocationEventBase {
  /** The event type. */
  type: 'invocation.finished';
  /** The invocation's state at the end. */
  status: InvocationState;
  /** How many attempts it took. */
  attempts: number;
  /** True when `resume` continued it. */
  restarted?: boolean;
  /** Git-on: the role's branch. */
  branch?: string;
  /** Git-on: the commit of the role's work, or null when nothing changed. */
  commit?: string | null;
  /** Why it failed, when it did. */
  error?: ErrorRecord;
  /** Usage of its model calls. */
  usage?: UsageTotals;
}

/** The harness saved a checkpoint of the invocation (`runs/<run>/checkpoints/<invocation>.json`). @public */
export interface InvocationCheckpointEvent extends InvocationEventBase {
  /** The event type. */
  type: 'invocation.checkpoint';
  /** The step the checkpoint holds (a model turn, a script step). */
  step: number;
  /** The checkpoint file. */
  path: string;
}

/** Fields of the service events, as published under the invocation whose attempt started the service. @public */
export interface ServiceEventFields extends InvocationEventBase {
  /** The id the attempt's services run under (`<invocation>` or `<invocation>-<attempt>`). */
  servicesId: string;
  /** The service name (the first alias). */
  service: string;
  /** A project service (a process the SDK runs) or a remote one (a URL). */
  kind: 'project' | 'remote';
  /** The definition a project service runs. */
  definition?: string;
  /** The definition's digest. */
  digest?: string;
  /** The leader's pid (project services, once spawned). */
  pid?: number;
  /** The process group id. */
  pgid?: number;
  /** The stderr log's path (never its content). */
  log?: string;
  /** A remote service's endpoint, without credentials or query. */
  url?: string;
  /** Whether a project service runs sandboxed, and why (`orchestration.sandbox`). */
  sandbox?: {
    sandboxed: boolean;
    reason: 'policy_off' | 'auto' | 'opted_out' | 'unavailable' | 'required';
    network: boolean;
  };
}

/** A service is listed and serving. @public */
export interface ServiceReadyEvent extends ServiceEventFields {
  /** The event type. */
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
  /** How many tools it lists. */
  tools: number;
  /** How many resources it lists. */
  resources: number;
  /** How many resource templates it lists. */
  resourceTemplates: number;
  /** How many prompts it lists. */
  prompts: number;
  /** The MCP protocol version agreed with it. */
  protocolVersion?: string;
}

/** A service could not start, or died while ready. @public */
export interface ServiceFailedEvent extends ServiceEventFields {
  /** The event type. */
  type: 'service.failed';
  /** The error's code and message (which names the log), and the stderr log's path; never its content. */
  error: { code: string; message: string; log?: string };
}

/** A service is gone. @public */
export interface ServiceExitedEvent extends ServiceEventFields {
  /** The event type. */
  type: 'service.exited';
  /** False when the service exited, died or lost its connection on its own. */
  expected: boolean;
  /** Its exit code, or null when a signal ended it. */
  exitCode: number | null;
  /** The signal that ended it, or null. */
  signal: string | null;
  /** True when SIGKILL was needed. */
  forced: boolean;
  /** Pids of marked processes outside its group that were collected. */
  swept: number[];
  /** Pids still alive after SIGKILL and the wait (normally empty). */
  survivors: number[];
  /** Stdout lines skipped because they were not JSON-RPC. */
  pollutedLines: number;
  /** Stdout lines that claimed JSON-RPC but were invalid. */
  invalidLines: number;
}

/** A service wrote lines on stdout that are not JSON-RPC. @public */
export interface ServiceProtocolPollutionEvent extends ServiceEventFields {
  /** The event type. */
  type: 'service.protocol_pollution';
  /** `first`: at the first stray line of the connection; `close`: the final count. */
  phase: 'first' | 'close';
  /** Stdout lines that were not JSON-RPC so far. */
  pollutedLines: number;
  /** Stdout lines that claimed JSON-RPC but were invalid so far. */
  invalidLines: number;
}

/**
 * A service announced a list change (`notifications/…/list_changed`), was listed again, and its catalog
 * changed: what was added, removed, or listed again with another definition (its own names).
 * @public
 */
export interface ServiceCatalogChangedEvent extends ServiceEventFields {
  /** The event type. */
  type: 'service.catalog_changed';
  /** The lists the service said had changed. */
  lists: ('tools' | 'resources' | 'prompts')[];
  /** Listed now and not before. */
  added: CatalogNames;
  /** Listed before and not now. */
  removed: CatalogNames;
  /** Listed under the same name with another definition. */
  changed: CatalogNames;
}

/** A service announced a list change but listing it again failed; its catalog as it was stays in use. @public */
export interface ServiceCatalogRefreshFailedEvent extends ServiceEventFields {
  /** The event type. */
  type: 'service.catalog_refresh_failed';
  /** The lists the service said had changed. */
  lists: ('tools' | 'resources' | 'prompts')[];
  /** Why listing again failed. */
  error: { code: string; message: string };
}

/** A tool call reached the agent's surface. @public */
export interface ToolCallingEvent extends InvocationEventBase {
  /** The event type. */
  type: 'tool.calling';
  /** The tool's surface name. */
  tool: string;
}

/** A tool call was answered. @public */
export interface ToolCalledEvent extends InvocationEventBase {
  /** The event type. */
  type: 'tool.called';
  /** The tool's surface name. */
  tool: string;
  /** The arguments, whole up to 4 KiB of JSON, else `{truncated, bytes, preview}`. */
  arguments: unknown;
  /** False when the result was an error (the service's or a refusal of the bridge). */
  ok: boolean;
  /** Milliseconds the call took. */
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
  /**
   * The error code of a call the bridge answered with its own error (e.g. `question_unanswered`,
   * `forward_timeout`, `task_failed`); absent for a service's own tool error and for a result.
   */
  code?: string;
}

/**
 * A service answered a tool call with an MCP task (SPEC §7), journaled the moment it was accepted and
 * before it is polled: `resume` re-attaches to the task instead of calling the tool again.
 * @public
 */
export interface ToolTaskAcceptedEvent extends InvocationEventBase {
  /** The event's type. */
  type: 'tool.task_accepted';
  /** The surface name of the tool. */
  tool: string;
  /** The service (its first name) and its own name of the tool. */
  service: string;
  /** The service's own name of the tool. */
  sourceTool: string;
  /** The task's id at the service (what `resume` polls). */
  taskId: string;
  /** `legacy`: 2025-11-25 experimental tasks; `modern`: the 2026-07-28 tasks extension. */
  era: 'legacy' | 'modern';
  /** sha256 (hex) of the canonical JSON of the call's arguments: `resume` matches the call made again by it. */
  argumentsDigest: string;
  /** The caller's id of the call, when it gave one. */
  callId?: string;
}

/**
 * A service asked a question during a tool call and the operator is being asked (policy `operator`, an
 * attended run): the question waits for a person. A {@link ToolQuestionEvent} follows once it is answered,
 * declined or cancelled.
 * @public
 */
export interface ToolAskingEvent extends InvocationEventBase {
  /** The event's type. */
  type: 'tool.asking';
  /** The surface name of the tool. */
  tool: string;
  /** `form`: a question with a schema of fields; `url`: a page the service asks the user to open. */
  mode: 'form' | 'url';
  /** The service's question. */
  message: string;
  /** Form mode: the JSON Schema of the answer. */
  requestedSchema?: Record<string, unknown>;
  /** URL mode: shown, never opened (query values redacted). */
  url?: string;
}

/**
 * A service asked a question during a tool call (`elicitation/create`, or an `input_required` result) and
 * how it was answered; answered values of fields the schema marks secret are `REDACTED`.
 * @public
 */
export interface ToolQuestionEvent extends InvocationEventBase, Question, QuestionAnswer {
  /** The event's type. */
  type: 'tool.question';
  /** The surface name of the tool. */
  tool: string;
  /** Who answered: the agent's policy. */
  policy: ElicitationPolicy;
}

/** Main's `apply_workflow` accepted a new version. @public */
export interface WorkflowReconfiguredEvent extends InvocationEventBase {
  /** The event type. */
  type: 'workflow.reconfigured';
  /** The new accepted version. */
  version: number;
  /** Definitions added or changed. */
  changedMcps: string[];
  /** Agents whose services changed. */
  changedAgents: string[];
}

/** A model call of a model-loop harness finished (the harness's report, journaled). @public */
export interface ModelCalledEvent extends InvocationEventBase, ModelCall {
  /** The event type. */
  type: 'model.called';
}

/** A model call is retried after a 429/5xx/network failure (the harness's report, journaled). @public */
export interface ModelRetryEvent extends InvocationEventBase, ModelRetry {
  /** The event type. */
  type: 'model.retry';
}

/** A service failed several forwarded calls in a row and is rested: calls are refused until `until`. @public */
export interface ServiceRestedEvent extends InvocationEventBase {
  /** The event type. */
  type: 'service.rested';
  /** The service (alias) name. */
  service: string;
  /** Calls failed in a row. */
  failures: number;
  /** When the rest ends (ISO 8601). */
  until: string;
}

/** A call after a rest was answered: the service is used normally again. @public */
export interface ServiceRecoveredEvent extends InvocationEventBase {
  /** The event type. */
  type: 'service.recovered';
  /** The service (alias) name. */
  service: string;
}

/**
 * A warm start is ready: the services of `agent`'s next invocation, started ahead under the id
 * (`invocation`) that invocation will carry.
 * @public
 */
export interface PrestartReadyEvent extends InvocationEventBase {
  /** The event type. */
  type: 'prestart.ready';
  /** The set's runtime directory. */
  runtimePath: string;
  /** The services' process ids. */
  pids: number[];
  /** The set's service names, in plan order (absent in journals written before they were recorded). */
  services?: string[];
  /** When the set is collected if nobody takes it, ISO 8601 (`prestartIdleMs` after it was ready; absent likewise). */
  idleDeadline?: string;
}

/** A prestarted set was collected without serving an invocation, and why. @public */
export interface PrestartCollectedEvent extends InvocationEventBase {
  /** The event type. */
  type: 'prestart.collected';
  /** Why: nobody took it in time, the workflow changed, a service exited, its start failed, or the run ended. */
  reason: 'idle' | 'workflow_changed' | 'service_exited' | 'start_failed' | 'run_end';
  /** The services' process ids (all gone when the event is journaled). */
  pids: number[];
  /** Why the start failed, or the collection failed. */
  error?: { code: string; message: string };
}

/** Every public event of a run. @public */
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
  | ToolAskingEvent
  | ToolQuestionEvent
  | WorkflowReconfiguredEvent
  | ModelCalledEvent
  | ModelRetryEvent
  | ServiceRestedEvent
  | ServiceRecoveredEvent
  | PrestartReadyEvent
  | PrestartCollectedEvent;

/** The type names of {@link RunEvent}. @public */
export type RunEventType = RunEvent['type'];

/** The event of one type. @public */
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
// fails the build. SameShape compares keys one level deep; the nested records (ErrorRecord, UsageTotals,
// TokenCounts, CatalogNames) are checked against their schemas in `schemas/records.ts`.
type SchemaOf<T extends RunEventType> = z.output<(typeof RunEventSchemas)[T]>;
/** The event types whose TypeScript type and schema differ (none). */
type Mismatched = { [T in RunEventType]: SameShape<SchemaOf<T>, RunEventOf<T>> extends true ? never : T }[RunEventType];
type SchemasCoverEveryType = SameShape<keyof typeof RunEventSchemas, RunEventType>;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, used by being compiled.
type EventSchemasMatch = Assert<[Mismatched] extends [never] ? SchemasCoverEveryType : Mismatched>;
