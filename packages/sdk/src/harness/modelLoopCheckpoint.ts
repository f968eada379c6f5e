/**
 * A model loop's checkpoint (SPEC §10.3): its schema, reading it back (checked), writing it in order, and
 * reading the conversation it holds — which tool calls of the last model turn are still unanswered.
 */
import { type ModelMessage, modelMessageSchema } from 'ai';
import { SdkError } from '../errors.js';
import { describeIssue } from '../schemas/parseRecord.js';
import type { HarnessInput, JournaledSteps } from './harness.js';
import { type ModelLoopCheckpoint, ModelLoopCheckpointSchema, type RecordedResult } from './modelLoopLight.js';
import { argumentsRefused, isArgumentsObject } from './modelTools.js';
import { recordedOfOutput, responseDigest, resultDigest } from './stepDigests.js';

// The checkpoint's schema is in `schemas/checkpoints.ts` (re-exported by `modelLoopLight.ts`, which loads no AI SDK).
export { ModelLoopCheckpointSchema, RecordedResultSchema } from './modelLoopLight.js';
export type { ModelLoopCheckpoint, RecordedResult } from './modelLoopLight.js';

/** A tool call of the last assistant message. */
export interface PendingCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

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

/**
 * The state a run starts from: a fresh one, or the given checkpoint, checked — its shape, and then each
 * step it holds against what the host journaled ({@link checkJournaled}).
 */
export function restoreCheckpoint(agent: string, checkpoint: unknown, journaled: JournaledSteps): ModelLoopCheckpoint {
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
    : parsed.error.issues.map((issue) => describeIssue(issue));
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
  const state = parsed.data!;
  checkJournaled(agent, state, journaled);
  return state;
}

/**
 * Believes a checkpoint's steps only where the host journaled them (SPEC §10.3): the checkpoint file can be
 * rewritten by anything running as the user, an unsandboxed service included, and what it holds goes to
 * the model as the conversation so far. Each assistant message must be the response of a journaled model
 * call (`model.called`'s `responseDigest`); each tool result, in a tool message or among a cut step's
 * recorded results, must be a journaled completion of that call id and tool with that result
 * (`tool.called`'s `resultDigest`, or a call the provider library answered itself); a recorded result must
 * answer a call of the step still open; a final answer must be the text of the last journaled response;
 * the turn count cannot be lower than the responses it holds. A call of the open step with no recorded
 * result is still to run, and runs on resume as before. Anything else is `invalid_checkpoint`, naming the
 * call.
 */
function checkJournaled(agent: string, state: ModelLoopCheckpoint, journaled: JournaledSteps): void {
  const matches = (callId: string, tool: string, recorded: RecordedResult | undefined) =>
    recorded !== undefined &&
    (journaled.calls.get(callId) ?? []).some(
      (entry) => entry.tool === tool && entry.resultDigest === resultDigest(recorded),
    );
  let assistants = 0;
  for (const [index, message] of (state.messages as ModelMessage[]).entries()) {
    if (message.role === 'assistant') {
      assistants += 1;
      if (journaled.responses.has(responseDigest(message))) continue;
      const call = callsOf(message)[0];
      throw forged(
        agent,
        call === undefined
          ? `messages.${index} is a model response the host never journaled`
          : `messages.${index} asks for tool call ${JSON.stringify(call.toolCallId)} (${call.toolName}) in a model response the host never journaled`,
        call,
      );
    }
    if (message.role !== 'tool') {
      throw forged(agent, `messages.${index} is a ${message.role} message, which a model loop never records`);
    }
    for (const part of message.content) {
      if (part.type !== 'tool-result') {
        throw forged(agent, `messages.${index} holds a ${part.type} part, which a model loop never records`);
      }
      const call = { toolCallId: part.toolCallId, toolName: part.toolName };
      const recorded = recordedOfOutput(part.output);
      if (!matches(part.toolCallId, part.toolName, recorded) && !refusedArguments(state, call, recorded)) {
        throw forged(
          agent,
          `messages.${index} holds a result for tool call ${JSON.stringify(part.toolCallId)} (${part.toolName}) that the host never journaled`,
          call,
        );
      }
    }
  }
  const open = new Map(pendingCalls(state.messages).map((call) => [call.toolCallId, call]));
  for (const { toolCallId, text, isError } of state.results ?? []) {
    const call = open.get(toolCallId);
    const recorded = { text, isError };
    if (
      call === undefined ||
      (!matches(toolCallId, call.toolName, recorded) && !refusedArguments(state, call, recorded))
    ) {
      throw forged(
        agent,
        `results holds a result for tool call ${JSON.stringify(toolCallId)}${call === undefined ? ', which the open step does not ask for,' : ` (${call.toolName})`} that the host never journaled`,
        call ?? { toolCallId, toolName: undefined },
      );
    }
  }
  if (state.final !== undefined) {
    const last = state.messages.at(-1) as ModelMessage | undefined;
    const answer =
      last?.role === 'assistant' && callsOf(last).length === 0
        ? textOf(last)
        : journaled.responses.has(responseDigest(null))
          ? ''
          : undefined;
    if (state.final !== answer) throw forged(agent, 'its final answer is not the last journaled model response');
  }
  if (state.turn < assistants) {
    throw forged(agent, `it counts ${state.turn} model calls but holds ${assistants} model responses`);
  }
}

/**
 * Whether `recorded` is the answer a model loop gives without calling the surface (arguments that are not
 * a JSON object, so nothing was journaled): checked by giving it again.
 */
function refusedArguments(
  state: ModelLoopCheckpoint,
  call: { toolCallId: string; toolName: string },
  recorded: RecordedResult | undefined,
): boolean {
  if (recorded === undefined) return false;
  const asked = (state.messages as ModelMessage[])
    .flatMap((m) => callsOf(m))
    .find((c) => c.toolCallId === call.toolCallId);
  if (asked === undefined || asked.toolName !== call.toolName || isArgumentsObject(asked.input)) return false;
  const refused = argumentsRefused(call.toolName);
  return refused.text === recorded.text && refused.isError === recorded.isError;
}

/** The text of an assistant message, as the AI SDK gives it as a step's `text` (its text parts joined). */
function textOf(message: ModelMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function forged(agent: string, what: string, call?: { toolCallId: string; toolName: string | undefined }): SdkError {
  return new SdkError(
    'invalid_checkpoint',
    `the checkpoint of agent "${agent}" does not match the run's journal: ${what}`,
    {
      remedy:
        'the checkpoint file was changed by something other than this host (a service can write the data dir unless it is sandboxed): remove the checkpoint file to continue the invocation from its start (its tool calls then run again), or restore it',
      data: {
        agent,
        ...(call === undefined ? {} : { toolCallId: call.toolCallId }),
        ...(call?.toolName === undefined ? {} : { tool: call.toolName }),
      },
    },
  );
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
