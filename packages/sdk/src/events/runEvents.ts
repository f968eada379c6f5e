/**
 * Every public event of a run (SPEC §11), as one union: what `runs/<runId>/events.jsonl` holds, what
 * `RunHandle.events()` yields and what `onEvent` receives. Events carry ids, times, numbers and paths,
 * never service logs or secret values. The types are inferred from the zod schemas of `schemas/runEvents.ts`
 * (the one source, which readers check a line against); the usage arithmetic of the events lives here.
 */
import type { z } from 'zod';
import type { RunEventSchemas } from '../schemas/runEvents.js';

// The states, records and events are the schemas' (`schemas/`): inferred here type-only, so no zod is
// loaded with this module (the journal writes plain JSON on the hot path).
export type { InvocationState, RunStatus } from '../schemas/states.js';
export type { CatalogNames, ErrorRecord, TokenCounts, UsageTotals } from '../schemas/records.js';
import type { TokenCounts, UsageTotals } from '../schemas/records.js';

/** The event of one type, as its schema infers it. */
type EventOf<T extends keyof typeof RunEventSchemas> = z.infer<(typeof RunEventSchemas)[T]>;

/** The run was accepted and is starting Main. */
export type RunStartedEvent = EventOf<'run.started'>;
/** `resume` took the run over. */
export type RunResumedEvent = EventOf<'run.resumed'>;
/** The run ended (or stopped: `cancelled`, `interrupted`). */
export type RunFinishedEvent = EventOf<'run.finished'>;
/** An attempt of an invocation started (its services are starting). */
export type InvocationStartedEvent = EventOf<'invocation.started'>;
/** An invocation changed state. */
export type InvocationStateEvent = EventOf<'invocation.state'>;
/** An attempt failed; `willRetry` says whether another starts. */
export type InvocationAttemptFailedEvent = EventOf<'invocation.attempt_failed'>;
/** An invocation ended (or stopped). */
export type InvocationFinishedEvent = EventOf<'invocation.finished'>;
/** The harness saved a checkpoint of the invocation (`runs/<run>/checkpoints/<invocation>.json`). */
export type InvocationCheckpointEvent = EventOf<'invocation.checkpoint'>;
/** A service is listed and serving. */
export type ServiceReadyEvent = EventOf<'service.ready'>;
/** A service could not start, or died while ready. */
export type ServiceFailedEvent = EventOf<'service.failed'>;
/** A service is gone. */
export type ServiceExitedEvent = EventOf<'service.exited'>;
/** A service wrote lines on stdout that are not JSON-RPC. */
export type ServiceProtocolPollutionEvent = EventOf<'service.protocol_pollution'>;
/** A service announced a list change, was listed again, and its catalog changed. */
export type ServiceCatalogChangedEvent = EventOf<'service.catalog_changed'>;
/** A service announced a list change but listing it again failed; its catalog as it was stays in use. */
export type ServiceCatalogRefreshFailedEvent = EventOf<'service.catalog_refresh_failed'>;
/** A tool call reached the agent's surface. */
export type ToolCallingEvent = EventOf<'tool.calling'>;
/** A tool call was answered. */
export type ToolCalledEvent = EventOf<'tool.called'>;
/** Main's `apply_workflow` accepted a new version. */
export type WorkflowReconfiguredEvent = EventOf<'workflow.reconfigured'>;
/** A model call of a model-loop harness finished. */
export type ModelCalledEvent = EventOf<'model.called'>;
/** A model call is retried after a 429/5xx/network failure. */
export type ModelRetryEvent = EventOf<'model.retry'>;
/** A service failed several forwarded calls in a row and is rested: calls are refused until `until`. */
export type ServiceRestedEvent = EventOf<'service.rested'>;
/** A call after a rest was answered: the service is used normally again. */
export type ServiceRecoveredEvent = EventOf<'service.recovered'>;
/** A warm start is ready: the services of `agent`'s next invocation, started ahead. */
export type PrestartReadyEvent = EventOf<'prestart.ready'>;
/** A prestarted set was collected without serving an invocation, and why. */
export type PrestartCollectedEvent = EventOf<'prestart.collected'>;

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
