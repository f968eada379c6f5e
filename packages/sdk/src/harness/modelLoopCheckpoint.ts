/**
 * A model loop's checkpoint (SPEC §10.3): its schema, reading it back (checked), writing it in order, and
 * reading the conversation it holds — which tool calls of the last model turn are still unanswered.
 */
import { type ModelMessage, modelMessageSchema } from 'ai';
import { z } from 'zod';
import { SdkError } from '../errors.js';
import type { HarnessInput } from './harness.js';

/** One recorded tool result: its text, and whether it was an error. */
export const RecordedResultSchema = z.strictObject({ text: z.string(), isError: z.boolean() });

/**
 * A model loop's checkpoint: the conversation after the task (AI SDK model messages), the number of
 * model calls made, their summed usage, the results already recorded for the tool calls of the last
 * assistant message when its step is not complete yet, and the final answer once there is one.
 */
export const ModelLoopCheckpointSchema = z.strictObject({
  kind: z.literal('model-loop'),
  version: z.literal(1),
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant', 'tool']) })),
  turn: z.int().min(0),
  usage: z.strictObject({
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    cachedInputTokens: z.number().optional(),
    reasoningTokens: z.number().optional(),
    totalTokens: z.number().optional(),
  }),
  // An array, not an object keyed by call id: a call id comes from the model and may be `__proto__`.
  results: z.array(z.strictObject({ toolCallId: z.string(), text: z.string(), isError: z.boolean() })).optional(),
  final: z.string().optional(),
});
/** A model loop's checkpoint (JSON). */
export type ModelLoopCheckpoint = z.infer<typeof ModelLoopCheckpointSchema>;

/** A tool call of the last assistant message. */
export interface PendingCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** A recorded tool result. */
export type RecordedResult = z.infer<typeof RecordedResultSchema>;

/** The recorded results of a checkpoint, by tool call id. */
export function recordedResults(state: ModelLoopCheckpoint): Map<string, RecordedResult> {
  return new Map((state.results ?? []).map(({ toolCallId, text, isError }) => [toolCallId, { text, isError }]));
}

/** Stores `recorded` in the checkpoint, in a form any call id survives (ids are model-chosen). */
export function storeResults(state: ModelLoopCheckpoint, recorded: ReadonlyMap<string, RecordedResult>): void {
  state.results = [...recorded].map(([toolCallId, result]) => ({ toolCallId, ...result }));
}

/** The index of the last assistant message, or -1. */
export function lastAssistantIndex(messages: ModelLoopCheckpoint['messages']): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'assistant') return i;
  return -1;
}

/** The client-side tool calls of an assistant message. */
export function callsOf(message: ModelMessage | undefined): PendingCall[] {
  if (message === undefined || message.role !== 'assistant' || typeof message.content === 'string') return [];
  const calls: PendingCall[] = [];
  for (const part of message.content) {
    if (part.type === 'tool-call' && part.providerExecuted !== true) {
      calls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
    }
  }
  return calls;
}

/** Whether the last assistant message asked for any tool call (so its turn was not a final answer). */
export function lastAssistantCalls(messages: ModelLoopCheckpoint['messages']): boolean {
  return callsOf(messages[lastAssistantIndex(messages)] as ModelMessage | undefined).length > 0;
}

/**
 * The tool calls of the last assistant message that no later tool message answers yet. Calls the
 * provider ran itself are not pending.
 */
export function pendingCalls(messages: ModelLoopCheckpoint['messages']): PendingCall[] {
  const index = lastAssistantIndex(messages);
  if (index < 0) return [];
  const answered = new Set<string>();
  for (const message of messages.slice(index + 1) as ModelMessage[]) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') answered.add(part.toolCallId);
  }
  return callsOf(messages[index] as ModelMessage).filter((call) => !answered.has(call.toolCallId));
}

/** The state a run starts from: a fresh one, or the given checkpoint, checked. */
export function restoreCheckpoint(agent: string, checkpoint: unknown): ModelLoopCheckpoint {
  if (checkpoint === undefined || checkpoint === null) {
    return { kind: 'model-loop', version: 1, messages: [], turn: 0, usage: {} };
  }
  const parsed = ModelLoopCheckpointSchema.safeParse(withResultsArray(checkpoint));
  // Each message is checked as the AI SDK's model message too: the file can be edited by anything running
  // as the user, and a message of the wrong shape would otherwise fail the loop as `internal`.
  const problems = parsed.success
    ? parsed.data.messages.flatMap((message, index) => {
        const checked = modelMessageSchema.safeParse(message);
        return checked.success ? [] : [`messages.${index}: not a ${message.role} message the AI SDK accepts`];
      })
    : parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top)'}: ${issue.message}`);
  if (problems.length > 0) {
    throw new SdkError(
      'invalid_checkpoint',
      `the checkpoint of agent "${agent}" is not a model-loop checkpoint this version can continue: ${problems
        .slice(0, 3)
        .join('; ')}`,
      {
        remedy: 'the file was changed or written by another harness; start a new run, or restore the checkpoint file',
        data: { agent },
      },
    );
  }
  return parsed.data!;
}

/**
 * A checkpoint written before results became an array (an object keyed by call id) in today's form, so a
 * run cut mid-step by an older version still resumes.
 */
function withResultsArray(checkpoint: unknown): unknown {
  if (typeof checkpoint !== 'object' || checkpoint === null || !Object.hasOwn(checkpoint, 'results')) return checkpoint;
  const { results } = checkpoint as { results: unknown };
  if (typeof results !== 'object' || results === null || Array.isArray(results)) return checkpoint;
  const entries = Object.entries(results).map(([toolCallId, result]) =>
    typeof result === 'object' && result !== null ? { toolCallId, ...result } : result,
  );
  return { ...checkpoint, results: entries };
}

/**
 * Saves a model loop's checkpoints behind the conversation: a save returns at once and its write overlaps
 * the next model call, instead of holding the loop up for a file sync. The loop waits only where it
 * matters ({@link CheckpointSaver.durable}): before a step's tool calls run, the previous step is durable,
 * so a host crash repeats at most the tool calls of the step it interrupted; and before the loop ends,
 * everything is. The harness input serializes a state when it is saved, so the loop may change the object
 * right after.
 */
export class CheckpointSaver {
  /** The latest save and the latest save of a completed step (its results recorded). */
  private latest: Promise<void> = Promise.resolve();
  private step: Promise<void> = Promise.resolve();
  /** The first save that failed: every later call throws it. */
  private failure: { error: unknown } | undefined;

  constructor(private readonly input: HarnessInput) {}

  /**
   * Saves `state` as it is now. `completesStep`: the state holds a step whose tool results are all
   * recorded (or the final answer); otherwise it holds some of a step's results, kept so a cut step does
   * not run them again. Throws the error of an earlier save that failed.
   */
  save(state: ModelLoopCheckpoint, completesStep: boolean): void {
    this.throwIfFailed();
    const turn = state.turn;
    const write = this.input.saveCheckpoint(state).then(
      // The step it holds is the turn: that model call's response, and as many of its results as recorded.
      () => this.input.report({ kind: 'checkpoint', step: turn }),
      (error: unknown) => {
        this.failure ??= { error };
      },
    );
    this.latest = write;
    if (completesStep) this.step = write;
  }

  /**
   * Resolves once what was saved is durable: `'step'`, the latest completed step; `'all'`, every save.
   * Throws the error of a save that failed.
   */
  async durable(what: 'step' | 'all'): Promise<void> {
    await (what === 'step' ? this.step : this.latest);
    this.throwIfFailed();
  }

  /** Throws the error of a save that failed, if one did (known once its write has failed). */
  throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure.error;
  }
}
