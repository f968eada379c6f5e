/**
 * One turn of a model loop: one model call through the AI SDK with the loop's own retry policy (each retry
 * reported, `retry-after` honoured), a timeout per request, cancellation, and the call's token usage.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type GenerateTextResult, type ModelMessage, type ToolSet, generateText, modelMessageSchema } from 'ai';
import { SdkError, toSdkError } from '../errors.js';
import { telemetry } from '../events/telemetry.js';
import type { HarnessInput, TokenUsage } from './harness.js';
import { type FailureContext, type ModelEndpoint, type ModelLoopConfig, classifyFailure } from './modelProviders.js';
import { responseFacts } from './stepDigests.js';

/** The retry settings of a model call (from the loop's options). */
export interface RetrySettings {
  /** Retries of one model call. */
  maxRetries: number;
  /** Milliseconds before the first retry when the provider names no delay; doubles each retry. */
  initialRetryDelayMs: number;
  /** Milliseconds any one wait between attempts lasts at most. */
  maxRetryDelayMs: number;
}

/**
 * What one model call sends: the system text, the conversation (the task as the first user message, then
 * the turns so far), the tools, and the turn's number (1-based).
 */
export interface CallRequest {
  system: string;
  messages: ModelMessage[];
  tools: ToolSet;
  turn: number;
}

let primed = false;

/**
 * Resolves, once per process, the one `z.lazy` of the AI SDK's `ModelMessage` schema (the JSON value of
 * `providerOptions`). Every `generateText` call checks its messages with a new `z.array(modelMessageSchema)`,
 * and zod 4 first walks a new schema's tree looking for cycles; a lazy that no value has gone through yet
 * counts as a possible cycle and keeps the answer from being cached, so each call walked the whole
 * message schema again (≈ 50 µs and ≈ 65 KB of garbage a turn). One message parsed through the lazy
 * resolves it (what zod does at its first use anyway); later walks stop at the cached answer. The parse
 * changes nothing else: it only checks a constant message.
 */
export function primeMessageSchema(): void {
  if (primed) return;
  primed = true;
  modelMessageSchema.safeParse({ role: 'user', content: '', providerOptions: { prime: { value: null } } });
}

/**
 * The conversation as `generateText` takes it. The AI SDK checks every message it is given against its
 * `ModelMessage` schema (zod) at every call, and a loop that calls it once per turn would check the whole
 * conversation again each turn: a cost that grows with the square of the conversation's length (≈ 0.1 ms
 * per message per turn). Every message of a loop's conversation was checked once already where it came
 * from — the AI SDK's own response messages, the tool messages `modelTools.ts` builds, a resumed
 * checkpoint's messages (`restoreCheckpoint`, each against the same schema) — so the task alone goes
 * through the check and the conversation goes to the model through `prepareStep`, which the AI SDK
 * documents as "override the full set of messages sent to the model for this step" and converts without
 * checking again. With telemetry export on, the whole conversation is passed as before, so the AI SDK's
 * `ai.generateText` span records the prompt as sent.
 */
function conversationOf(
  request: CallRequest,
  traced: boolean,
): { messages: ModelMessage[]; prepareStep?: (step: { messages: ModelMessage[] }) => { messages: ModelMessage[] } } {
  if (traced || request.messages.length <= 1) return { messages: request.messages };
  return {
    messages: request.messages.slice(0, 1),
    // The AI SDK's own messages of a step are the task and what its earlier steps of this call added (none:
    // the call stops after one step; kept should it ever take another).
    prepareStep: ({ messages }) => ({ messages: [...request.messages, ...messages.slice(1)] }),
  };
}

/** One model call with its retries; reports `model.called` and each `model.retry`. */
export async function callModel(
  agent: string,
  config: ModelLoopConfig,
  settings: RetrySettings,
  endpoint: ModelEndpoint,
  failure: FailureContext,
  input: HarnessInput,
  request: CallRequest,
): Promise<GenerateTextResult<ToolSet, never>> {
  let lastMessage = '';
  let lastStatus: number | undefined;
  const traced = telemetry();
  for (let attempt = 0; ; attempt++) {
    throwIfCancelled(input.signal);
    // One controller per attempt, aborted by the run's signal or the request timeout (not `AbortSignal.any`,
    // whose composite signals stay registered on the run's long-lived signal until a garbage collection).
    const call = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      call.abort();
    }, config.requestTimeoutMs);
    timer.unref();
    const onCancel = () => call.abort(input.signal.reason);
    input.signal.addEventListener('abort', onCancel, { once: true });
    const started = performance.now();
    let retryAfter: number | undefined;
    try {
      const result = (await generateText({
        model: endpoint.model,
        ...(request.system === '' ? {} : { system: request.system }),
        ...conversationOf(request, traced !== undefined),
        tools: request.tools,
        // The loop retries (and reports each retry) itself.
        maxRetries: 0,
        abortSignal: call.signal,
        ...(config.maxOutputTokens === undefined ? {} : { maxOutputTokens: config.maxOutputTokens }),
        ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
        providerOptions: endpoint.providerOptions,
        // With export on, the AI SDK's own GenAI spans (model, tokens) under the attempt's span.
        ...(traced === undefined ? {} : { experimental_telemetry: traced.aiTelemetry(agent) }),
      })) as unknown as GenerateTextResult<ToolSet, never>;
      input.report({
        kind: 'model.called',
        turn: request.turn,
        model: config.model,
        usage: toTokenUsage(result.usage),
        durationMs: Math.round(performance.now() - started),
        finishReason: result.finishReason,
        // What `resume` checks the checkpoint's conversation against (the host journals it).
        ...responseFacts(result.response.messages),
      });
      return result;
    } catch (error) {
      throwIfCancelled(input.signal);
      if (timedOut) {
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
      input.signal.removeEventListener('abort', onCancel);
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

/** Throws `cancelled` (or the run's own coded reason) once the run's signal has aborted. */
export function throwIfCancelled(signal: AbortSignal): void {
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
export function toTokenUsage(usage: GenerateTextResult<ToolSet, never>['usage']): TokenUsage {
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

/** Adds one model call's usage to a running total (a checkpoint's). */
export function addUsage(total: TokenUsage, usage: GenerateTextResult<ToolSet, never>['usage']): void {
  const add = toTokenUsage(usage);
  for (const key of Object.keys(add) as (keyof TokenUsage)[]) {
    total[key] = (total[key] ?? 0) + (add[key] ?? 0);
  }
}
