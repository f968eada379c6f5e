/**
 * The model-loop harnesses `openai` (Chat Completions or Responses), `anthropic` and `gemini` (SPEC
 * §10.2): the SDK runs the tool loop itself. Each turn is one model call through the AI SDK (which speaks
 * the provider's wire protocol); the tool calls it asks for run through the invocation's surface,
 * concurrently within each service's in-flight cap, and their results (errors included) go back to the
 * model. The loop owns what the AI SDK's own multi-step loop would hide: a retry policy that reports each
 * retry, a timeout per request that does not cover tool calls, and a checkpoint after each model
 * response and each recorded tool result, so `resume` never calls a recorded tool again (SPEC §10.3).
 * This file is the loop; one model call is `modelTurn.ts`, the tool runner `modelTools.ts`, and the
 * checkpoint `modelLoopCheckpoint.ts`.
 */
import type { ModelMessage, ToolSet } from 'ai';
import type { Surface } from '../surface/surface.js';
import { SdkError } from '../errors.js';
import type { AgentHarness, HarnessInput, HarnessOutput } from './harness.js';
import {
  CheckpointSaver,
  type ModelLoopCheckpoint,
  type RecordedResult,
  callsOf,
  lastAssistantCalls,
  lastAssistantIndex,
  pendingCalls,
  recordedResults,
  storeResults,
  restoreCheckpoint,
} from './modelLoopCheckpoint.js';
import { PerKeyLimiter, callTool, toolResultPart, toolSet } from './modelTools.js';
import { addUsage, callModel, primeMessageSchema, throwIfCancelled } from './modelTurn.js';
import { type FailureContext, type ModelLoopConfig, createEndpoint, readApiKey } from './modelProviders.js';
import { type ModelLoopOptions, DEFAULT_MODEL_LOOP_OPTIONS } from './modelLoopLight.js';

export type { ModelLoopConfig } from './modelProviders.js';
export { type ModelLoopCheckpoint, ModelLoopCheckpointSchema } from './modelLoopCheckpoint.js';
export { resultAsText } from './modelTools.js';

export { type ModelLoopOptions, DEFAULT_MODEL_LOOP_OPTIONS } from './modelLoopLight.js';

/** The harness of `agent` for a model-loop configuration (defaults filled by the workflow schema). */
export function createModelLoopHarness(
  agent: string,
  config: ModelLoopConfig,
  options: ModelLoopOptions = {},
): AgentHarness {
  const settings = { ...DEFAULT_MODEL_LOOP_OPTIONS, ...definedOnly(options) };
  // The AI SDK logs provider warnings with console.info/warn, which would land in `run --json`'s stdout
  // or a stdio face. Off unless the embedding program chose its own logger.
  const global = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
  if (global.AI_SDK_LOG_WARNINGS === undefined) global.AI_SDK_LOG_WARNINGS = false;
  primeMessageSchema();
  return { run: (input) => runModelLoop(agent, config, settings, input) };
}

async function runModelLoop(
  agent: string,
  config: ModelLoopConfig,
  settings: Required<ModelLoopOptions>,
  input: HarnessInput,
): Promise<HarnessOutput> {
  const apiKey = readApiKey(agent, config, input.hostEnv);
  const endpoint = createEndpoint(agent, config, apiKey);
  const failure: FailureContext = { agent, config, label: endpoint.label, apiKey };
  const state = restoreCheckpoint(agent, input.checkpoint, input.journaled);
  if (state.final !== undefined) return { output: state.final };

  const saver = new CheckpointSaver(input);

  try {
    return await converse(agent, config, settings, endpoint, failure, input, state, saver);
  } finally {
    // No checkpoint is written after `run` has returned, whichever way it ends; a failed save was
    // already thrown (or an earlier error wins).
    await saver.durable('all').catch(() => {});
  }
}

/** The conversation's loop: a model turn, its tool calls, until the final answer. */
async function converse(
  agent: string,
  config: ModelLoopConfig,
  settings: Required<ModelLoopOptions>,
  endpoint: ReturnType<typeof createEndpoint>,
  failure: FailureContext,
  input: HarnessInput,
  state: ModelLoopCheckpoint,
  saver: CheckpointSaver,
): Promise<HarnessOutput> {
  const current = offeredTools(input);
  const limiter = new PerKeyLimiter(settings.maxParallelCallsPerService);
  const system = [input.instructions, config.system ?? ''].filter((text) => text.trim() !== '').join('\n\n');
  for (;;) {
    throwIfCancelled(input.signal);
    // A checkpoint that could not be written ends the loop before it spends another model call.
    saver.throwIfFailed();
    // A step whose tool calls are not all answered yet (a checkpoint taken mid-step) completes first.
    const pending = pendingCalls(state.messages);
    if (pending.length > 0) {
      // The previous step is durable before this one's calls run: a crash repeats only this step's calls.
      await saver.durable('step');
      const recorded = recordedResults(state);
      // Every call settles before the harness does (a cancelled run cancels them all): no checkpoint is
      // written after `run` has returned.
      const settled = await Promise.allSettled(
        pending.map(async (call) => {
          if (recorded.has(call.toolCallId)) return;
          const result = await limiter.run(current().serviceOf.get(call.toolName) ?? call.toolName, () =>
            callTool(input, call),
          );
          recorded.set(call.toolCallId, result);
          storeResults(state, recorded);
          // A result among several is kept at once; the last one is kept with the step, just below.
          if (recorded.size < pending.length) saver.save(state, false);
        }),
      );
      const failed = settled.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
      const parts = pending.map((call) => toolResultPart(call, recorded.get(call.toolCallId) as RecordedResult));
      const last = state.messages.at(-1) as ModelMessage;
      if (last.role === 'tool') {
        // Calls the AI SDK already answered (unknown tool, arguments not JSON) left a tool message: join
        // it, every result in the order of the calls.
        const order = callsOf(state.messages[lastAssistantIndex(state.messages)] as ModelMessage).map(
          (c) => c.toolCallId,
        );
        const position = (part: (typeof last.content)[number]) =>
          part.type === 'tool-result' ? order.indexOf(part.toolCallId) : order.length;
        last.content = [...last.content, ...parts].sort((a, b) => position(a) - position(b));
      } else state.messages.push({ role: 'tool', content: parts });
      delete state.results;
      saver.save(state, true);
      continue;
    }

    if (state.turn >= config.maxTurns) {
      throw new SdkError(
        'max_turns_reached',
        `agent "${agent}" made ${state.turn} model calls (maxTurns ${config.maxTurns}) without a final answer`,
        {
          remedy: `raise agents.${agent}.harness.maxTurns, or make the task or instructions narrower`,
          data: { agent, maxTurns: config.maxTurns, turns: state.turn },
        },
      );
    }
    state.turn += 1;
    const result = await callModel(agent, config, settings, endpoint, failure, input, {
      system,
      messages: [{ role: 'user', content: input.task }, ...(state.messages as ModelMessage[])],
      tools: current().tools,
      turn: state.turn,
    });
    addUsage(state.usage, result.usage);
    state.messages.push(...(result.response.messages as ModelLoopCheckpoint['messages']));
    if (!lastAssistantCalls(state.messages)) {
      state.final = result.text;
      saver.save(state, true);
      await saver.durable('all');
      return { output: result.text };
    }
    // Tool calls to run (the next pass), or only calls the AI SDK already answered as invalid: the
    // model sees those errors on its next turn. Not saved on its own: the step is, once its results are
    // in (a crash before that asks the model again; a result among several is saved with the response).
  }
}

/**
 * The tools offered follow the surface: a service's list change (a tool added or taken away while the
 * invocation runs) reaches the model at its next turn. Rebuilt only when the surface's catalog changed.
 */
function offeredTools(input: HarnessInput): () => { tools: ToolSet; serviceOf: Map<string, string> } {
  let offered: { from: Surface['tools']; tools: ToolSet; serviceOf: Map<string, string> } | undefined;
  return () => {
    if (offered?.from !== input.surface.tools) {
      offered = {
        from: input.surface.tools,
        tools: toolSet(input),
        serviceOf: new Map(input.surface.routes.filter((r) => r.kind === 'tool').map((r) => [r.name, r.service])),
      };
    }
    return offered;
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
