/**
 * The protocol era a stdio definition speaks, remembered per definition digest (SPEC §7): the first start
 * of a digest negotiates in place (`server/discover`, falling back to `initialize`) and the verdict is
 * remembered, so later spawns of that digest connect in that era directly, without a probe. Where it is
 * kept is the caller's ({@link EraMemory}; the invocation keeps it in `projects/<p>/cache/eras/<digest>.json`).
 */
import type { Client } from '@modelcontextprotocol/client';

/** A remembered verdict, as `Client.connect({ prior })` takes it. */
export type EraVerdict = { kind: 'legacy' } | { kind: 'modern'; discover: Record<string, unknown> };

/** What reading the memory found: a verdict, nothing, or a damaged record (then ignored and rewritten). */
export type EraLookup = { found: EraVerdict } | { found: undefined; damaged: boolean };

/** Where the era of one digest is remembered. */
export interface EraMemory {
  /** The remembered verdict; a missing, unreadable or malformed record is none (`damaged` says which). */
  read(): Promise<EraLookup>;
  /** Remembers `verdict`, replacing what was there. */
  remember(verdict: EraVerdict): Promise<void>;
  /** Forgets the verdict, so the next start negotiates again. */
  forget(): Promise<void>;
}

/** The format of a remembered record. */
export const ERA_RECORD_FORMAT = 1;

/** The record {@link parseEraRecord} reads back: `{ format, digest, era, discover? }`. */
export function eraRecord(digest: string, verdict: EraVerdict): Record<string, unknown> {
  return {
    format: ERA_RECORD_FORMAT,
    digest,
    era: verdict.kind,
    ...(verdict.kind === 'modern' ? { discover: verdict.discover } : {}),
  };
}

/** The verdict a record of `digest` holds, or `undefined` when it is malformed or of another digest. */
export function parseEraRecord(raw: unknown, digest: string): EraVerdict | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const record = raw as Record<string, unknown>;
  if (!Object.hasOwn(record, 'format') || record.format !== ERA_RECORD_FORMAT) return undefined;
  if (!Object.hasOwn(record, 'digest') || record.digest !== digest) return undefined;
  if (record.era === 'legacy') return { kind: 'legacy' };
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
  return { kind: 'modern', discover: fields };
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
