/**
 * Listing a connected server (SPEC §5.5): every page of `tools/list`, and of `resources/list`,
 * `resources/templates/list` and `prompts/list` where the server declares the capability. The official
 * client's no-argument list calls walk every page (at most 64). The client keeps the `tools/list` answer
 * (it never serves it from cache without a server hint) and validates tool results against their output
 * schemas with it.
 */
import { Client, type ClientOptions, type Implementation } from '@modelcontextprotocol/client';
import type { ServiceCatalog } from './serviceSession.js';

/** The client identity the SDK gives in `initialize`. */
export const CLIENT_INFO: Implementation = { name: 'scienceevolve', version: '0.1.0' };

/**
 * The official client every service session talks through (project and remote alike): the SDK's
 * identity, no client capabilities yet, and `options` of the kind (a remote service negotiates its
 * protocol era). What the SDK answers a service itself is declared here, once for both kinds.
 */
export function newServiceClient(options: Omit<ClientOptions, 'capabilities'> = {}): Client {
  const client = new Client(CLIENT_INFO, { ...options, capabilities: {} });
  watchListChangedNotifications(client);
  routeProgressNotifications(client);
  return client;
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
 * Lists everything `client` offers. The four lists run concurrently (JSON-RPC allows it and it saves
 * round trips); each request gets `timeoutMs` and `signal`.
 */
export async function listCatalog(
  client: Client,
  options: { signal: AbortSignal; timeoutMs: () => number },
): Promise<ServiceCatalog> {
  const capabilities = client.getServerCapabilities() ?? {};
  const request = () => ({ signal: options.signal, timeout: options.timeoutMs() });
  const [tools, resources, resourceTemplates, prompts] = await Promise.all([
    capabilities.tools ? client.listTools(undefined, request()).then((r) => r.tools) : [],
    capabilities.resources ? client.listResources(undefined, request()).then((r) => r.resources) : [],
    capabilities.resources ? client.listResourceTemplates(undefined, request()).then((r) => r.resourceTemplates) : [],
    capabilities.prompts ? client.listPrompts(undefined, request()).then((r) => r.prompts) : [],
  ]);
  const catalog: ServiceCatalog = { tools, resources, resourceTemplates, prompts, capabilities };
  const serverInfo = client.getServerVersion();
  if (serverInfo !== undefined) catalog.serverInfo = serverInfo;
  const protocolVersion = client.getNegotiatedProtocolVersion();
  if (protocolVersion !== undefined) catalog.protocolVersion = protocolVersion;
  return catalog;
}
