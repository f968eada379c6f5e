/**
 * Small records that several documents share (an error as stored, token counts, usage totals, catalog
 * names, digests, times), each written once.
 */
import * as z from 'zod';

/** A count the SDK wrote: a non-negative integer. */
export const count = z.number().int().nonnegative();

/** A process id: a positive integer. */
export const pid = z.number().int().positive();

/** An ISO 8601 time the SDK wrote (`new Date().toISOString()`, or with an offset). */
export const isoTime = z.iso.datetime({ offset: true });

/** A sha256 digest, 64 lower-case hex digits. */
export const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'not a sha256 hex digest');

/** An error as stored and published: `SdkError.toJSON()`. */
export const ErrorRecordSchema = z.object({
  code: z.string(),
  message: z.string(),
  remedy: z.string().optional(),
  data: z.record(z.string(), z.unknown()).meta({ keyName: 'key' }).optional(),
});
/** An error as stored and published: `SdkError.toJSON()`. */
export type ErrorRecord = z.infer<typeof ErrorRecordSchema>;

/** A short error: its code and message. */
export const ShortErrorSchema = z.object({ code: z.string(), message: z.string() });

/** Token counts of one model call, as the provider reported them (missing counts are omitted). */
export const TokenCountsSchema = z.object({
  inputTokens: z.number().optional(),
  outputTokens: z.number().optional(),
  cachedInputTokens: z.number().optional(),
  reasoningTokens: z.number().optional(),
  totalTokens: z.number().optional(),
});
/** Token counts of one model call, as the provider reported them (missing counts are omitted). */
export type TokenCounts = z.infer<typeof TokenCountsSchema>;

/** Usage summed over model calls (an invocation's or a run's); counts the provider never reported stay 0. */
export const UsageTotalsSchema = z.object({
  /** Model calls that finished. */
  modelCalls: count,
  inputTokens: count,
  outputTokens: count,
  cachedInputTokens: count,
  reasoningTokens: count,
  totalTokens: count,
});
/** Usage summed over model calls (an invocation's or a run's); counts the provider never reported stay 0. */
export type UsageTotals = z.infer<typeof UsageTotalsSchema>;

/** Names per list of a service's catalog: tool and prompt names, resource URIs, template URI templates. */
export const CatalogNamesSchema = z.object({
  tools: z.array(z.string()),
  resources: z.array(z.string()),
  resourceTemplates: z.array(z.string()),
  prompts: z.array(z.string()),
});
/** Names per list of a service's catalog: tool and prompt names, resource URIs, template URI templates. */
export type CatalogNames = z.infer<typeof CatalogNamesSchema>;
