/**
 * `runs/<runId>/run.json`, a run's durable state (SPEC §4, §10): written atomically by the engine after
 * every transition (plain JSON, no zod on that path) and read back, checked against these schemas, by
 * `status` and `resume`. A record that does not parse is `store_tampered` naming the file and the field.
 */
import * as z from 'zod';
import { ErrorRecordSchema, UsageTotalsSchema, count } from './records.js';
import { AttemptEndSchema, InvocationStateSchema, RunStatusSchema } from './states.js';

/** One attempt of an invocation: its own services, its own runtime directory. */
export const AttemptRecordSchema = z.object({
  /** 1, 2, … across retries and resumes. */
  attempt: count,
  /** The id its services run under (the invocation id for the first attempt, `<id>-<n>` after). */
  servicesId: z.string(),
  /** `runs/<runId>/invocations/<servicesId>`: the copies of the services and their stderr logs. */
  runtimePath: z.string(),
  /** The accepted workflow version the attempt started. */
  version: count,
  /** True for an attempt started by `resume`. */
  restarted: z.boolean(),
  /** ISO 8601. */
  startedAt: z.string(),
  /** ISO 8601, or null while it runs. */
  finishedAt: z.string().nullable(),
  /** How it ended, or null while it runs. */
  outcome: AttemptEndSchema.nullable(),
  error: ErrorRecordSchema.nullable(),
  /** True when the attempt continued from the invocation's checkpoint. */
  fromCheckpoint: z.boolean().optional(),
  /** Tool calls that reached the attempt's surface, as the engine counted them. */
  toolCalls: count.optional(),
  /** Tool calls that reached the surface as the harness reported them (agent CLIs), or null when it did not say. */
  toolCallsReached: count.nullable().optional(),
  /** Milliseconds the attempt's longest-waiting service start queued at the admission gate (absent: none). */
  startQueuedMs: z.number().nonnegative().optional(),
  /**
   * Queue backend (`--queue`): the attempt's job and the queue workers that took it, in order (more than
   * one when a worker died and another took the job over). Absent for an attempt run in the host.
   */
  queue: z.object({ job: z.string(), workers: z.array(z.string()) }).optional(),
});
/** One attempt of an invocation: its own services, its own runtime directory. */
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

/** One invocation (an agent working one task). */
export const InvocationRecordSchema = z.object({
  id: z.string(),
  agent: z.string(),
  /** The invocation that delegated this one (Main's), or null for Main's own. */
  parent: z.string().nullable(),
  task: z.string(),
  state: InvocationStateSchema,
  /** True when `resume` continued it (from its checkpoint when it had one, else from its start). */
  restarted: z.boolean(),
  /** The directory it worked in (the shared workspace, or its role's worktree when Git-on). */
  workspace: z.string(),
  /** Git-on: the role's branch and the commit made at the end of the invocation (null: nothing changed). */
  git: z.object({ branch: z.string(), commit: z.string().nullable() }).nullable(),
  attempts: z.array(AttemptRecordSchema),
  /** ISO 8601. */
  startedAt: z.string(),
  /** ISO 8601, or null while it runs. */
  finishedAt: z.string().nullable(),
  output: z.string().nullable(),
  error: ErrorRecordSchema.nullable(),
  /** Usage of the invocation's model calls, across its attempts. */
  usage: UsageTotalsSchema.optional(),
  /** `runs/<run>/checkpoints/<id>.json` once the harness saved a checkpoint, else null. */
  checkpoint: z.string().nullable().optional(),
});
/** One invocation (an agent working one task). */
export type InvocationRecord = z.infer<typeof InvocationRecordSchema>;

/** `run.json`: a run's durable state. */
export const RunRecordSchema = z.object({
  /** The record's format: 1. */
  format: z.literal(1),
  run: z.string(),
  project: z.string(),
  status: RunStatusSchema,
  requirement: z.string(),
  /** The absolute workspace. */
  workspace: z.string(),
  /** The accepted version when the run started. */
  version: count,
  /** The run's copy of its script (`runs/<runId>/script.json`), or null. */
  script: z.string().nullable(),
  /** The host working the run now (the last one for a finished run): its pid and its start time. */
  host: z.object({ pid: z.number().int(), start: z.string() }),
  /** ISO 8601. */
  startedAt: z.string(),
  /** ISO 8601, or null while it runs. */
  finishedAt: z.string().nullable(),
  /** Main's final answer. */
  output: z.string().nullable(),
  error: ErrorRecordSchema.nullable(),
  /** How many times `resume` continued the run. */
  resumes: count,
  /** Usage of every model call of the run. */
  usage: UsageTotalsSchema.optional(),
  /** The OpenTelemetry trace id of the run's latest host, when it ran with export on (docs/telemetry.md). */
  traceId: z.string().optional(),
  invocations: z.array(InvocationRecordSchema),
});
/** `run.json`: a run's durable state. */
export type RunRecord = z.infer<typeof RunRecordSchema>;

/** A run whose `run.json` could not be read or is not a run record: `status` reports it, never skips it. */
export const CorruptRunSchema = z.strictObject({
  /** The run id (its directory's name). */
  run: z.string(),
  /** The damaged `run.json`. */
  path: z.string(),
  /** What is wrong with it. */
  message: z.string(),
});
/** A run whose `run.json` could not be read or is not a run record. */
export type CorruptRun = z.infer<typeof CorruptRunSchema>;
