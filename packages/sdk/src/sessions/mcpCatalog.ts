/**
 * Making and listing every MCP client of a service session (SPEC §7): the SDK's identity and the one
 * place for client capabilities and handlers (`roots`: the invocation's workspace as one `file://` root),
 * and every page of `tools/list`, and of `resources/list`, `resources/templates/list` and `prompts/list`
 * where the server declares the capability. Pages are walked here (not by the official client's own walk,
 * which ends quietly at a repeated cursor): at most {@link MAX_LIST_PAGES} pages or
 * {@link MAX_LIST_ENTRIES} entries a list, a repeated cursor is an error, and a declared list the server
 * answers with "method not found" (-32601) counts as empty and is named in `missingLists`.
 */
import { pathToFileURL } from 'node:url';
import { Client, type ClientOptions, type Implementation } from '@modelcontextprotocol/client';
import { SdkError } from '../errors.js';
import type { ListFreshness, ServiceCatalog } from './serviceSession.js';
import { answerQuestions } from './elicitation.js';
import { TASK_CLIENT_CAPABILITIES } from './tasks.js';

/** The client identity the SDK gives in `initialize`. */
export const CLIENT_INFO: Implementation = { name: 'scienceevolve', version: '0.1.0' };

/** Pages of one list after which listing stops with `list_too_long`: 100. */
export const MAX_LIST_PAGES = 100;

/** Entries of one list (all pages together) above which listing stops with `list_too_long`: 10,000. */
export const MAX_LIST_ENTRIES = 10_000;

/** The JSON-RPC code of "method not found". */
const METHOD_NOT_FOUND = -32601;

/** What the SDK answers a service itself. */
export interface ServiceClientContext {
  /**
   * The invocation's workspace (absolute path; in Git-on, the role's worktree): the client declares
   * `roots` and answers `roots/list` with it as one `file://` root. Without it, no `roots` are declared.
   */
  workspace?: string;
}

/** One progress notification, without its token. */
export interface ServiceProgress {
  progress: number;
  total?: number;
  message?: string;
}

// Progress by the SDK's own tokens. The official client looks its own progress handler up one microtask
// after a response has already removed it, so a service's last progress, read together with its result,
// would be dropped; a route here lives until the caller has the result and stops it.
const progressRoutes = new WeakMap<Client, Map<string, (progress: ServiceProgress) => void>>();
let progressTokens = 0;

function routeProgressNotifications(client: Client): void {
  const routes = new Map<string, (progress: ServiceProgress) => void>();
  progressRoutes.set(client, routes);
  client.setNotificationHandler('notifications/progress', (notification) => {
    const { progressToken, progress, total, message } = notification.params;
    routes.get(String(progressToken))?.({
      progress,
      ...(total === undefined ? {} : { total }),
      ...(message === undefined ? {} : { message }),
    });
  });
}

/**
 * A fresh `progressToken` for a request to `client` (made by {@link newServiceClient}) whose progress
 * notifications go to `listener` until `stop` is called.
 */
export function routeProgress(
  client: Client,
  listener: (progress: ServiceProgress) => void,
): { token: string; stop: () => void } {
  const token = `scienceevolve-progress-${++progressTokens}`;
  const routes = progressRoutes.get(client);
  routes?.set(token, listener);
  return { token, stop: () => routes?.delete(token) };
}

/** The list a `notifications/<list>/list_changed` names. */
export type ChangedList = 'tools' | 'resources' | 'prompts';

const LIST_CHANGED_METHODS = [
  ['notifications/tools/list_changed', 'tools'],
  ['notifications/resources/list_changed', 'resources'],
  ['notifications/prompts/list_changed', 'prompts'],
] as const;

// Who hears a client's list changes: the session that lists it sets itself here (onListChanged).
const listChangeListeners = new WeakMap<Client, (list: ChangedList) => void>();

function watchListChangedNotifications(client: Client): void {
  for (const [method, list] of LIST_CHANGED_METHODS) {
    client.setNotificationHandler(method, () => listChangeListeners.get(client)?.(list));
  }
}

/**
 * Has `listener` told of every `notifications/{tools,resources,prompts}/list_changed` the server of
 * `client` (made by {@link newServiceClient}) sends from now on; one listener per client, the last one set.
 */
export function onListChanged(client: Client, listener: (list: ChangedList) => void): void {
  listChangeListeners.set(client, listener);
}

/**
 * The official client every service session talks through (project and remote alike): the SDK's
 * identity, the `roots` capability when a workspace is known, and `options` of the kind (a remote
 * service negotiates its protocol era). What the SDK answers a service itself is declared here, once for
 * both kinds.
 */
export function newServiceClient(
  options: Omit<ClientOptions, 'capabilities'> = {},
  context: ServiceClientContext = {},
): Client {
  const { workspace } = context;
  const client = new Client(CLIENT_INFO, {
    ...options,
    capabilities: {
      ...TASK_CLIENT_CAPABILITIES,
      elicitation: { form: {}, url: {} },
      ...(workspace === undefined ? {} : { roots: {} }),
    },
  });
  answerQuestions(client);
  if (workspace !== undefined) {
    const root = { uri: pathToFileURL(workspace).href, name: 'workspace' };
    client.setRequestHandler('roots/list', () => ({ roots: [{ ...root }] }));
  }
  watchListChangedNotifications(client);
  routeProgressNotifications(client);
  return client;
}

/** The four lists a service may offer, by method. */
const LISTS = [
  { method: 'tools/list', key: 'tools', capability: 'tools' },
  { method: 'resources/list', key: 'resources', capability: 'resources' },
  { method: 'resources/templates/list', key: 'resourceTemplates', capability: 'resources' },
  { method: 'prompts/list', key: 'prompts', capability: 'prompts' },
] as const;

/** A list method of a service. */
export type ListMethod = (typeof LISTS)[number]['method'];

/**
 * Lists everything `client` offers. The four lists run concurrently (JSON-RPC allows it and it saves
 * round trips); each page request gets `timeoutMs()` and `signal`.
 *
 * @throws SdkError `list_too_long` (a list past {@link MAX_LIST_PAGES} pages or {@link MAX_LIST_ENTRIES}
 *   entries) or `list_cursor_repeated` (a `nextCursor` the list already gave), with `data.list`; the
 *   caller names the service. Any other failure of a request is thrown as the client gave it.
 */
export async function listCatalog(
  client: Client,
  options: { signal: AbortSignal; timeoutMs: () => number },
): Promise<ServiceCatalog> {
  const capabilities = client.getServerCapabilities() ?? {};
  const missing = new Set<ListMethod>();
  const freshness: NonNullable<ServiceCatalog['freshness']> = {};
  const [tools, resources, resourceTemplates, prompts] = await Promise.all(
    LISTS.map(async ({ method, key, capability }) => {
      if (!capabilities[capability]) return [];
      try {
        const listed = await listAll(client, method, key, options);
        if (listed.freshness !== undefined) freshness[key] = listed.freshness;
        return listed.entries;
      } catch (error) {
        if (jsonRpcCode(error) !== METHOD_NOT_FOUND) throw error;
        missing.add(method);
        return [];
      }
    }),
  );
  const catalog: ServiceCatalog = {
    tools: tools as ServiceCatalog['tools'],
    resources: resources as ServiceCatalog['resources'],
    resourceTemplates: resourceTemplates as ServiceCatalog['resourceTemplates'],
    prompts: prompts as ServiceCatalog['prompts'],
    capabilities,
    // In the fixed order of LISTS, whatever order the answers came in.
    missingLists: LISTS.map((l) => l.method).filter((m) => missing.has(m)),
  };
  if (Object.keys(freshness).length > 0) catalog.freshness = freshness;
  const serverInfo = client.getServerVersion();
  if (serverInfo !== undefined) catalog.serverInfo = serverInfo;
  const protocolVersion = client.getNegotiatedProtocolVersion();
  if (protocolVersion !== undefined) catalog.protocolVersion = protocolVersion;
  return catalog;
}

/** Every page of one list, within the bounds, and the freshness hints of its first page. */
async function listAll(
  client: Client,
  method: ListMethod,
  key: (typeof LISTS)[number]['key'],
  options: { signal: AbortSignal; timeoutMs: () => number },
): Promise<{ entries: unknown[]; freshness?: ListFreshness }> {
  const entries: unknown[] = [];
  let freshness: ListFreshness | undefined;
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    const answer = (await client.request({ method, ...(cursor === undefined ? {} : { params: { cursor } }) } as never, {
      signal: options.signal,
      timeout: options.timeoutMs(),
    })) as Record<string, unknown>;
    if (page === 1) freshness = freshnessOf(answer);
    const items = answer[key];
    if (Array.isArray(items)) entries.push(...items);
    if (entries.length > MAX_LIST_ENTRIES) throw tooLong(method, page, entries.length, 'entries');
    const next = answer.nextCursor;
    if (typeof next !== 'string') return freshness === undefined ? { entries } : { entries, freshness };
    if (seen.has(next) || next === cursor) {
      throw new SdkError('list_cursor_repeated', `${method} gave the cursor ${JSON.stringify(next)} a second time`, {
        remedy: "Fix the service's pagination: each nextCursor must lead to a new page, and the last page has none.",
        data: { list: method, page, cursor: next },
      });
    }
    if (page >= MAX_LIST_PAGES) throw tooLong(method, page, entries.length, 'pages');
    seen.add(next);
    cursor = next;
  }
}

/** A list result's `ttlMs` (a non-negative finite number) and `cacheScope` (a string), when it has them. */
function freshnessOf(answer: Record<string, unknown>): ListFreshness | undefined {
  const { ttlMs, cacheScope } = answer;
  const hints: ListFreshness = {
    ...(typeof ttlMs === 'number' && Number.isFinite(ttlMs) && ttlMs >= 0 ? { ttlMs } : {}),
    ...(typeof cacheScope === 'string' ? { cacheScope } : {}),
  };
  return Object.keys(hints).length > 0 ? hints : undefined;
}

function tooLong(method: ListMethod, pages: number, entries: number, bound: 'pages' | 'entries'): SdkError {
  const limit = bound === 'pages' ? `${MAX_LIST_PAGES} pages` : `${MAX_LIST_ENTRIES} entries`;
  return new SdkError('list_too_long', `${method} went past ${limit} (${entries} entries in ${pages} pages)`, {
    remedy: `Make the service offer fewer entries (at most ${MAX_LIST_ENTRIES} in at most ${MAX_LIST_PAGES} pages a list).`,
    data: { list: method, pages, entries, maxPages: MAX_LIST_PAGES, maxEntries: MAX_LIST_ENTRIES },
  });
}

/** A JSON-RPC error's numeric code, read by value (the client's `ProtocolError` carries it as `code`). */
function jsonRpcCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
