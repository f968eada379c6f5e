/**
 * The digest of a definition (SPEC §2): sha256, as lowercase hex, of the canonical JSON
 * (`fast-json-stable-stringify`: keys sorted, no white space) of
 * `{ files, entrypoint, command, args, envFrom }` with defaults filled (`command: "node"`, `args: []`,
 * `envFrom: {}`). The definition's name is not part of it. docs/data-dir.md shows how to recompute it.
 */
import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { McpDefinition, McpDefinitionInput } from './workflowSchema.js';

/** The canonical JSON text a digest is taken of. */
export function canonicalDefinitionJson(definition: McpDefinition | McpDefinitionInput): string {
  return stableStringify({
    files: definition.files,
    entrypoint: definition.entrypoint,
    command: definition.command ?? 'node',
    args: definition.args ?? [],
    envFrom: definition.envFrom ?? {},
  });
}

/** The sha256 hex digest of a definition. */
export function definitionDigest(definition: McpDefinition | McpDefinitionInput): string {
  return createHash('sha256').update(canonicalDefinitionJson(definition), 'utf8').digest('hex');
}

/** A 64-hex-digit sha256 digest. */
export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;
