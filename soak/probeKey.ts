/**
 * What `services probe --agent A` of a workflow would start, as one key: two accepted documents with the
 * same key start the same processes the same way, so the fuzzer probes one of them. The key covers the
 * probed agent's name, each of its services in order (its name, and its URL or its definition's name and
 * whole definition: files, entrypoint, command, args, envFrom, network) and the whole `orchestration`
 * block (sandbox policy and every other setting). It leaves out what a probe does not start: other
 * agents, definitions no service of the agent names, instructions and harness settings.
 */
import { createHash } from 'node:crypto';

/** A JSON value as nested arrays with object keys sorted, so key order never changes the key. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return ['a', ...value.map(canonical)];
  if (typeof value === 'object' && value !== null)
    return [
      'o',
      ...Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    ];
  return value;
}

function get(o: unknown, key: string): unknown {
  return typeof o === 'object' && o !== null && !Array.isArray(o) && Object.hasOwn(o, key)
    ? (o as Record<string, unknown>)[key]
    : undefined;
}

/** The agent a probe of `doc` uses: `main` when it has one, else its first agent (undefined: none). */
export function probedAgent(doc: unknown): string | undefined {
  const agents = get(doc, 'agents');
  if (typeof agents !== 'object' || agents === null || Array.isArray(agents)) return undefined;
  if (Object.hasOwn(agents, 'main')) return 'main';
  return Object.keys(agents)[0];
}

/** The sha256 (hex) of what a probe of `doc`'s {@link probedAgent} would start. */
export function probeKey(doc: unknown): string {
  const agent = probedAgent(doc);
  const servers = get(get(get(doc, 'agents'), agent ?? ''), 'mcpServers');
  const defs = get(doc, 'mcpDefinitions');
  const started = (Array.isArray(servers) ? servers : []).map((s) => {
    const project = get(s, 'project');
    return {
      name: get(s, 'name'),
      url: get(s, 'url'),
      project,
      definition: typeof project === 'string' ? get(defs, project) : undefined,
    };
  });
  const what = { agent, orchestration: get(doc, 'orchestration'), started };
  return createHash('sha256')
    .update(JSON.stringify(canonical(what)))
    .digest('hex');
}
