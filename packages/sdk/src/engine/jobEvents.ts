/**
 * The events a queue worker's result may replay into the coordinator's journal, checked one by one before
 * any is journaled: anything in Redis may have been written by something else. An event is taken only when
 * its type is one a worker's attempt writes (never `run.*`, `invocation.attempt_failed`/`finished`,
 * `workflow.reconfigured` or `prestart.*`: the coordinator alone writes those), when it has exactly the
 * fields of its type in `events/runEvents.ts` (each of the right kind), and when it names the job's own
 * run, invocation, agent, attempt and services id.
 *
 * The field tables below are typed from the event types themselves: a field added to or removed from an
 * event type fails to compile here until its check is added or removed, so the two never drift apart.
 */
import { SdkError } from '../errors.js';
import type { RunEventOf, RunEventType } from '../events/runEvents.js';
import { InvocationStateSchema } from '../schemas/states.js';
import type { ServiceEvent } from '../sessions/serviceEvents.js';

/** The event types a worker's attempt writes. */
type WorkerEventType =
  | 'invocation.started'
  | 'invocation.state'
  | 'invocation.checkpoint'
  | 'service.ready'
  | 'service.failed'
  | 'service.exited'
  | 'service.protocol_pollution'
  | 'service.catalog_changed'
  | 'service.catalog_refresh_failed'
  | 'service.rested'
  | 'service.recovered'
  | 'tool.calling'
  | 'tool.called'
  | 'tool.task_accepted'
  | 'tool.asking'
  | 'tool.question'
  | 'model.called'
  | 'model.retry';

/** The event types only the coordinator writes: a result replaying one is refused. */
const COORDINATOR_ONLY = [
  'run.started',
  'run.resumed',
  'run.finished',
  'invocation.attempt_failed',
  'invocation.finished',
  'workflow.reconfigured',
  'prestart.ready',
  'prestart.collected',
] as const satisfies readonly RunEventType[];

/** Every event type is either a worker's or the coordinator's alone (a new type must be placed). */
type Unplaced = Exclude<RunEventType, WorkerEventType | (typeof COORDINATOR_ONLY)[number]>;
const everyTypePlaced: [Unplaced] extends [never] ? true : Unplaced = true;
void everyTypePlaced;

type Check = (value: unknown) => boolean;

/**
 * A check per field of an event type (the public event's fields, and for service events those the service
 * layer adds too), every field named: the mapped type makes a missing or unknown field a compile error.
 */
type Fields<T extends WorkerEventType> = {
  [K in keyof RunEventOf<T> | ServiceKeys<T>]-?: Check;
};
/** Fields a service event carries from the service layer beyond the public type (`era`, `eraSource`). */
type ServiceKeys<T extends WorkerEventType> = [Extract<ServiceEvent, { type: T }>] extends [never]
  ? never
  : keyof Extract<ServiceEvent, { type: T }>;

const str: Check = (v) => typeof v === 'string';
const bool: Check = (v) => typeof v === 'boolean';
const num: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const count: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const any: Check = () => true;
const opt =
  (check: Check): Check =>
  (v) =>
    v === undefined || check(v);
const nullable =
  (check: Check): Check =>
  (v) =>
    v === null || check(v);
const oneOf =
  (...values: readonly unknown[]): Check =>
  (v) =>
    values.includes(v);
const listOf =
  (check: Check): Check =>
  (v) =>
    Array.isArray(v) && v.every(check);
const time: Check = (v) => typeof v === 'string' && !Number.isNaN(Date.parse(v));
/** A plain object with exactly these fields (absent optional ones aside), each passing its check. */
const shape =
  (fields: Record<string, Check>): Check =>
  (v) =>
    isPlain(v) &&
    Object.keys(v).every((k) => Object.hasOwn(fields, k)) &&
    Object.entries(fields).every(([k, check]) => check(Object.hasOwn(v, k) ? v[k] : undefined));

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}

/** The invocation states: the one list, the schema's. */
const STATES = InvocationStateSchema.options;
const LISTS = listOf(oneOf('tools', 'resources', 'prompts'));
const names = shape({
  tools: listOf(str),
  resources: listOf(str),
  resourceTemplates: listOf(str),
  prompts: listOf(str),
});
const coded = shape({ code: str, message: str });

/** Fields of every event about an invocation; `run`, `invocation`, `agent` are compared to the job's too. */
const base = { type: str, time, run: opt(str), invocation: str, agent: str } as const;
/** Fields of a question from a service (`tool.asking`, and `tool.question` with its answer). */
const question = { ...base, tool: str, mode: str, message: str, requestedSchema: opt(any), url: opt(str) } as const;
/** Fields of every service event (the public ones and the service layer's). */
const service = {
  ...base,
  servicesId: str,
  service: str,
  kind: oneOf('project', 'remote'),
  definition: opt(str),
  digest: opt(str),
  pid: opt(count),
  pgid: opt(count),
  log: opt(str),
  url: opt(str),
  sandbox: opt(shape({ sandboxed: bool, reason: str, network: bool })),
} as const;

const FIELDS: { [T in WorkerEventType]: Fields<T> } = {
  'invocation.started': {
    ...base,
    attempt: count,
    parent: nullable(str),
    version: count,
    restarted: bool,
    fromCheckpoint: bool,
    services: listOf(str),
    runtimePath: str,
    collection: oneOf('cgroup-v2', 'cgroup-v1', 'process-group'),
  },
  'invocation.state': { ...base, from: nullable(oneOf(...STATES)), to: oneOf(...STATES), attempt: count },
  'invocation.checkpoint': { ...base, step: count, path: str },
  'service.ready': {
    ...service,
    startMs: num,
    queuedMs: opt(num),
    prestarted: opt(bool),
    tools: count,
    resources: count,
    resourceTemplates: count,
    prompts: count,
    protocolVersion: opt(str),
    era: opt(oneOf('legacy', 'modern')),
    eraSource: opt(oneOf('remembered', 'negotiated', 'damaged_cache')),
  },
  'service.failed': { ...service, error: shape({ code: str, message: str, log: opt(str) }) },
  'service.exited': {
    ...service,
    expected: bool,
    exitCode: nullable(num),
    signal: nullable(str),
    forced: bool,
    swept: listOf(count),
    survivors: listOf(count),
    pollutedLines: count,
    invalidLines: count,
  },
  'service.protocol_pollution': {
    ...service,
    phase: oneOf('first', 'close'),
    pollutedLines: count,
    invalidLines: count,
  },
  'service.catalog_changed': { ...service, lists: LISTS, added: names, removed: names, changed: names },
  'service.catalog_refresh_failed': { ...service, lists: LISTS, error: coded },
  'service.rested': { ...base, service: str, failures: count, until: time },
  'service.recovered': { ...base, service: str },
  'tool.calling': { ...base, tool: str },
  'tool.called': {
    ...base,
    tool: str,
    arguments: any,
    ok: bool,
    durationMs: num,
    summary: str,
    callId: opt(str),
    resultDigest: opt(str),
    taskId: opt(str),
    code: opt(str),
  },
  'tool.task_accepted': {
    ...base,
    tool: str,
    service: str,
    sourceTool: str,
    taskId: str,
    era: str,
    argumentsDigest: str,
    callId: opt(str),
  },
  'tool.asking': question,
  'tool.question': {
    ...question,
    policy: str,
    action: str,
    content: opt(any),
  },
  'model.called': {
    ...base,
    turn: count,
    model: str,
    usage: shape({
      inputTokens: opt(count),
      outputTokens: opt(count),
      cachedInputTokens: opt(count),
      reasoningTokens: opt(count),
      totalTokens: opt(count),
    }),
    durationMs: num,
    finishReason: opt(str),
    responseDigest: opt(str),
    answered: opt(listOf(shape({ callId: str, tool: str, resultDigest: str }))),
  },
  'model.retry': { ...base, turn: count, attempt: count, delayMs: num, status: opt(num), message: str },
};

/** Whose events a result may replay: the job's run, invocation (and its agent), attempt and services id. */
export interface JobEventOwner {
  job: string;
  run: string;
  invocation: string;
  agent: string;
  /** The attempt the job runs (1-based). */
  attempt: number;
  /** The id the attempt's services run under. */
  servicesId: string;
}

/**
 * Checks every event of a job's result (see the module's comment).
 *
 * @throws SdkError `invalid_job` naming the first refused event (its index, its type as far as it is a
 * short string, and why): the coordinator journals that with the attempt's failure, and journals none of
 * the result's events.
 */
export function checkJobEvents(events: readonly unknown[], owner: JobEventOwner): void {
  events.forEach((event, index) => {
    const why = refusal(event, owner);
    if (why === undefined) return;
    const type = isPlain(event) && typeof event.type === 'string' ? event.type.slice(0, 60) : null;
    throw new SdkError(
      'invalid_job',
      `the result of job ${owner.job} (invocation ${owner.invocation}) replays an event the coordinator refuses: event ${index}${type === null ? '' : ` (${type})`} ${why}`,
      {
        remedy:
          'run workers of the same ScienceEvolve version as the coordinator, and keep other writers off the queue (see who can write to Redis)',
        data: { job: owner.job, invocation: owner.invocation, event: index, type, why },
      },
    );
  });
}

/** Why `event` is refused, or `undefined` when it is taken. */
function refusal(event: unknown, owner: JobEventOwner): string | undefined {
  if (!isPlain(event)) return 'is not an object';
  const type = event.type;
  if (typeof type !== 'string') return 'has no type';
  if ((COORDINATOR_ONLY as readonly string[]).includes(type)) return 'is one only the coordinator writes';
  if (!Object.hasOwn(FIELDS, type)) return 'is of no known type';
  const fields = FIELDS[type as WorkerEventType] as Record<string, Check>;
  for (const key of Object.keys(event))
    if (!Object.hasOwn(fields, key)) return `has a field its type has not ("${key.slice(0, 40)}")`;
  for (const [key, check] of Object.entries(fields)) {
    if (!check(Object.hasOwn(event, key) ? event[key] : undefined)) return `has a bad or missing "${key}"`;
  }
  if (event.run !== undefined && event.run !== owner.run) return 'names another run';
  if (event.invocation !== owner.invocation) return 'names another invocation';
  if (event.agent !== owner.agent) return 'names another agent';
  if (Object.hasOwn(event, 'servicesId') && event.servicesId !== owner.servicesId) return 'names other services';
  if (type === 'invocation.started' && event.attempt !== owner.attempt) return 'names another attempt';
  if (type === 'invocation.state' && (event.attempt as number) > owner.attempt) return 'names a later attempt';
  return undefined;
}
