/**
 * The protocol era a stdio definition speaks, remembered per definition digest (SPEC §7): the first start
 * of a digest negotiates in place (`server/discover`, falling back to `initialize`) and the verdict is
 * remembered with what that start listed, so later spawns of that digest connect in that era directly,
 * without a probe — as a hint: a start from it that lists less negotiates again. Where it is kept is the
 * caller's ({@link EraMemory}; the invocation keeps it in `projects/<p>/cache/eras/<digest>.json`).
 */
import type { Client } from '@modelcontextprotocol/client';
import { ERA_RECORD_FORMAT, EraRecordSchema, type ListedCounts } from '../schemas/eraCache.js';

/** A remembered verdict, as `Client.connect({ prior })` takes it. */
export type EraVerdict = { kind: 'legacy' } | { kind: 'modern'; discover: Record<string, unknown> };

/**
 * How many tools, resources, resource templates and prompts a start listed. The record keeps the counts of
 * the digest's last negotiated start: a start from the record that lists fewer did not believe it.
 */
export type { ListedCounts } from '../schemas/eraCache.js';

/**
 * What reading the memory found: a verdict with the counts its negotiated start listed, nothing, or a
 * damaged record (then ignored and rewritten).
 */
export type EraLookup = { found: EraVerdict; listed: ListedCounts } | { found: undefined; damaged: boolean };

/**
 * Where the era of one digest is remembered. The record is a hint, never a verdict on its own: it lives
 * where anything running as the user can write it, so a start from it that lists less than the digest's
 * last negotiated start negotiates again (see `stdioService.ts`).
 */
export interface EraMemory {
  /** The remembered verdict; a missing, unreadable or malformed record is none (`damaged` says which). */
  read(): Promise<EraLookup>;
  /** Remembers `verdict` and what the start that negotiated it listed, replacing what was there. */
  remember(verdict: EraVerdict, listed: ListedCounts): Promise<void>;
  /** Forgets the verdict, so the next start negotiates again. */
  forget(): Promise<void>;
}

export { ERA_RECORD_FORMAT } from '../schemas/eraCache.js';

/** Counts of nothing listed (a verdict learned before any list, e.g. a service that exited at the probe). */
export const NOTHING_LISTED: Readonly<ListedCounts> = Object.freeze({
  tools: 0,
  resources: 0,
  resourceTemplates: 0,
  prompts: 0,
});

/** The record {@link parseEraRecord} reads back: `{ format, digest, era, discover?, listed }`. */
export function eraRecord(digest: string, verdict: EraVerdict, listed: ListedCounts): Record<string, unknown> {
  return {
    format: ERA_RECORD_FORMAT,
    digest,
    era: verdict.kind,
    ...(verdict.kind === 'modern' ? { discover: verdict.discover } : {}),
    listed: {
      tools: listed.tools,
      resources: listed.resources,
      resourceTemplates: listed.resourceTemplates,
      prompts: listed.prompts,
    },
  };
}

/**
 * The verdict and counts a record of `digest` holds (checked by `EraRecordSchema`), or `undefined` when it
 * is malformed or of another digest.
 */
export function parseEraRecord(
  raw: unknown,
  digest: string,
): { verdict: EraVerdict; listed: ListedCounts } | undefined {
  const parsed = EraRecordSchema.safeParse(raw);
  if (!parsed.success || parsed.data.digest !== digest) return undefined;
  const record = parsed.data;
  const listed = { ...record.listed };
  return record.era === 'legacy'
    ? { verdict: { kind: 'legacy' }, listed }
    : { verdict: { kind: 'modern', discover: record.discover }, listed };
}

/** Whether `listed` has fewer of any kind than `baseline` (a start that did not believe its record). */
export function listedLess(listed: ListedCounts, baseline: ListedCounts): boolean {
  return (
    listed.tools < baseline.tools ||
    listed.resources < baseline.resources ||
    listed.resourceTemplates < baseline.resourceTemplates ||
    listed.prompts < baseline.prompts
  );
}

/** The verdict a connected `client` reached, to remember; `undefined` before it connected. */
export function verdictOf(client: Client): EraVerdict | undefined {
  const era = client.getProtocolEra();
  if (era === 'legacy') return { kind: 'legacy' };
  const discover = client.getDiscoverResult();
  if (era === 'modern' && discover !== undefined) {
    return { kind: 'modern', discover: JSON.parse(JSON.stringify(discover)) as Record<string, unknown> };
  }
  return undefined;
}
