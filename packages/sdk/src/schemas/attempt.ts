/**
 * The two documents of the attempt seam (docs/decisions/attempt-seam.md): the {@link AttemptSpec} every
 * attempt of an invocation runs from, and the {@link AttemptOutcome} every attempt ends with, whatever runs
 * it — the host itself (a function call) or a queue worker (a BullMQ job and its result). A queue worker
 * parses a job with {@link AttemptSpecSchema} (a failed parse is `invalid_job`); the coordinator parses a
 * worker's result with {@link AttemptOutcomeSchema} (a failed parse is `invalid_job` too, the code of a
 * forged result). Both cross a machine boundary through Redis, so neither is trusted before it is parsed.
 *
 * Objects are not strict: a document written by a newer SDK with more fields still passes, and the extra
 * fields are dropped from the parsed value (a result of an earlier worker carried `position`: dropped).
 * What cannot be checked without the coordinator's context (the result's events belong to the job's own
 * invocation, its branch is the role's own, its checkpoint names the job's run) is checked by the engine
 * after the parse.
 */
import * as z from 'zod';
import { PATH_ID_RULE, isPathId } from './pathId.js';
import { CheckpointFileSchema } from './checkpoints.js';
import { count, UsageTotalsSchema } from './records.js';
import { AttemptRecordSchema, InvocationRecordSchema } from './runRecord.js';
import { AttemptEndSchema, InvocationStateSchema } from './states.js';

/** The version of the spec and outcome shapes; a worker refuses a spec of another. */
export const ATTEMPT_FORMAT = 1;

/**
 * An id used as one directory name: a run, an invocation (the store's rule, `pathId.ts`). Anything else is
 * `unsafe_path` (the issue says so in `params.code`), never a path.
 */
const PathId = z.string().refine(isPathId, { params: { code: 'unsafe_path' }, error: `must be ${PATH_ID_RULE}` });

/** The Git-on part of an invocation's record: the role's branch and its commit, or null (Git-off). */
const GitSchema = InvocationRecordSchema.shape.git;

/**
 * The invocation an attempt belongs to, as the coordinator recorded it in `run.json` before the attempt
 * (the run record's own schema; its id is also a path component here).
 */
const AttemptInvocationSchema = InvocationRecordSchema.extend({ id: PathId });

/** What the coordinator's journal holds of the invocation's steps (a checkpoint is checked against it). */
const JournaledStepsSchema = z.object({
  responses: z.array(z.string()),
  calls: z.array(z.object({ callId: z.string(), tool: z.string(), resultDigest: z.string() })),
});

/**
 * A task a service accepted for a call of the invocation (an MCP task, `tool.task_accepted`) that no one saw
 * answered: a call the attempt's harness makes again with the same tool and arguments re-attaches to it.
 */
const OpenTaskSchema = z.object({
  /** The surface name of the tool. */
  tool: z.string(),
  /** sha256 (hex) of the canonical JSON of the call's arguments. */
  argumentsDigest: z.string(),
  taskId: z.string(),
  era: z.enum(['legacy', 'modern']),
});

/** Engine settings an attempt takes with it (milliseconds; the runner's defaults when absent). */
const AttemptOptionsSchema = z.object({
  startupBudgetMs: z.number().optional(),
  graceMs: z.number().optional(),
  forwardTimeoutMs: z.number().optional(),
});

/**
 * The one input of an attempt. Everything a runner needs that is data travels here; what it needs that
 * is a capability (its process registry, Main's delegation) is the runner's own.
 */
export const AttemptSpecSchema = z.object({
  format: z.literal(ATTEMPT_FORMAT),
  run: PathId,
  project: z.string(),
  /** The run's workspace (Git-off: a path every runner must see). */
  workspace: z.string(),
  /** The invocation as the coordinator records it, before this attempt. */
  invocation: AttemptInvocationSchema,
  /** True for an attempt started by `resume`. */
  restarted: z.boolean(),
  /** The workflow version in force: its definitions travel with their digests (the runner recomputes them). */
  version: z.object({
    version: z.number().int().positive(),
    digests: z.record(z.string(), z.string()),
    /** The workflow document, validated by the runner with the workflow's own validator. */
    workflow: z.unknown(),
  }),
  /**
   * The digests of the version whose definitions Main proposed (first stored by a version Main accepted),
   * read from the coordinator's history: a runner elsewhere has none, and `sandbox: "auto"` sandboxes these.
   */
  mainProposed: z.array(z.string()),
  /**
   * The invocation's checkpoint file as stored (`runs/<run>/checkpoints/<invocation>.json`), or null. Its
   * shape is the checkpoint schema's (owned beside this file); here it passes as it is, and the runner
   * checks that it names this run and invocation before handing its state to the harness.
   */
  checkpoint: z.unknown().nullable(),
  /** What the coordinator journaled of the invocation's steps (absent: nothing journaled). */
  journaled: JournaledStepsSchema.optional(),
  /**
   * The tasks the coordinator's journal holds as accepted for the invocation and never answered (absent:
   * none): whoever runs the attempt re-attaches a replayed call to its task instead of calling the tool again.
   */
  openTasks: z.array(OpenTaskSchema).optional(),
  /** The run's script (scripted harness), or null: run-level harness data, like the positions below. */
  script: z.unknown(),
  /** Every agent's position in the script when the attempt starts, or null without a script. */
  positions: z.record(z.string(), count).nullable(),
  options: AttemptOptionsSchema,
  /** Git-on: the run's git remote (URL or path) a runner elsewhere fetches the role's branch from and pushes to. */
  git: z.object({ remote: z.string() }).nullable(),
});

/** The usage of the attempt's model calls (what it adds to the invocation's and the run's totals). */
const UsageSchema = UsageTotalsSchema.partial();

/** The one result of an attempt. */
export const AttemptOutcomeSchema = z.object({
  format: z.literal(ATTEMPT_FORMAT),
  /** Who ran it: `<hostname>:<pid>` of the host or the queue worker. */
  worker: z.string(),
  /** The attempt as it ended. */
  attempt: AttemptRecordSchema.extend({ outcome: AttemptEndSchema }),
  /** False for a failure another attempt would only repeat. */
  retryable: z.boolean(),
  /**
   * The attempt's events, in order, with their times. Each is checked against its type and the job's
   * own ids by the engine (`engine/jobEvents.ts`) before any reaches the journal.
   */
  events: z.array(z.unknown()),
  /** The invocation's state when the attempt ended. */
  state: InvocationStateSchema,
  output: z.string().nullable(),
  git: GitSchema,
  /** The directory the invocation worked in. */
  workspace: z.string(),
  /** Usage of this attempt's model calls: the sum of its `model.called` events. */
  usage: UsageSchema,
  /**
   * The invocation's checkpoint file after the attempt (the scripted harness's position included, like any
   * harness's state), or null. Passed as it is (the checkpoint schema is owned beside this file); the
   * engine checks it names the job's run and invocation.
   */
  checkpoint: CheckpointFileSchema.nullable(),
});

/** The one input of an attempt. */
export type AttemptSpec = z.infer<typeof AttemptSpecSchema>;
/** The one result of an attempt. */
export type AttemptOutcome = z.infer<typeof AttemptOutcomeSchema>;
/** The engine settings an attempt takes with it. */
export type AttemptOptions = z.infer<typeof AttemptOptionsSchema>;
