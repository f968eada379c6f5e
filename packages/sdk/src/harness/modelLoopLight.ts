/**
 * What the SDK knows of the model-loop harnesses without loading the AI SDK: their configuration type and
 * defaults, the loop's tunables and the checkpoint's schema. The AI SDK (`ai`, `@ai-sdk/*`) is an optional
 * dependency (docs/decisions/optional-dependencies.md), loaded with the loop by `modelLoopLoader.ts`.
 */
import type { z } from 'zod';
import type { RecordedResultSchema } from '../schemas/checkpoints.js';
import { DEFAULT_FORWARD_LIMITS } from '../surface/serviceGate.js';
import type { Harness } from '../workflow/workflowSchema.js';

/** A model-loop harness configuration (defaults filled): `openai`, `anthropic` or `gemini`. */
export type ModelLoopConfig = Extract<Harness, { type: 'openai' | 'anthropic' | 'gemini' }>;

/** The harness types that are model loops. */
export const MODEL_LOOP_TYPES = ['openai', 'anthropic', 'gemini'] as const;

/** The public endpoint of each model-loop type, used when `baseUrl` is absent. */
export const DEFAULT_BASE_URLS: Readonly<Record<ModelLoopConfig['type'], string>> = Object.freeze({
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
  gemini: 'https://generativelanguage.googleapis.com/v1beta',
});

/** The host variable holding the API key of each model-loop type, used when `apiKeyEnv` is absent. */
export const DEFAULT_API_KEY_ENVS: Readonly<Record<ModelLoopConfig['type'], string>> = Object.freeze({
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  gemini: 'GEMINI_API_KEY',
});

/** True when `config` is a model-loop harness configuration. */
export function isModelLoopConfig(config: Harness): config is ModelLoopConfig {
  return (MODEL_LOOP_TYPES as readonly string[]).includes(config.type);
}

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

// The checkpoint's schema is in `schemas/checkpoints.ts`, with every document read back from disk.
export { ModelLoopCheckpointSchema, RecordedResultSchema } from '../schemas/checkpoints.js';
export type { ModelLoopCheckpoint } from '../schemas/checkpoints.js';
/** A recorded tool result. */
export type RecordedResult = z.infer<typeof RecordedResultSchema>;
