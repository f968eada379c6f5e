/**
 * The control files of the data dir: `format.json`, and each project's workflow store —
 * `workflow/accepted.json` (the pointer to the version in force) and `workflow/versions/<n>.json` (one
 * accepted version). The store's files are a hash chain (`store/storeChain.ts`); these schemas say what
 * each record holds, and the chain's reader adds the checks a schema cannot say (the bytes, the digests,
 * the links). A file that does not parse is `store_tampered` (`io_error` for `format.json`).
 */
import * as z from 'zod';
import { isoTime, sha256Hex } from './records.js';
import { AcceptedBySchema } from './states.js';

/** A version number: 1, 2, … */
const versionNumber = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** `workflow/accepted.json`: the version in force and the digest of its file. Exactly these keys. */
export const AcceptedPointerSchema = z.strictObject({
  /** The version in force. */
  version: versionNumber,
  /** sha256 hex of the canonical JSON of the record in `workflow/versions/<version>.json`. */
  digest: sha256Hex,
});
/** `workflow/accepted.json`: the version in force and the digest of its file. */
export type AcceptedPointer = z.infer<typeof AcceptedPointerSchema>;

/**
 * `workflow/versions/<n>.json`: one accepted version. Exactly these keys. The workflow is checked by the
 * workflow's own validation (`workflow.schema.json` and the rules of `scienceevolve validate`), not here.
 */
export const WorkflowVersionRecordSchema = z.strictObject({
  /** 1, 2, … (the file's name says the same). */
  version: versionNumber,
  /** ISO 8601 time of acceptance. */
  acceptedAt: isoTime,
  /** Who accepted it. */
  by: AcceptedBySchema,
  /** Definition name → digest. */
  digests: z.record(z.string(), sha256Hex),
  /** Definitions that changed against the previous version. */
  changedMcps: z.array(z.string()),
  /** Agents that changed against the previous version. */
  changedAgents: z.array(z.string()),
  /** The digest of the previous version's record (sha256 hex of its canonical JSON); null for version 1. */
  previous: sha256Hex.nullable(),
  /** The sha256 hex of the canonical JSON of `workflow`. */
  workflowDigest: sha256Hex,
  /** The complete workflow, defaults filled (see `workflow.schema.json`). */
  workflow: z.record(z.string(), z.unknown()),
});

/**
 * `<dataDir>/format.json`: the data dir's layout version. Further keys are allowed, so a data dir of a
 * newer format is refused as too new (`data_dir_too_new`), not as damaged.
 */
export const FormatFileSchema = z.looseObject({
  /** The layout version (this SDK reads and writes 2). */
  format: z.number().int(),
  /** Who made the data dir (`scienceevolve`). */
  createdBy: z.string().optional(),
});
/** `<dataDir>/format.json`. */
export type FormatFile = z.infer<typeof FormatFileSchema>;

/**
 * `workflow/.lock`: who holds the store's write lock. A lock file that does not parse is a damaged lock,
 * taken over (locks are created with their content in one step).
 */
export const LockHolderSchema = z.object({
  /** The holder's pid. */
  pid: z.number().int().positive(),
  /** The holder's process start time ('' when it could not be read): a reused pid is another process. */
  start: z.string().optional(),
  /** A random token of the holder. */
  nonce: z.string().optional(),
});
