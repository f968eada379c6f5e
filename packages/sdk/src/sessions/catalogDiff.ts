/**
 * What changed in a service's catalog between two listings (after a `notifications/…/list_changed`), by
 * each item's own name: tools and prompts by name, resources by URI, templates by URI template. An item
 * listed under the same name with any other field different counts as changed.
 */
import stableStringify from 'fast-json-stable-stringify';
import type { CatalogChange, CatalogNames } from './serviceEvents.js';
import type { ServiceCatalog } from './serviceSession.js';

function diffList<T>(before: readonly T[], after: readonly T[], keyOf: (item: T) => string) {
  const old = new Map(before.map((item) => [keyOf(item), stableStringify(item)]));
  const fresh = new Map(after.map((item) => [keyOf(item), stableStringify(item)]));
  const added = [...fresh.keys()].filter((key) => !old.has(key));
  const removed = [...old.keys()].filter((key) => !fresh.has(key));
  const changed = [...fresh.keys()].filter((key) => old.has(key) && old.get(key) !== fresh.get(key));
  return { added, removed, changed };
}

/** What changed from `before` to `after`, per list, by each item's own name (or URI). */
export function diffCatalogs(
  before: ServiceCatalog,
  after: ServiceCatalog,
  lists: CatalogChange['lists'],
): CatalogChange {
  const tools = diffList(before.tools, after.tools, (t) => t.name);
  const resources = diffList(before.resources, after.resources, (r) => r.uri);
  const templates = diffList(before.resourceTemplates, after.resourceTemplates, (r) => r.uriTemplate);
  const prompts = diffList(before.prompts, after.prompts, (p) => p.name);
  const pick = (which: 'added' | 'removed' | 'changed'): CatalogNames => ({
    tools: tools[which],
    resources: resources[which],
    resourceTemplates: templates[which],
    prompts: prompts[which],
  });
  return { lists, added: pick('added'), removed: pick('removed'), changed: pick('changed') };
}

/** Whether `change` names anything added, removed or changed. */
export function hasChanges(change: CatalogChange): boolean {
  return [change.added, change.removed, change.changed].some((names) =>
    Object.values(names).some((list: unknown[]) => list.length > 0),
  );
}
