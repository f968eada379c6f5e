/**
 * Small records that several documents share (an error as stored, token counts, usage totals, catalog
 * names, digests, times), each written once: the public ones as a written interface (the type every layer
 * imports, and the API report shows), with the schema that checks it held equal at compile time (end of
 * this file; docs/decisions/record-schemas.md).
 */
import * as z from 'zod';
import type { Assert, SameShape } from './sameShape.js';

/** A count the SDK wrote: a non-negative integer. */
export const count = z.number().int().nonnegative();

/** A process id: a positive integer. */
export const pid = z.number().int().positive();

/** An ISO 8601 time the SDK wrote (`new Date().toISOString()`, or with an offset). */
export const isoTime = z.iso.datetime({ offset: true });

/** A sha256 digest, 64 lower-case hex digits. */
export const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'not a sha256 hex digest');

/** An error as stored and published: `SdkError.toJSON()`. @public */
export interface ErrorRecord {
  /** The error's code (see docs/errors.md). */
  code: string;
  /** What failed, naming the service, file or option. */
  message: string;
  /** What to do about it. */
  remedy?: string;
  /** Structured facts of the failure (never a secret). */
  data?: Record<string, unknown>;
}

/** The schema of {@link ErrorRecord}. */
export const ErrorRecordSchema = z.object({
  code: z.string(),
  message: z.string(),
  remedy: z.string().optional(),
  data: z.record(z.string(), z.unknown()).meta({ keyName: 'key' }).optional(),
});

/** A short error: its code and message. */
export const ShortErrorSchema = z.object({ code: z.string(), message: z.string() });

/** Token counts of one model call, as the provider reported them (missing counts are omitted). @public */
export interface TokenCounts {
  /** Input (prompt) tokens. */
  inputTokens?: number;
  /** Output (completion) tokens. */
  outputTokens?: number;
  /** Input tokens served from the provider's prompt cache, where it reports them. */
  cachedInputTokens?: number;
  /** Reasoning tokens, where the provider reports them. */
  reasoningTokens?: number;
  /** Input and output tokens together, as the provider counts them. */
  totalTokens?: number;
}

/** The schema of {@link TokenCounts}. */
export const TokenCountsSchema = z.object({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  cachedInputTokens: z.number().optional(),
  reasoningTokens: z.number().optional(),
  totalTokens: z.number().optional(),
});

/** One model call of a model-loop harness: what the harness reports and the `model.called` event journals. @public */
export interface ModelCall {
  /** The turn (1-based) within the invocation. */
  turn: number;
  /** The model that answered. */
  model: string;
  /** Its token counts. */
  usage: TokenCounts;
  /** Milliseconds the call took. */
  durationMs: number;
  /** Why the model stopped, as the provider said. */
  finishReason?: string;
  /**
   * sha256 (hex) of the canonical JSON of the assistant message the response appended to the conversation
   * (of `null` when it appended none): `resume` checks a checkpoint's conversation against it.
   */
  responseDigest?: string;
  /**
   * The tool calls of the response the provider library answered itself (an unknown tool, arguments that
   * are not JSON), each with the digest of that answer (as {@link ToolCalledEvent.resultDigest}).
   */
  answered?: { callId: string; tool: string; resultDigest: string }[];
}

/** A model call retried after a 429/5xx/network failure: what the harness reports and `model.retry` journals. @public */
export interface ModelRetry {
  /** The turn (1-based) whose call is retried. */
  turn: number;
  /** The retry's number, from 1. */
  attempt: number;
  /** Milliseconds waited before the retry. */
  delayMs: number;
  /** The HTTP status of the failure, when there was one. */
  status?: number;
  /** What failed. */
  message: string;
}

/** A service's question, as shown to the model, the operator and the journal (`tool.question`). @public */
export interface Question {
  /** `form`: a question with a schema of fields; `url`: a page the service asks the user to open. */
  mode: 'form' | 'url';
  /** The service's question. */
  message: string;
  /** Form mode: the JSON Schema of the answer (flat object of primitive fields). */
  requestedSchema?: Record<string, unknown>;
  /** URL mode: the URL the service asks the user to open (shown, never opened). */
  url?: string;
}

/** An answer to a {@link Question}. @public */
export interface QuestionAnswer {
  /** Accepted with `content`, declined, or cancelled. */
  action: 'accept' | 'decline' | 'cancel';
  /** The answer's fields (accepted form questions). */
  content?: Record<string, unknown>;
}

/** Usage summed over model calls (an invocation's or a run's); counts the provider never reported stay 0. @public */
export interface UsageTotals {
  /** Model calls that finished. */
  modelCalls: number;
  /** Input (prompt) tokens. */
  inputTokens: number;
  /** Output (completion) tokens. */
  outputTokens: number;
  /** Input tokens served from the provider's prompt cache. */
  cachedInputTokens: number;
  /** Reasoning tokens. */
  reasoningTokens: number;
  /** Input and output tokens together, as the providers count them. */
  totalTokens: number;
}

/** The schema of {@link UsageTotals}. */
export const UsageTotalsSchema = z.object({
  modelCalls: count,
  inputTokens: count,
  outputTokens: count,
  cachedInputTokens: count,
  reasoningTokens: count,
  totalTokens: count,
});

/** Names per list of a service's catalog: tool and prompt names, resource URIs, template URI templates (its own). @public */
export interface CatalogNames {
  /** Tool names. */
  tools: string[];
  /** Resource URIs. */
  resources: string[];
  /** Resource template URI templates. */
  resourceTemplates: string[];
  /** Prompt names. */
  prompts: string[];
}

/** The schema of {@link CatalogNames}. */
export const CatalogNamesSchema = z.object({
  tools: z.array(z.string()),
  resources: z.array(z.string()),
  resourceTemplates: z.array(z.string()),
  prompts: z.array(z.string()),
});

// biome-ignore lint/correctness/noUnusedVariables: a compile-time check, used by being compiled.
type RecordTypesMatchSchemas = {
  errorRecord: Assert<SameShape<z.output<typeof ErrorRecordSchema>, ErrorRecord>>;
  tokenCounts: Assert<SameShape<z.output<typeof TokenCountsSchema>, TokenCounts>>;
  usageTotals: Assert<SameShape<z.output<typeof UsageTotalsSchema>, UsageTotals>>;
  catalogNames: Assert<SameShape<z.output<typeof CatalogNamesSchema>, CatalogNames>>;
};
