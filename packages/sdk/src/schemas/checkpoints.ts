/**
 * Invocation checkpoints (SPEC §10.3), `runs/<runId>/checkpoints/<invocationId>.json`: the file the engine
 * wraps around a harness's state, and the state of each harness the SDK ships. Written as plain JSON
 * (`engine/checkpoints.ts`); read back and checked here. A file or a state that does not parse is
 * `invalid_checkpoint`.
 */
import * as z from 'zod';
import { TokenCountsSchema, count, sha256Hex } from './records.js';

/** The file as stored: the harness's state wrapped with what it belongs to. */
export const CheckpointFileSchema = z.object({
  /** The file's format: 1. */
  format: z.literal(1),
  run: z.string(),
  invocation: z.string(),
  agent: z.string(),
  /** The attempt that saved it. */
  attempt: count,
  /** ISO 8601. */
  savedAt: z.string(),
  /** The harness's own state (JSON), handed back to it as `HarnessInput.checkpoint`. */
  state: z.unknown(),
});
/** The checkpoint file as stored: the harness's state wrapped with what it belongs to. */
export type CheckpointFile = z.infer<typeof CheckpointFileSchema>;

/**
 * The first line of an invocation's checkpoint log (`runs/<runId>/checkpoints/<invocationId>.log`), which
 * holds the states saved after its checkpoint file was written, one appended record each
 * (`engine/checkpointLog.ts`). The log continues the file whose bytes have the digest `base`: once the file
 * is rewritten (folded, or by the end of the attempt) the log no longer applies and is ignored.
 */
export const CheckpointLogHeaderSchema = z.strictObject({
  /** The log's format: 1. */
  format: z.literal(1),
  /** sha256 (hex) of the bytes of the checkpoint file this log continues. */
  base: sha256Hex,
});
/** The first line of a checkpoint log. */
export type CheckpointLogHeader = z.infer<typeof CheckpointLogHeaderSchema>;

/**
 * What a checkpoint log record says besides the state's text, which follows it on the line: the state's
 * JSON is the previous record's (for the first record, nothing) cut to its first `keep` characters (UTF-16
 * code units), then the text after this.
 */
export const CheckpointLogRecordSchema = z.strictObject({
  /** How many characters of the previous state's JSON text the new one starts with. */
  keep: count,
  /** The attempt that saved it. */
  attempt: count,
  /** ISO 8601. */
  savedAt: z.string(),
});
/** What a checkpoint log record says besides the state's text. */
export type CheckpointLogRecord = z.infer<typeof CheckpointLogRecordSchema>;

/** One recorded tool result of a model loop: its text, and whether it was an error. */
export const RecordedResultSchema = z.strictObject({ text: z.string(), isError: z.boolean() });

/**
 * A model loop's checkpoint: the conversation after the task (AI SDK model messages), the number of
 * model calls made, their summed usage, the results already recorded for the tool calls of the last
 * assistant message when its step is not complete yet, and the final answer once there is one. Each
 * message is checked again as the AI SDK's model message by the harness (`harness/modelLoopCheckpoint.ts`).
 */
export const ModelLoopCheckpointSchema = z.strictObject({
  kind: z.literal('model-loop'),
  version: z.literal(1),
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant', 'tool']) })),
  turn: z.int().min(0),
  usage: TokenCountsSchema.strict(),
  // An array, not an object keyed by call id: a call id comes from the model and may be `__proto__`.
  results: z.array(z.strictObject({ toolCallId: z.string(), text: z.string(), isError: z.boolean() })).optional(),
  final: z.string().optional(),
});
/** A model loop's checkpoint (JSON). */
export type ModelLoopCheckpoint = z.infer<typeof ModelLoopCheckpointSchema>;

/**
 * The scripted harness's checkpoint of one invocation: where its agent is in its list, the results it
 * recorded (for `{{N}}`), and every agent's position when it was saved (Main's restore puts its workers
 * back where they were, so a worker Main delegated and recorded is not delegated again).
 */
export const ScriptCheckpointSchema = z.strictObject({
  harness: z.literal('scripted'),
  /** The index of the agent's next step. */
  position: z.int().min(0),
  /** The text of each call result of this invocation so far. */
  results: z.array(z.string()),
  /** Every agent's position (agent → index of its next step) when it was saved. */
  positions: z.record(z.string(), z.int().min(0)),
});
/** The scripted harness's checkpoint of one invocation. */
export type ScriptCheckpoint = z.infer<typeof ScriptCheckpointSchema>;
