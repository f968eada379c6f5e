/**
 * The digest of a definition (SPEC §2): sha256, as lowercase hex, of the canonical JSON
 * (`fast-json-stable-stringify`: keys sorted, no white space) of
 * `{ files, entrypoint, command, args, envFrom }` with defaults filled (`command: "node"`, `args: []`,
 * `envFrom: {}`). `network` and `sandbox` join only when they are `false` (not the default), so the digest of
 * a definition stored before the settings existed does not change. The definition's name is not part of it.
 * docs/data-dir.md shows how to recompute it.
 */
import { createHash } from 'node:crypto';
import stableStringify from 'fast-json-stable-stringify';
import type { McpDefinition, McpDefinitionInput } from './workflowSchema.js';

function canonicalParts(definition: McpDefinition | McpDefinitionInput) {
  return {
    files: definition.files,
    entrypoint: definition.entrypoint,
    command: definition.command ?? 'node',
    args: definition.args ?? [],
    envFrom: definition.envFrom ?? {},
    // Only when not the default: every digest taken before `network` existed stays the same.
    ...(definition.network === false ? { network: false as const } : {}),
    ...(definition.sandbox === false ? { sandbox: false as const } : {}),
  };
}

/** The canonical JSON text a digest is taken of. @internal */
export function canonicalDefinitionJson(definition: McpDefinition | McpDefinitionInput): string {
  return stableStringify(canonicalParts(definition));
}

/**
 * The sha256 hex digest of a definition. The same bytes as {@link canonicalDefinitionJson}, fed to the
 * hash file by file: one string of the whole definition (up to 1 MiB of JSON, far more through the API)
 * would cost a large allocation and a UTF-8 conversion of all of it at once.
 * @internal
 */
export function definitionDigest(definition: McpDefinition | McpDefinitionInput): string {
  const parts = canonicalParts(definition);
  const hash = createHash('sha256');
  // Keys in sorted order, as fast-json-stable-stringify writes them: args, command, entrypoint, envFrom, files
  // (and network, then sandbox, when they are there).
  hash.update(
    `{"args":${stableStringify(parts.args)},"command":${JSON.stringify(parts.command)},"entrypoint":${JSON.stringify(parts.entrypoint)},"envFrom":${stableStringify(parts.envFrom)},"files":{`,
    'utf8',
  );
  let first = true;
  for (const path of Object.keys(parts.files).sort()) {
    const content = parts.files[path];
    // fast-json-stable-stringify leaves out keys whose value is undefined; validated definitions have none.
    if (content === undefined) continue;
    hash.update(`${first ? '' : ','}${JSON.stringify(path)}:`, 'utf8');
    hash.update(JSON.stringify(content), 'utf8');
    first = false;
  }
  hash.update(
    `}${parts.network === false ? ',"network":false' : ''}${parts.sandbox === false ? ',"sandbox":false' : ''}}`,
    'utf8',
  );
  return hash.digest('hex');
}
