/**
 * The model-loop harnesses `openai` (Chat Completions or Responses), `anthropic` and `gemini` (SPEC
 * §10.2): the SDK runs the tool loop itself. Each turn is one model call through the AI SDK (which speaks
 * the provider's wire protocol); the tool calls it asks for run through the invocation's surface,
 * concurrently within each service's in-flight cap, and their results (errors included) go back to the
 * model. The loop owns what the AI SDK's own multi-step loop would hide: a retry policy that reports each
 * retry, a timeout per request that does not cover tool calls, and a checkpoint after each model
 * response and each recorded tool result, so `resume` never calls a recorded tool again (SPEC §10.3).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult } from '@modelcontextprotocol/server';
import {
  type GenerateTextResult,
  type ModelMessage,
  type Tool,
  type ToolResultPart,
  type ToolSet,
  generateText,
  jsonSchema,
} from 'ai';
import { z } from 'zod';
import { DEFAULT_FORWARD_LIMITS } from '../bridge/serviceGate.js';
import { SdkError, toSdkError } from '../errors.js';
import type { AgentHarness, HarnessInput, HarnessOutput, TokenUsage } from './harness.js';
import {
  type FailureContext,
  type ModelEndpoint,
  type ModelLoopConfig,
  classifyFailure,
  createEndpoint,
  readApiKey,
} from './modelProviders.js';

export type { ModelLoopConfig } from './modelProviders.js';

/** Tunables of the loop that are not workflow options (tests shorten them). */
export interface ModelLoopOptions {
  /** Retries of one model call after a 429, 408, 409, 5xx, lost connection or request timeout. Default 4. */
  maxRetries?: number;
  /** Milliseconds before the first retry when the provider names no delay; doubles each retry. Default 1,000 (1 s). */
  initialRetryDelayMs?: number;
  /** Milliseconds any one wait between attempts lasts at most, `retry-after` included. Default 60,000 (60 s). */
  maxRetryDelayMs?: number;
  /** Tool calls of one model turn in flight per service at once; more wait their turn. Default 4 (the surface's cap). */
  maxParallelCallsPerService?: number;
}

/** The defaults of {@link ModelLoopOptions}. */
export const DEFAULT_MODEL_LOOP_OPTIONS: Readonly<Required<ModelLoopOptions>> = Object.freeze({
  maxRetries: 4,
  initialRetryDelayMs: 1_000,
  maxRetryDelayMs: 60_000,
  maxParallelCallsPerService: DEFAULT_FORWARD_LIMITS.maxInFlight,
});

/** One recorded tool result: its text, and whether it was an error. */
const RecordedResultSchema = z.strictObject({ text: z.string(), isError: z.boolean() });

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
  results: z.record(z.string(), RecordedResultSchema).optional(),
  final: z.string().optional(),
});
/** A model loop's checkpoint (JSON). */
export type ModelLoopCheckpoint = z.infer<typeof ModelLoopCheckpointSchema>;

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
  const state = restore(agent, input.checkpoint);
  if (state.final !== undefined) return { output: state.final };

  const tools = toolSet(input);
  const serviceOf = new Map(input.surface.routes.filter((r) => r.kind === 'tool').map((r) => [r.name, r.service]));
  const limiter = new PerKeyLimiter(settings.maxParallelCallsPerService);
  const system = [input.instructions, config.system ?? ''].filter((text) => text.trim() !== '').join('\n\n');
  const saver = new CheckpointSaver(input);

  for (;;) {
    throwIfCancelled(input.signal);
    // A step whose tool calls are not all answered yet (a checkpoint taken mid-step) completes first.
    const pending = pendingCalls(state.messages);
    if (pending.length > 0) {
      const recorded = state.results ?? {};
      state.results = recorded;
      // Every call settles before the harness does (a cancelled run cancels them all): no checkpoint is
      // written after `run` has returned.
      const settled = await Promise.allSettled(
        pending.map(async (call) => {
          if (Object.hasOwn(recorded, call.toolCallId)) return;
          const result = await limiter.run(serviceOf.get(call.toolName) ?? call.toolName, () =>
            callTool(input, call.toolName, call.input),
          );
          recorded[call.toolCallId] = result;
          await saver.save(state);
        }),
      );
      const failed = settled.find((outcome) => outcome.status === 'rejected');
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
      const parts = pending.map((call) => toolResultPart(call, recorded[call.toolCallId] as RecordedResult));
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
      await saver.save(state);
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
      tools,
      turn: state.turn,
    });
    addUsage(state.usage, result.usage);
    state.messages.push(...(result.response.messages as ModelLoopCheckpoint['messages']));
    if (!lastAssistantCalls(state.messages)) {
      state.final = result.text;
      await saver.save(state);
      return { output: result.text };
    }
    // Tool calls to run (the next pass), or only calls the AI SDK already answered as invalid: the
    // model sees those errors on its next turn.
    await saver.save(state);
  }
}

/** A tool call of the last assistant message. */
interface PendingCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** A recorded tool result. */
type RecordedResult = z.infer<typeof RecordedResultSchema>;

/** The index of the last assistant message, or -1. */
function lastAssistantIndex(messages: ModelLoopCheckpoint['messages']): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'assistant') return i;
  return -1;
}

/** The client-side tool calls of an assistant message. */
function callsOf(message: ModelMessage | undefined): PendingCall[] {
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
function lastAssistantCalls(messages: ModelLoopCheckpoint['messages']): boolean {
  return callsOf(messages[lastAssistantIndex(messages)] as ModelMessage | undefined).length > 0;
}

/**
 * The tool calls of the last assistant message that no later tool message answers yet. Calls the
 * provider ran itself are not pending.
 */
function pendingCalls(messages: ModelLoopCheckpoint['messages']): PendingCall[] {
  const index = lastAssistantIndex(messages);
  if (index < 0) return [];
  const answered = new Set<string>();
  for (const message of messages.slice(index + 1) as ModelMessage[]) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) if (part.type === 'tool-result') answered.add(part.toolCallId);
  }
  return callsOf(messages[index] as ModelMessage).filter((call) => !answered.has(call.toolCallId));
}

/** Calls one surface tool; every failure but cancellation becomes an error result for the model. */
async function callTool(input: HarnessInput, name: string, args: unknown): Promise<RecordedResult> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return { text: `the arguments of ${name} must be a JSON object`, isError: true };
  }
  try {
    const result = await input.surface.callTool(name, args as Record<string, unknown>, { signal: input.signal });
    return { text: resultAsText(result), isError: result.isError === true };
  } catch (error) {
    throwIfCancelled(input.signal);
    // An unknown tool, or a JSON-RPC error the service answered: the model reads the message.
    return { text: error instanceof Error ? error.message : String(error), isError: true };
  }
}

/**
 * The text a model sees for a tool result: its text items joined by newlines; other items (images,
 * audio, resources) as a one-line note; the structured content as JSON when there is no text.
 */
export function resultAsText(result: CallToolResult): string {
  const parts: string[] = [];
  for (const item of result.content ?? []) {
    if (item.type === 'text') parts.push(item.text);
    else if (item.type === 'resource_link') parts.push(`[resource ${item.uri}]`);
    else if (item.type === 'resource') {
      const resource = item.resource as { uri: string; text?: unknown };
      parts.push(typeof resource.text === 'string' ? resource.text : `[resource ${resource.uri}]`);
    } else parts.push(`[${item.type} content, ${'mimeType' in item ? String(item.mimeType) : 'no type'}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

function toolResultPart(call: PendingCall, result: RecordedResult): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: result.isError ? { type: 'error-text', value: result.text } : { type: 'text', value: result.text },
  };
}

/** The surface's tools as function tools without `execute`: the loop runs them itself. */
function toolSet(input: HarnessInput): ToolSet {
  // A null-prototype table: a tool named "constructor" must not meet Object.prototype.
  const tools = Object.create(null) as Record<string, Tool>;
  for (const tool of input.surface.tools) {
    tools[tool.name] = {
      ...(tool.description === undefined ? {} : { description: tool.description }),
      inputSchema: jsonSchema(tool.inputSchema as Parameters<typeof jsonSchema>[0]),
    } as Tool;
  }
  return tools;
}

interface CallRequest {
  system: string;
  messages: ModelMessage[];
  tools: ToolSet;
  turn: number;
}

/** One model call with its retries; reports `model.called` and each `model.retry`. */
async function callModel(
  agent: string,
  config: ModelLoopConfig,
  settings: Required<ModelLoopOptions>,
  endpoint: ModelEndpoint,
  failure: FailureContext,
  input: HarnessInput,
  request: CallRequest,
): Promise<GenerateTextResult<ToolSet, never>> {
  let lastMessage = '';
  let lastStatus: number | undefined;
  for (let attempt = 0; ; attempt++) {
    throwIfCancelled(input.signal);
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), config.requestTimeoutMs);
    timer.unref();
    const started = performance.now();
    let retryAfter: number | undefined;
    try {
      const result = (await generateText({
        model: endpoint.model,
        ...(request.system === '' ? {} : { system: request.system }),
        messages: request.messages,
        tools: request.tools,
        // The loop retries (and reports each retry) itself.
        maxRetries: 0,
        abortSignal: AbortSignal.any([input.signal, timeout.signal]),
        ...(config.maxOutputTokens === undefined ? {} : { maxOutputTokens: config.maxOutputTokens }),
        ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
        providerOptions: endpoint.providerOptions,
      })) as unknown as GenerateTextResult<ToolSet, never>;
      input.report({
        kind: 'model.called',
        turn: request.turn,
        model: config.model,
        usage: toTokenUsage(result.usage),
        durationMs: Math.round(performance.now() - started),
        finishReason: result.finishReason,
      });
      return result;
    } catch (error) {
      throwIfCancelled(input.signal);
      if (timeout.signal.aborted) {
        lastStatus = undefined;
        lastMessage = `${endpoint.label} did not answer within ${config.requestTimeoutMs} ms (requestTimeoutMs)`;
      } else {
        const verdict = classifyFailure(error, failure);
        if (!verdict.retry) throw verdict.error;
        lastStatus = verdict.status;
        lastMessage = verdict.message;
        retryAfter = verdict.retryAfterMs;
      }
    } finally {
      clearTimeout(timer);
    }
    if (attempt >= settings.maxRetries) {
      throw new SdkError(
        'model_unreachable',
        `agent "${agent}": the model call of turn ${request.turn} failed ${attempt + 1} times; last: ${lastMessage}`,
        {
          remedy:
            lastStatus === 429
              ? 'the provider is rate limiting: wait and `resume` the run, or use a higher quota'
              : `check that ${endpoint.label} is up and reachable from this host, then \`resume\` the run`,
          data: {
            agent,
            harness: config.type,
            model: config.model,
            attempts: attempt + 1,
            ...(lastStatus === undefined ? {} : { status: lastStatus }),
          },
        },
      );
    }
    const backoff = settings.initialRetryDelayMs * 2 ** attempt;
    const delayMs = Math.min(settings.maxRetryDelayMs, retryAfter ?? backoff);
    input.report({
      kind: 'model.retry',
      turn: request.turn,
      attempt: attempt + 1,
      delayMs,
      ...(lastStatus === undefined ? {} : { status: lastStatus }),
      message: lastMessage,
    });
    await sleep(delayMs, undefined, { signal: input.signal }).catch(() => undefined);
  }
}

function throwIfCancelled(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const reason = signal.reason as unknown;
  if (typeof reason === 'object' && reason !== null && typeof (reason as { code?: unknown }).code === 'string') {
    throw toSdkError(reason, 'cancelled');
  }
  throw new SdkError('cancelled', 'the run was cancelled while the model loop was running', {
    remedy: '`resume` the run to continue from its last checkpoint',
  });
}

/** The AI SDK's usage as the harness reports it (counts the provider did not give are left out). */
function toTokenUsage(usage: GenerateTextResult<ToolSet, never>['usage']): TokenUsage {
  const out: TokenUsage = {};
  if (usage.inputTokens !== undefined) out.inputTokens = usage.inputTokens;
  if (usage.outputTokens !== undefined) out.outputTokens = usage.outputTokens;
  const cached = usage.inputTokenDetails?.cacheReadTokens ?? usage.cachedInputTokens;
  if (cached !== undefined) out.cachedInputTokens = cached;
  const reasoning = usage.outputTokenDetails?.reasoningTokens ?? usage.reasoningTokens;
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  if (usage.totalTokens !== undefined) out.totalTokens = usage.totalTokens;
  return out;
}

function addUsage(total: TokenUsage, usage: GenerateTextResult<ToolSet, never>['usage']): void {
  const add = toTokenUsage(usage);
  for (const key of Object.keys(add) as (keyof TokenUsage)[]) {
    total[key] = (total[key] ?? 0) + (add[key] ?? 0);
  }
}

/** The state a run starts from: a fresh one, or the given checkpoint, checked. */
function restore(agent: string, checkpoint: unknown): ModelLoopCheckpoint {
  if (checkpoint === undefined || checkpoint === null) {
    return { kind: 'model-loop', version: 1, messages: [], turn: 0, usage: {} };
  }
  const parsed = ModelLoopCheckpointSchema.safeParse(checkpoint);
  if (!parsed.success) {
    throw new SdkError(
      'invalid_checkpoint',
      `the checkpoint of agent "${agent}" is not a model-loop checkpoint this version can continue: ${parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join('.') || '(top)'}: ${issue.message}`)
        .join('; ')}`,
      {
        remedy: 'the file was changed or written by another harness; start a new run, or restore the checkpoint file',
        data: { agent },
      },
    );
  }
  return parsed.data;
}

/**
 * Writes checkpoints one after another (tool results arrive concurrently), each time the latest state:
 * a write is never overtaken by an older one.
 */
class CheckpointSaver {
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly input: HarnessInput) {}

  save(state: ModelLoopCheckpoint): Promise<void> {
    const next = this.chain.then(async () => {
      // A JSON copy taken when the write starts: the newest state at that moment.
      const snapshot = JSON.parse(JSON.stringify(state)) as ModelLoopCheckpoint;
      await this.input.saveCheckpoint(snapshot);
      // The step it holds is the turn: that model call's response, and as many of its results as recorded.
      this.input.report({ kind: 'checkpoint', step: snapshot.turn });
    });
    this.chain = next.catch(() => undefined);
    return next;
  }
}

/** Runs at most `limit` tasks at once per key; the rest wait in order. */
class PerKeyLimiter {
  private readonly active = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    if ((this.active.get(key) ?? 0) >= this.limit) {
      await new Promise<void>((resolve) => {
        const queue = this.waiting.get(key) ?? [];
        queue.push(resolve);
        this.waiting.set(key, queue);
      });
    } else {
      this.active.set(key, (this.active.get(key) ?? 0) + 1);
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.get(key)?.shift();
      // The slot passes straight to the next waiter; only when none waits is it given back.
      if (next !== undefined) next();
      else this.active.set(key, (this.active.get(key) ?? 1) - 1);
    }
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
