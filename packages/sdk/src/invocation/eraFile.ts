/**
 * The era memory of a definition digest in the data dir: `projects/<p>/cache/eras/<digest>.json`, beside
 * the immutable `mcp/` (which never changes after it is written). Written atomically; a file that cannot
 * be read or does not describe the digest counts as damaged, and the next verdict replaces it.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type EraLookup, type EraMemory, eraRecord, parseEraRecord } from '../sessions/eraCache.js';
import { readJsonFile, writeJsonAtomic } from '../store/atomicFile.js';

/** The era file of `digest` under a project's root. */
export function eraFilePath(projectRoot: string, digest: string): string {
  return join(projectRoot, 'cache', 'eras', `${digest}.json`);
}

/** The {@link EraMemory} of `digest` kept in the file at `path`. */
export function fileEraMemory(path: string, digest: string): EraMemory {
  return {
    async read(): Promise<EraLookup> {
      let raw: unknown;
      try {
        raw = await readJsonFile<unknown>(path);
      } catch {
        return { found: undefined, damaged: true };
      }
      if (raw === undefined) return { found: undefined, damaged: false };
      const record = parseEraRecord(raw, digest);
      return record === undefined
        ? { found: undefined, damaged: true }
        : { found: record.verdict, listed: record.listed };
    },
    async remember(verdict, listed) {
      await writeJsonAtomic(path, eraRecord(digest, verdict, listed));
    },
    async forget() {
      await rm(path, { force: true });
    },
  };
}
