/**
 * The hash chain of a project's workflow store (docs/data-dir.md, "Tamper evidence"). Every control file
 * the store writes (`workflow/versions/<n>.json`, `workflow/accepted.json`) holds its record as
 * `JSON.stringify(record, null, 2)` and one newline, nothing else (so a reader can tell any other bytes);
 * its digest is the sha256 hex of the record's canonical JSON (`fast-json-stable-stringify`: keys
 * sorted, no white space), which does not depend on key order. A version names the digest of its predecessor's
 * file (`previous`) and of its own workflow (`workflowDigest`); `accepted.json` names the version in force
 * and the digest of its file. Each read checks the bytes, the record's schema and the links it crosses,
 * and refuses anything else with `store_tampered` naming the file and what did not match.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import stableStringify from 'fast-json-stable-stringify';
import type { z } from 'zod';
import { SdkError, toSdkError } from '../errors.js';
import { type RecordSource, parseRecord } from '../schemas/parseRecord.js';
import { type AcceptedPointer, AcceptedPointerSchema, WorkflowVersionRecordSchema } from '../schemas/store.js';
import { definitionDigest } from '../workflow/digest.js';
import { validateWorkflow } from '../workflow/validate.js';
import type { Workflow } from '../workflow/workflowSchema.js';
import type { ProjectPaths } from './projectStore.js';

// The records' schemas are in `schemas/store.ts` (one source for the reader, the types and the docs).
export type { AcceptedBy } from '../schemas/states.js';
export type { AcceptedPointer } from '../schemas/store.js';

/** One accepted version as stored (`WorkflowVersionRecordSchema`, its workflow typed as the workflow it is). @internal */
export type WorkflowVersion = Omit<z.infer<typeof WorkflowVersionRecordSchema>, 'workflow'> & {
  /** The complete workflow, defaults filled. */
  workflow: Workflow;
};

/** The text a record is stored as: `JSON.stringify(value, null, 2)` and a newline (one spelling per record). */
export function storedText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** The digest of a record: sha256 hex of its canonical JSON. */
export function recordDigest(value: unknown): string {
  return createHash('sha256').update(stableStringify(value), 'utf8').digest('hex');
}

/** The digest of a workflow, as a version's `workflowDigest` names it. */
export function workflowDigest(workflow: Workflow): string {
  return recordDigest(workflow);
}

/** The `store_tampered` error: `file` did not hold what the SDK wrote; `what` says what did not match. */
export function tamperedError(paths: ProjectPaths | undefined, file: string, what: string): SdkError {
  const verify =
    paths === undefined
      ? '`scienceevolve workflow verify --data-dir D`'
      : `\`scienceevolve workflow verify --data-dir ${paths.dataDir} --project ${paths.projectId}\``;
  return new SdkError('store_tampered', `${file} was changed outside ScienceEvolve: ${what}`, {
    remedy: `run ${verify} to list every problem, then restore the file from a backup (the SDK never rewrites a stored version)`,
    data: { path: file, ...(paths === undefined ? {} : { project: paths.projectId }) },
  });
}

/** A stored file read and checked to be exactly the text the SDK writes; `undefined` when it does not exist. */
export async function readStored(paths: ProjectPaths | undefined, file: string): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR') throw tamperedError(paths, file, 'it is a directory, not a file');
    throw new SdkError('io_error', `could not read ${file}: ${(error as Error).message}`, {
      remedy: 'check the permissions of the data dir',
      data: { path: file },
      cause: error,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw tamperedError(paths, file, `it is not valid JSON (${(error as Error).message})`);
  }
  if (!Buffer.from(storedText(value), 'utf8').equals(bytes)) {
    throw tamperedError(
      paths,
      file,
      'its bytes are not the JSON text the SDK writes (an edit by hand or by a program)',
    );
  }
  return value;
}

/** Where a store file is read from, and its damage as `store_tampered` (see {@link tamperedError}). */
function storeSource(paths: ProjectPaths | undefined, file: string, what: string): RecordSource {
  const sample = tamperedError(paths, file, '');
  return {
    file,
    code: 'store_tampered',
    what,
    subject: `${file} was changed outside ScienceEvolve: it`,
    remedy: sample.remedy ?? '',
    data: { ...sample.data },
  };
}

/** Checks `accepted.json`'s record against `AcceptedPointerSchema`; throws `store_tampered` naming the field. */
export function checkPointer(paths: ProjectPaths | undefined, file: string, value: unknown): AcceptedPointer {
  return parseRecord(
    AcceptedPointerSchema,
    value,
    storeSource(paths, file, 'an accepted pointer {"version", "digest"}'),
  );
}

/**
 * Checks a version file's record against its schema: the record's own fields, the workflow against the
 * workflow schema (so a name such as `../../x` is refused before any path is built from it), the
 * workflow's digest, and every definition's digest. `expected` is the version number the file's name says.
 */
export function checkVersionRecord(
  paths: ProjectPaths | undefined,
  file: string,
  value: unknown,
  expected: number,
): WorkflowVersion {
  // The record's own fields by its schema; the value itself is returned (its bytes are what the digests cover).
  parseRecord(WorkflowVersionRecordSchema, value, storeSource(paths, file, 'a version record'));
  const record = value as z.infer<typeof WorkflowVersionRecordSchema>;
  if (record.version !== expected) {
    throw tamperedError(paths, file, `"version" is ${record.version}, the file name says ${expected}`);
  }
  if ((expected === 1) !== (record.previous === null)) {
    throw tamperedError(
      paths,
      file,
      expected === 1 ? '"previous" of version 1 is not null' : `"previous" of version ${expected} is null`,
    );
  }
  let result: ReturnType<typeof validateWorkflow>;
  try {
    result = validateWorkflow(record.workflow);
  } catch (error) {
    throw tamperedError(paths, file, `its workflow could not be checked (${toSdkError(error).message})`);
  }
  if (!result.ok) {
    const first = result.errors
      .slice(0, 3)
      .map((e) => `${e.code} at ${e.path}`)
      .join(', ');
    throw tamperedError(
      paths,
      file,
      `its workflow no longer validates (${result.errors.length} error${result.errors.length === 1 ? '' : 's'}: ${first})`,
    );
  }
  const actualWorkflowDigest = recordDigest(record.workflow);
  if (actualWorkflowDigest !== record.workflowDigest) {
    throw tamperedError(
      paths,
      file,
      `the workflow's digest is ${actualWorkflowDigest}, the record names ${record.workflowDigest}`,
    );
  }
  const definitions = result.workflow.mcpDefinitions;
  const digests = record.digests;
  const names = new Set([...Object.keys(definitions), ...Object.keys(digests)]);
  for (const name of [...names].sort()) {
    const definition = Object.hasOwn(definitions, name) ? definitions[name] : undefined;
    const named = Object.hasOwn(digests, name) ? digests[name] : undefined;
    if (definition === undefined || named === undefined) {
      throw tamperedError(paths, file, `"digests" and the workflow's definitions differ at ${JSON.stringify(name)}`);
    }
    const actual = definitionDigest(definition);
    if (actual !== named) {
      throw tamperedError(
        paths,
        file,
        `definition ${JSON.stringify(name)} has digest ${actual}, "digests" names ${named}`,
      );
    }
  }
  return value as WorkflowVersion;
}

/** Reads `accepted.json`; `undefined` when the project has none. */
export async function readPointer(paths: ProjectPaths): Promise<AcceptedPointer | undefined> {
  const value = await readStored(paths, paths.acceptedPath);
  if (value === undefined) return undefined;
  return checkPointer(paths, paths.acceptedPath, value);
}

/** One version file read and checked; with its file's digest. `undefined` when the file does not exist. */
export async function readVersionFile(
  paths: ProjectPaths,
  version: number,
): Promise<{ record: WorkflowVersion; digest: string } | undefined> {
  const file = paths.versionPath(version);
  const value = await readStored(paths, file);
  if (value === undefined) return undefined;
  const record = checkVersionRecord(paths, file, value, version);
  return { record, digest: recordDigest(record) };
}

/**
 * The version in force, checked: `accepted.json` against its schema, the version file it names against
 * its schema and the digest `accepted.json` names. `undefined` when nothing was accepted yet.
 */
export async function readHead(paths: ProjectPaths): Promise<{ record: WorkflowVersion; digest: string } | undefined> {
  const pointer = await readPointer(paths);
  if (pointer === undefined) return undefined;
  const head = await readVersionFile(paths, pointer.version);
  if (head === undefined) {
    throw tamperedError(
      paths,
      paths.acceptedPath,
      `it names version ${pointer.version}, and ${paths.versionPath(pointer.version)} does not exist`,
    );
  }
  if (head.digest !== pointer.digest) {
    throw tamperedError(
      paths,
      paths.versionPath(pointer.version),
      `its digest is ${head.digest}, ${paths.acceptedPath} names ${pointer.digest}`,
    );
  }
  return head;
}

/**
 * Versions `n` to the one in force, ascending, checked along the chain from the version in force down:
 * each file's digest must be the `previous` its successor names.
 */
export async function readChainFrom(
  paths: ProjectPaths,
  head: { record: WorkflowVersion; digest: string },
  n: number,
): Promise<WorkflowVersion[]> {
  const records = [head.record];
  let current = head;
  for (let v = head.record.version - 1; v >= n; v--) {
    const found = await readVersionFile(paths, v);
    if (found === undefined) {
      throw tamperedError(
        paths,
        paths.versionPath(v),
        `the file is missing; version ${v + 1} names it as its predecessor`,
      );
    }
    if (found.digest !== current.record.previous) {
      throw tamperedError(
        paths,
        paths.versionPath(v),
        `its digest is ${found.digest}, and ${paths.versionPath(v + 1)} names ${current.record.previous} as its predecessor`,
      );
    }
    records.push(found.record);
    current = found;
  }
  return records.reverse();
}
