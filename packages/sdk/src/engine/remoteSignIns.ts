/**
 * `scienceevolve auth login|status|logout` (SPEC §8, §13.1): signing in to a remote service of a project's
 * accepted workflow, reporting what is held (never a value), and signing out (revoking at the
 * authorization server where it offers RFC 7009 revocation). The sign-in itself is the session's
 * (`sessions/remoteAuth.ts`, the SDK's own OAuth support); the tokens live in the data dir's token store.
 */
import { SdkError } from '../errors.js';
import { remoteCredentials } from '../invocation/remoteCredentials.js';
import { redactUrl } from '../redact.js';
import { readSignIn, type SignInRecord } from '../sessions/remoteAuth.js';
import { connectRemoteService } from '../sessions/remoteService.js';
import { LOGIN_TIMEOUT_MS, type LoopbackSignInOptions, startLoopbackSignIn } from '../sessions/loopbackSignIn.js';
import { openProject } from '../store/projectStore.js';
import { listTokenStoreFiles, resourceKey, tokenStoreFile } from '../store/tokenStore.js';
import { readAccepted } from '../store/workflowVersions.js';
import type { McpServerEntry } from '../workflow/workflowSchema.js';

/** Which remote service of which project. */
export interface SignInTarget {
  dataDir: string;
  project: string;
  /** The `mcpServers` name of a remote entry of the accepted workflow. */
  service: string;
}

/** Options of {@link authLogin}. */
export interface AuthLoginOptions extends SignInTarget, Omit<LoopbackSignInOptions, 'print'> {
  /** Where the authorization URL is shown. Default: standard error. */
  print?: (line: string) => void;
  /** Where host variables are read (client secrets, headers). Default `process.env`. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
}

/** What is held for one remote service; never a token's value. */
export interface SignInStatus {
  /** The `mcpServers` names of the accepted workflow that use this resource. */
  services: string[];
  /** The resource, as shown (no query values). */
  resource: string;
  issuer?: string;
  /** Whether an access token is held. */
  signedIn: boolean;
  /** ISO time the access token expires, when the server said. */
  expiresAt?: string;
  /** Whether a refresh token is held (the sign-in renews itself). */
  refreshable: boolean;
  scope?: string;
  /** Where the record is kept. */
  path: string;
}

/** The remote entry named `service` in the project's accepted workflow (every agent's use must agree). */
async function remoteEntry(target: SignInTarget): Promise<McpServerEntry & { url: string }> {
  const paths = await openProject(target.dataDir, target.project);
  const version = await readAccepted(paths);
  if (version === undefined) {
    throw new SdkError('unknown_project', `project "${target.project}" has no accepted workflow in ${target.dataDir}`, {
      remedy: 'load the workflow first: scienceevolve workflow load <workflow.json> --data-dir … --project …',
      data: { project: target.project },
    });
  }
  const found: Array<McpServerEntry & { url: string }> = [];
  for (const agent of Object.values(version.workflow.agents)) {
    for (const entry of agent.mcpServers) {
      if (entry.name === target.service && entry.url !== undefined)
        found.push(entry as McpServerEntry & { url: string });
    }
  }
  const first = found[0];
  if (first === undefined) {
    throw new SdkError(
      'unknown_reference',
      `no agent of project "${target.project}" has a remote service "${target.service}"`,
      {
        remedy: 'name a remote entry ({ "name", "url" }) of the accepted workflow: see scienceevolve workflow show',
        data: { project: target.project, service: target.service },
      },
    );
  }
  if (found.some((e) => e.url !== first.url)) {
    throw new SdkError('usage', `the remote service "${target.service}" points at different URLs in different agents`, {
      remedy: 'give the entries different names, then sign in to each',
      data: { service: target.service },
    });
  }
  return first;
}

/**
 * Signs in to a remote service: a new sign-in replaces the held one once it completes (a login that fails or
 * times out leaves the held one as it was). With `oauth.grant: "client_credentials"`
 * no browser is involved; otherwise the authorization URL is printed and opened (`BROWSER`, else xdg-open),
 * and the redirect is taken on a loopback port. Resolves with what is now held.
 *
 * @throws SdkError `remote_auth_required` (no redirect came back in time), `remote_auth_failed` (refused),
 *   `remote_unreachable`, `unknown_reference`, `missing_env`, `insecure_file`.
 */
export async function authLogin(options: AuthLoginOptions): Promise<SignInStatus> {
  const entry = await remoteEntry(options);
  if (Object.keys(entry.headers ?? {}).some((h) => h.toLowerCase() === 'authorization')) {
    throw new SdkError(
      'usage',
      `the remote service "${entry.name}" sends its own Authorization header (from a host variable); it does not sign in`,
      {
        remedy: 'remove "Authorization" from the entry\'s "headers" to sign in with OAuth instead',
        data: { service: entry.name },
      },
    );
  }
  const store = tokenStoreFile(options.dataDir, options.project, entry.url);
  // The new sign-in starts from nothing, but the held one is kept aside: a login that does not complete (no
  // redirect in time, refused) puts it back, so a failed login never loses a working sign-in — unless a
  // sign-in with tokens was stored meanwhile (another `auth login` completed): the newer one is kept.
  const held = await store.withLock(async () => {
    const record = await store.read().catch(() => undefined);
    await store.remove();
    return record;
  });
  let completed = false;
  const restore = async () => {
    if (completed || held === undefined) return;
    await store
      .withLock(async () => {
        // This login's own partial state (a registration, a verifier) is replaced; tokens are not.
        const meanwhile = await store
          .read()
          .then((raw) => readSignIn(raw, store.path))
          .catch(() => undefined);
        if (meanwhile?.tokens === undefined) await store.write(held);
      })
      .catch(() => {});
  };
  const loopback = await startLoopbackSignIn({
    print: options.print ?? ((line) => process.stderr.write(`${line}\n`)),
    ...(options.open === undefined ? {} : { open: options.open }),
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  try {
    const credentials = remoteCredentials(
      entry,
      { dataDir: options.dataDir, projectId: options.project, hostEnv: options.hostEnv ?? process.env },
      loopback,
    );
    // The connect waits for the person: its budget is the login's, plus the time to list.
    const deadline = Date.now() + (options.timeoutMs ?? LOGIN_TIMEOUT_MS) + 30_000;
    const session = await connectRemoteService({ name: entry.name, url: entry.url, ...credentials }, { deadline });
    await session.close();
    completed = true;
  } finally {
    await loopback.close();
    await restore();
  }
  const status = (await authStatus(options)).find((s) => s.services.includes(entry.name));
  if (status === undefined || !status.signedIn) {
    throw new SdkError('remote_auth_required', `remote service "${entry.name}" did not ask for a sign-in`, {
      remedy: 'the service accepted requests without one; nothing was stored',
      data: { service: entry.name },
    });
  }
  return status;
}

/** What is held for each remote service of the project (never a value). */
export async function authStatus(target: Omit<SignInTarget, 'service'>): Promise<SignInStatus[]> {
  const paths = await openProject(target.dataDir, target.project);
  const version = await readAccepted(paths);
  const servicesOf = new Map<string, string[]>();
  for (const agent of Object.values(version?.workflow.agents ?? {})) {
    for (const entry of agent.mcpServers) {
      if (entry.url === undefined) continue;
      const key = resourceKey(entry.url);
      const names = servicesOf.get(key) ?? [];
      if (!names.includes(entry.name)) names.push(entry.name);
      servicesOf.set(key, names);
    }
  }
  const out: SignInStatus[] = [];
  for (const { path, record: raw } of await listTokenStoreFiles(target.dataDir, target.project)) {
    const record = readSignIn(raw, path);
    if (record === undefined) continue;
    const key = path.slice(path.lastIndexOf('/') + 1, -'.json'.length);
    out.push(statusOf(record, servicesOf.get(key) ?? [], path));
  }
  return out;
}

function statusOf(record: SignInRecord, services: string[], path: string): SignInStatus {
  const status: SignInStatus = {
    services,
    resource: record.resource,
    signedIn: record.tokens?.access_token !== undefined,
    refreshable: record.tokens?.refresh_token !== undefined,
    path,
  };
  if (record.issuer !== undefined) status.issuer = record.issuer;
  // A time outside the Date range (a server's huge `expires_in`, an edited file) is not shown: toISOString throws.
  const expires = record.expiresAt === undefined ? Number.NaN : new Date(record.expiresAt).getTime();
  if (!Number.isNaN(expires)) status.expiresAt = new Date(expires).toISOString();
  if (record.tokens?.scope !== undefined) status.scope = record.tokens.scope;
  return status;
}

/** What {@link authLogout} did. */
export interface SignOutResult {
  service: string;
  /** Whether a sign-in was held. */
  removed: boolean;
  /** Whether the authorization server confirmed revocation (false when it offers none or refused). */
  revoked: boolean;
}

/**
 * Signs out of a remote service: revokes the refresh and access tokens where the authorization server
 * offers revocation (RFC 7009), then removes the record. The record is removed even when revocation fails.
 */
export async function authLogout(target: SignInTarget): Promise<SignOutResult> {
  const entry = await remoteEntry(target);
  const store = tokenStoreFile(target.dataDir, target.project, entry.url);
  return store.withLock(async () => {
    const record = readSignIn(await store.read(), store.path);
    if (record === undefined) return { service: entry.name, removed: false, revoked: false };
    let revoked = false;
    try {
      revoked = await revoke(record);
    } finally {
      await store.remove();
    }
    return { service: entry.name, removed: true, revoked };
  });
}

/** Milliseconds the revocation requests of one logout may take in all before they count as refused: 10,000 (10 s). */
export const REVOKE_TIMEOUT_MS = 10_000;

/**
 * RFC 7009: each held token posted to the server's `revocation_endpoint`; true when every post was accepted.
 * The posts are bounded by {@link REVOKE_TIMEOUT_MS} in all: a server that never answers does not hold
 * `auth logout` (and the sign-in's lock) for ever.
 */
async function revoke(record: SignInRecord): Promise<boolean> {
  const endpoint = (record.discovery?.authorizationServerMetadata as { revocation_endpoint?: unknown } | undefined)
    ?.revocation_endpoint;
  if (typeof endpoint !== 'string' || record.tokens === undefined || !revocationEndpointAllowed(endpoint)) {
    return false;
  }
  const client = record.client;
  let ok = true;
  const deadline = AbortSignal.timeout(REVOKE_TIMEOUT_MS);
  const held: Array<[string, string]> = [];
  if (record.tokens.refresh_token !== undefined) held.push([record.tokens.refresh_token, 'refresh_token']);
  held.push([record.tokens.access_token, 'access_token']);
  for (const [token, hint] of held) {
    const body = new URLSearchParams({ token, token_type_hint: hint });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (client?.client_secret !== undefined) {
      headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`).toString('base64')}`;
    } else if (client !== undefined) {
      body.set('client_id', client.client_id);
    }
    try {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers,
        body,
        redirect: 'error',
        signal: deadline,
      });
      await response.arrayBuffer().catch(() => {});
      ok &&= response.ok;
    } catch {
      ok = false;
    }
  }
  return ok;
}

/**
 * Whether tokens may be posted to `endpoint`: an `https:` URL, or `http:` on a loopback host (a local
 * authorization server), without user information. The endpoint is read back from the token file, and a
 * token is never sent in clear over a network or to an address an edited file made up.
 * @internal
 */
export function revocationEndpointAllowed(endpoint: string): boolean {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') return false;
  if (url.protocol === 'https:') return true;
  const host = url.hostname;
  return url.protocol === 'http:' && (host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host));
}

/** The resource `url` as status shows it. */
export const shownResource = redactUrl;
