/**
 * `projects/<p>/cache/eras/<digest>.json`: the protocol era a stdio definition speaks, remembered per
 * definition digest with what its negotiated start listed (SPEC §7). A hint, never a verdict: a record
 * that does not parse, or names another digest, counts as damaged and the next verdict replaces it.
 */
import * as z from 'zod';
import { count } from './records.js';

/** The format of a remembered record (2: with the counts listed; a format-1 record is read as damaged). */
export const ERA_RECORD_FORMAT = 2;

/** How many tools, resources, resource templates and prompts a start listed. */
export const ListedCountsSchema = z.object({
  tools: count,
  resources: count,
  resourceTemplates: count,
  prompts: count,
});
/** How many tools, resources, resource templates and prompts a start listed. */
export type ListedCounts = z.infer<typeof ListedCountsSchema>;

const recordFields = {
  /** The record's format: 2. */
  format: z.literal(ERA_RECORD_FORMAT),
  /** The definition digest it is about (the file's name says the same). */
  digest: z.string(),
  /** What the digest's last negotiated start listed: a start from the record that lists fewer negotiates again. */
  listed: ListedCountsSchema,
};

/** One remembered era: `legacy` (2025-11-25, `initialize`) or `modern` (2026-07-28+, with its `server/discover` result). */
export const EraRecordSchema = z.discriminatedUnion('era', [
  z.object({ ...recordFields, era: z.literal('legacy') }),
  z.object({
    ...recordFields,
    era: z.literal('modern'),
    /** The `server/discover` result the start negotiated, kept whole. */
    discover: z.looseObject({
      supportedVersions: z.array(z.string()).min(1),
      capabilities: z.record(z.string(), z.unknown()),
    }),
  }),
]);
/** One remembered era record. */
export type EraRecord = z.infer<typeof EraRecordSchema>;
