/**
 * How a service's tool or prompt is named on an agent's surface: `<service>__<name>`, shortened
 * deterministically when it is too long or holds characters outside `[A-Za-z0-9_-]`, and given a hash
 * suffix when two names would collide. The assignment depends only on the set of (service, name) pairs,
 * never on their order, so the same services always give the same surface.
 */
import { createHash } from 'node:crypto';

/** The longest name the surface lists (the common limit of harnesses and model APIs). */
export const MAX_SURFACE_NAME_LENGTH = 64;

/** Joins a service name and a tool or prompt name. */
export const SURFACE_NAME_SEPARATOR = '__';

const VALID_NAME = /^[A-Za-z0-9_-]+$/;
const HASH_LENGTH = 8;

/** One name to place on the surface. */
export interface NameRequest {
  /** The service (or alias) name the agent sees. */
  service: string;
  /** The tool's or prompt's own name at the service. */
  name: string;
}

/** True when `name` can be listed as is: 1–64 characters of `[A-Za-z0-9_-]`. */
export function isValidSurfaceName(name: string): boolean {
  return name.length > 0 && name.length <= MAX_SURFACE_NAME_LENGTH && VALID_NAME.test(name);
}

function identityHash(request: NameRequest, round: number): string {
  const hash = createHash('sha256');
  hash.update(request.service);
  hash.update('\u0000');
  hash.update(request.name);
  if (round > 0) hash.update(`\u0000${round}`);
  return hash.digest('hex').slice(0, HASH_LENGTH);
}

/** The name with invalid characters replaced by `_` and cut so that `_<hash>` fits in 64 characters. */
function withHashSuffix(base: string, request: NameRequest, round: number): string {
  const sanitized = base.replace(/[^A-Za-z0-9_-]/g, '_');
  const room = MAX_SURFACE_NAME_LENGTH - HASH_LENGTH - 1;
  return `${sanitized.slice(0, room)}_${identityHash(request, round)}`;
}

/**
 * Assigns a surface name to every request, in the order given. `passthrough` keeps the service's own
 * names (still shortened or suffixed when invalid or colliding, so nothing is ever dropped).
 *
 * Rules: the plain name is `<service>__<name>` (or `<name>` with `passthrough`); an invalid plain name
 * becomes its sanitized, cut form plus `_` and 8 hex digits of sha256(service NUL name); every name that
 * more than one request would get is replaced the same way for each of them; a hashed name that still
 * collides is re-hashed with a round number until all names are distinct.
 */
export function assignSurfaceNames(
  requests: readonly NameRequest[],
  options: { passthrough?: boolean } = {},
): string[] {
  const plain = requests.map((r) => (options.passthrough ? r.name : `${r.service}${SURFACE_NAME_SEPARATOR}${r.name}`));
  const count = new Map<string, number>();
  for (const name of plain) count.set(name, (count.get(name) ?? 0) + 1);
  const names = plain.map((name, i) => {
    const request = requests[i]!;
    if (isValidSurfaceName(name) && count.get(name) === 1) return name;
    return withHashSuffix(name, request, 0);
  });
  // A hashed name can only collide with another name by accident (or by a service choosing a name that
  // looks like one); re-hash the later-sorted identity until every name is distinct.
  for (let round = 1; ; round++) {
    const owners = new Map<string, number[]>();
    names.forEach((name, i) => {
      owners.set(name, [...(owners.get(name) ?? []), i]);
    });
    const clashes = [...owners.values()].filter((list) => list.length > 1);
    if (clashes.length === 0) return names;
    for (const list of clashes) {
      const sorted = [...list].sort((a, b) => compareRequests(requests[a]!, requests[b]!));
      for (const i of sorted.slice(1)) names[i] = withHashSuffix(plain[i]!, requests[i]!, round);
    }
  }
}

function compareRequests(a: NameRequest, b: NameRequest): number {
  if (a.service !== b.service) return a.service < b.service ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  return 0;
}
