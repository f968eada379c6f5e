/**
 * The protocol era a stdio definition speaks, remembered per definition digest (SPEC §7): the first start
 * of a digest negotiates in place (`server/discover`, falling back to `initialize`) and the verdict is
 * remembered with what that start listed, so later spawns of that digest connect in that era directly,
 * without a probe — as a hint: a start from it that lists less negotiates again. Where it is kept is the
 * caller's ({@link EraMemory}; the invocation keeps it in `projects/<p>/cache/eras/<digest>.json`).
 */
import type { Client } from '@modelcontextprotocol/client';

/** A remembered verdict, as `Client.connect({ prior })` takes it. */
export type EraVerdict = { kind: 'legacy' } | { kind: 'modern'; discover: Record<string, unknown> };

/**
 * How many tools, resources, resource templates and prompts a start listed. The record keeps the counts of
 * the digest's last negotiated start: a start from the record that lists fewer did not believe it.
 */
export interface ListedCounts {
  tools: number;
  resources: number;
  resourceTemplates: number;
  prompts: number;
}

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

/** The format of a remembered record (2: with the counts listed; a format-1 record is read as damaged). */
export const ERA_RECORD_FORMAT = 2;

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

/** The verdict and counts a record of `digest` holds, or `undefined` when it is malformed or of another digest. */
export function parseEraRecord(
  raw: unknown,
  digest: string,
): { verdict: EraVerdict; listed: ListedCounts } | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const record = raw as Record<string, unknown>;
  if (!Object.hasOwn(record, 'format') || record.format !== ERA_RECORD_FORMAT) return undefined;
  if (!Object.hasOwn(record, 'digest') || record.digest !== digest) return undefined;
  const listed = Object.hasOwn(record, 'listed') ? parseCounts(record.listed) : undefined;
  if (listed === undefined) return undefined;
  if (record.era === 'legacy') return { verdict: { kind: 'legacy' }, listed };
  if (record.era !== 'modern' || !Object.hasOwn(record, 'discover')) return undefined;
  const discover = record.discover;
  if (typeof discover !== 'object' || discover === null || Array.isArray(discover)) return undefined;
  const fields = discover as Record<string, unknown>;
  const versions = Object.hasOwn(fields, 'supportedVersions') ? fields.supportedVersions : undefined;
  if (!Array.isArray(versions) || versions.length === 0 || !versions.every((v) => typeof v === 'string')) {
    return undefined;
  }
  const capabilities = Object.hasOwn(fields, 'capabilities') ? fields.capabilities : undefined;
  if (typeof capabilities !== 'object' || capabilities === null || Array.isArray(capabilities)) return undefined;
  return { verdict: { kind: 'modern', discover: fields }, listed };
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

function parseCounts(value: unknown): ListedCounts | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  const counts: Partial<ListedCounts> = {};
  for (const key of ['tools', 'resources', 'resourceTemplates', 'prompts'] as const) {
    const n = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return undefined;
    counts[key] = n;
  }
  return counts as ListedCounts;
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
