/**
 * The model loop's tool runner: the surface's tools offered as AI SDK function tools, one tool call run
 * through the surface (its failures become results the model reads), and the per-service cap on a turn's
 * parallel calls. A result as the text a model sees is `stepDigests.ts`'s (the engine records answers
 * without loading the AI SDK).
 */
import { type Tool, type ToolResultPart, type ToolSet, jsonSchema } from 'ai';
import type { HarnessInput } from './harness.js';
import type { PendingCall, RecordedResult } from './modelLoopCheckpoint.js';
import { throwIfCancelled } from './modelTurn.js';
import { recordedAnswer, recordedFailure } from './stepDigests.js';

/**
 * Calls one surface tool; every failure but cancellation becomes an error result for the model. The call
 * id goes with the call, so the host journals the result under it (`tool.called`).
 */
export async function callTool(input: HarnessInput, call: PendingCall): Promise<RecordedResult> {
  const args = call.input;
  if (!isArgumentsObject(args)) return argumentsRefused(call.toolName);
  try {
    return recordedAnswer(
      await input.surface.callTool(call.toolName, args, { signal: input.signal, callId: call.toolCallId }),
    );
  } catch (error) {
    throwIfCancelled(input.signal);
    // An unknown tool, or a JSON-RPC error the service answered: the model reads the message.
    return recordedFailure(error);
  }
}

/** Whether a call's arguments are a JSON object (else the call never reaches the surface). */
export function isArgumentsObject(args: unknown): args is Record<string, unknown> {
  return typeof args === 'object' && args !== null && !Array.isArray(args);
}

/** The result of a call whose arguments are not a JSON object (answered without calling the surface). */
export function argumentsRefused(tool: string): RecordedResult {
  return { text: `the arguments of ${tool} must be a JSON object`, isError: true };
}

export { recordedAnswer, resultAsText } from './stepDigests.js';

/** A recorded result as the AI SDK's tool-result part (an error result as `error-text`). */
export function toolResultPart(call: PendingCall, result: RecordedResult): ToolResultPart {
  return {
    type: 'tool-result',
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: result.isError ? { type: 'error-text', value: result.text } : { type: 'text', value: result.text },
  };
}

/** The surface's tools as function tools without `execute`: the loop runs them itself. */
export function toolSet(input: HarnessInput): ToolSet {
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

/** Runs at most `limit` tasks at once per key; the rest wait in order. */
export class PerKeyLimiter {
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
