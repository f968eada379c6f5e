/**
 * References in an `apply_workflow` snapshot (SPEC §9): an accepted definition may be stated as
 * `{ "accepted": "<digest>" }` instead of its files, so a model that adds one service never echoes the
 * sources of the others. A reference resolves to the accepted definition of the same name whose digest it
 * names. Resolution happens before validation, so the limits are checked on the resolved snapshot. A
 * workflow file the operator loads never takes references (validation says so).
 */
import stableStringify from 'fast-json-stable-stringify';
import { toJsonPath } from '../workflow/jsonPath.js';
import type { ValidationIssue } from '../workflow/validate.js';
import type { McpDefinition, Workflow } from '../workflow/workflowSchema.js';
import { definitionSummary, safeDigest } from './workflowView.js';
import { isPlainObject } from '../plainObject.js';

/** The one key of a reference: `{ "accepted": "<digest>" }`. */
export const REFERENCE_KEY = 'accepted';

/** A digest as `get_workflow` reports it: 64 lowercase hex characters. */
const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

/** What {@link resolveReferences} found. */
export interface ResolvedSnapshot {
  /** The snapshot with every valid reference replaced by its accepted definition. */
  snapshot: unknown;
  /** One issue per bad reference (or per echoed `digest` that does not match), each with its JSON path and the fix. */
  issues: ValidationIssue[];
}

/**
 * Replaces each `{ "accepted": "<digest>" }` in `snapshot.mcpDefinitions` by the accepted definition of
 * that name (from `accepted`, the workflow in force), when the digest is that definition's digest. A bad
 * reference becomes an issue; in the returned snapshot it stands as the accepted definition of its name
 * (or a tiny placeholder), so that validating the rest reports only the rest's own errors — a snapshot
 * with any issue here is never applied.
 */
export function resolveReferences(snapshot: unknown, accepted: Workflow | undefined): ResolvedSnapshot {
  if (!isPlainObject(snapshot) || !Object.hasOwn(snapshot, 'mcpDefinitions')) {
    return { snapshot, issues: [] };
  }
  const definitions = snapshot.mcpDefinitions;
  if (!isPlainObject(definitions)) return { snapshot, issues: [] };

  const acceptedDefinitions: Record<string, McpDefinition> = accepted?.mcpDefinitions ?? {};
  const digests = new Map<string, string | undefined>();
  const digestOf = (name: string): string | undefined => {
    if (!digests.has(name)) {
      digests.set(name, Object.hasOwn(acceptedDefinitions, name) ? safeDigest(acceptedDefinitions[name]) : undefined);
    }
    return digests.get(name);
  };
  const acceptedNames = Object.keys(acceptedDefinitions).filter((n) => Object.hasOwn(acceptedDefinitions, n));
  const nameWithDigest = (digest: string): string | undefined => acceptedNames.find((n) => digestOf(n) === digest);

  const issues: ValidationIssue[] = [];
  const resolved: Record<string, unknown> = {};
  for (const [name, definition] of Object.entries(definitions)) {
    const isAccepted = Object.hasOwn(acceptedDefinitions, name);
    const at = ['mcpDefinitions', name];
    const issue = (path: PropertyKey[], code: ValidationIssue['code'], message: string) =>
      issues.push({ code, path: toJsonPath(path), message });
    const keep = () => `"${name}": {"accepted": "${digestOf(name)}"}`;

    if (!isPlainObject(definition) || !Object.hasOwn(definition, REFERENCE_KEY)) {
      if (isPlainObject(definition) && Object.hasOwn(definition, 'digest')) {
        // get_workflow shows each definition with its digest (in full, or as a summary); a model sends that
        // view back as it is, with one service added. See {@link echoedDefinition}.
        const echoed = echoedDefinition(
          name,
          definition,
          isAccepted ? acceptedDefinitions[name] : undefined,
          digestOf(name),
        );
        if (echoed.issue !== undefined) issue([...at, ...echoed.issue.path], echoed.issue.code, echoed.issue.message);
        put(resolved, name, echoed.definition ?? PLACEHOLDER);
      } else {
        put(resolved, name, definition);
      }
      continue;
    }

    const digest = definition[REFERENCE_KEY];
    const extra = Object.keys(definition).filter((key) => key !== REFERENCE_KEY);
    for (const key of extra) {
      issue(
        [...at, key],
        'invalid_workflow',
        `a reference is {"accepted": "<digest>"} alone: remove "${key}" to keep the accepted definition, or remove "accepted" and state the definition in full`,
      );
    }
    const placeholder = isAccepted ? acceptedDefinitions[name] : PLACEHOLDER;
    if (typeof digest !== 'string' || !DIGEST_PATTERN.test(digest)) {
      issue(
        [...at, REFERENCE_KEY],
        'invalid_workflow',
        isAccepted
          ? `must be the 64-character hex digest get_workflow reports for "${name}": send ${keep()}`
          : `must be the 64-character hex digest get_workflow reports; "${name}" is not an accepted definition, so state it in full (${notAccepted(acceptedNames)})`,
      );
      put(resolved, name, placeholder);
      continue;
    }
    const owner = nameWithDigest(digest);
    if (isAccepted && digestOf(name) === digest) {
      put(resolved, name, acceptedDefinitions[name]);
      continue;
    }
    let message: string;
    if (isAccepted && owner !== undefined) {
      message = `"${digest}" is the digest of the accepted definition "${owner}", not of "${name}": a reference keeps a definition only under its own name; send ${keep()}`;
    } else if (isAccepted) {
      message = `"${digest}" is not the accepted digest of "${name}": to keep it, send ${keep()} (the digest get_workflow reports); a changed service is stated in full (by Main: under a new name)`;
    } else if (owner !== undefined) {
      message = `there is no accepted definition "${name}": "${digest}" is the digest of the accepted "${owner}", and a reference keeps a definition only under its own name; keep "${owner}": {"accepted": "${digest}"} and give an agent {"name": "${name}", "project": "${owner}"} to use it under another name`;
    } else {
      message = `there is no accepted definition "${name}" to refer to (${notAccepted(acceptedNames)}); a new service is stated in full: {"entrypoint": …, "files": {…}}. References are valid only in an apply_workflow snapshot, for definitions of the accepted workflow`;
    }
    issue([...at, REFERENCE_KEY], 'unknown_reference', message);
    put(resolved, name, placeholder);
  }
  return { snapshot: { ...snapshot, mcpDefinitions: resolved }, issues };
}

/**
 * A definition sent with the `digest` get_workflow showed beside it (SPEC §9: the natural get → add → apply
 * echoes every definition back):
 * - an accepted name whose `digest` is its accepted digest reads as a reference: a summary (no `files`)
 *   resolves to the accepted definition, when every setting it states is the accepted one (else
 *   `immutable_definition` at the first that differs); a full definition is taken without `digest` (if its
 *   files were changed, the immutability rule says so at the definition);
 * - an accepted name whose `digest` is anything else is `immutable_definition`, naming the definition,
 *   its accepted digest and the fix;
 * - a new name: a full definition is taken without `digest`; a summary of a definition that is not
 *   accepted has nothing to resolve to (`unknown_reference`).
 */
function echoedDefinition(
  name: string,
  definition: Record<string, unknown>,
  accepted: McpDefinition | undefined,
  acceptedDigest: string | undefined,
): {
  definition: unknown;
  issue?: { path: PropertyKey[]; code: ValidationIssue['code']; message: string };
} {
  const { digest: sent, ...rest } = definition;
  const full = Object.hasOwn(rest, 'files');
  const fix = (digest: string) =>
    `send it unchanged, as get_workflow reports it (with "digest": "${digest}"), or as {"accepted": "${digest}"}; to change the service, add the new version under a new name and move the agents' references to it`;
  if (accepted === undefined || acceptedDigest === undefined) {
    if (full) return { definition: rest };
    return {
      definition: undefined,
      issue: {
        path: ['digest'],
        code: 'unknown_reference',
        message: `there is no accepted definition "${name}" for this summary to stand for: a new service is stated in full, {"entrypoint": …, "files": {…}} (a "digest" beside it is ignored)`,
      },
    };
  }
  if (sent !== acceptedDigest) {
    return {
      definition: accepted,
      issue: {
        path: ['digest'],
        code: 'immutable_definition',
        message: `"digest" ${JSON.stringify(sent)} is not the digest of the accepted definition "${name}" (${acceptedDigest}), and an accepted definition cannot change: ${fix(acceptedDigest)}`,
      },
    };
  }
  if (full) return { definition: rest };
  const summary = definitionSummary(accepted) as Record<string, unknown>;
  for (const key of Object.keys(rest)) {
    const same = Object.hasOwn(summary, key) && stableStringify(rest[key]) === stableStringify(summary[key]);
    if (!same) {
      return {
        definition: accepted,
        issue: {
          path: [key],
          code: 'immutable_definition',
          message: `"${key}" differs from the accepted definition "${name}" (digest ${acceptedDigest}), which cannot change: ${fix(acceptedDigest)}`,
        },
      };
    }
  }
  return { definition: accepted };
}

/** Stands for a reference that does not resolve, so that validating the rest of the snapshot stays quiet about it. */
const PLACEHOLDER = Object.freeze({ entrypoint: 'server.cjs', files: Object.freeze({ 'server.cjs': '//' }) });

function notAccepted(names: string[]): string {
  return names.length === 0
    ? 'no definition is accepted yet'
    : `accepted: ${names
        .slice(0, 32)
        .map((n) => `"${n}"`)
        .join(', ')}`;
}

/** Sets an own enumerable property, even for a name such as `__proto__` that plain assignment would not set. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
