/**
 * Signing in to a remote service (SPEC §8): OAuth 2.1 on the official v2 client's own auth support —
 * `auth()` does RFC 9728 resource metadata (from the 401's `WWW-Authenticate` or the well-known URL), RFC
 * 8414 / OpenID discovery, PKCE S256, RFC 8707 `resource`, client ID metadata documents, dynamic
 * registration, the issuer stamp on stored credentials and RFC 9207 `iss`; nothing of the protocol is
 * written here. What is ours:
 * - where the sign-in is kept ({@link SignInStore}: the data dir, written by the store room), re-read and
 *   refreshed under a cross-process lock, so two processes refreshing at once never force a new login
 *   (the second finds the first's new token and uses it);
 * - when a person is asked: only through an {@link InteractiveAuthorizer} (`auth login`, a loopback
 *   redirect). A run never is: it fails with `remote_auth_required` whose fix is the exact `auth login`
 *   command, or `remote_auth_failed` when a refresh or a client-credentials grant was refused;
 * - client credentials for unattended runs, through the SDK's `ClientCredentialsProvider` and
 *   `PrivateKeyJwtProvider`, with the secret or key read from a host variable or a 0600 file.
 * Tokens go only to the resource they were issued for (the transport sends them to the entry's URL only;
 * the SDK refuses a stored credential at another authorization server).
 */
import {
  type AuthProvider,
  auth,
  extractWWWAuthenticateParams,
  type FetchLike,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import * as z from 'zod';
import { isSdkError, SdkError } from '../errors.js';
import { errorText, redactText, redactUrl } from '../redact.js';
import type { RecordFile } from '../schemas/recordFile.js';
import { brandOf } from './remoteAuthErrors.js';
import { StoreProvider } from './signInProvider.js';

/** Milliseconds before expiry at which a held token is refreshed before it is used: 60,000 (60 s). */
export const REFRESH_AHEAD_MS = 60_000;

/** The stored sign-in record as read back (anything in the data dir may have been edited). */
export const SignInRecordSchema = z.looseObject({
  resource: z.string(),
  issuer: z.string().optional(),
  tokens: z.looseObject({ access_token: z.string(), token_type: z.string() }).optional(),
  expiresAt: z.number().optional(),
  savedAt: z.number().optional(),
  client: z.looseObject({ client_id: z.string() }).optional(),
  discovery: z.looseObject({ authorizationServerUrl: z.string() }).optional(),
});

/** What is kept of one sign-in (one project, one resource): the store's record, 0600 in the data dir. */
export interface SignInRecord {
  /** The resource (the service URL as shown: no query values, no user info). */
  resource: string;
  /** The authorization server that issued the tokens (its `issuer`), once known. */
  issuer?: string;
  /** The tokens, stamped with their issuer by the SDK. */
  tokens?: StoredOAuthTokens;
  /** Epoch milliseconds when `tokens.access_token` expires (from `expires_in`), when the server said. */
  expiresAt?: number;
  /** Epoch milliseconds when the tokens were saved. */
  savedAt?: number;
  /** The registered client (dynamic registration or client ID metadata document). */
  client?: StoredOAuthClientInformation;
  /** Discovery results, so a refresh does not repeat discovery. */
  discovery?: OAuthDiscoveryState;
}

/**
 * Where one sign-in is kept: implemented by the store room (`store/tokenStore.ts`), keyed by project and
 * resource, the record holding its issuer; `read()`'s value is checked by {@link SignInRecordSchema}.
 */
export type SignInStore = RecordFile<SignInRecord>;

/** What a person does to sign in: open `url` and resolve with the redirect's query (code, state, iss). */
export interface InteractiveAuthorizer {
  /** The loopback redirect URL the authorization server sends the browser back to. */
  readonly redirectUrl: string;
  /** Shows and opens the authorization URL. */
  open(url: URL): Promise<void>;
  /** Resolves with the redirect's query parameters once the browser comes back (rejects on timeout). */
  callback(): Promise<URLSearchParams>;
}

/** A pre-registered client's secret or key, already read from its variable or file (never stored). */
export interface ClientCredentials {
  clientId: string;
  /** `client_credentials` for unattended sign-in; `authorization_code` (a pre-registered client for `auth login`). */
  grant: 'authorization_code' | 'client_credentials';
  clientSecret?: string;
  authMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  privateKey?: string;
  algorithm?: string;
}

/** How one remote session signs in. */
export interface RemoteSignInOptions {
  /** The service URL (the protected resource). */
  url: string;
  /** The service name, for messages. */
  service: string;
  store: SignInStore;
  /** The exact command that signs in (named in `remote_auth_required`), e.g. `scienceevolve auth login …`. */
  loginCommand: string;
  /** Present for `auth login` only: how a person is asked. */
  interactive?: InteractiveAuthorizer;
  /** A pre-registered client, with its secret or key. */
  client?: ClientCredentials;
  /** The scope to ask for when the server names none. */
  scope?: string;
  /** This client's metadata document URL (https), used where the server supports it. */
  clientMetadataUrl?: string;
  /** Step-up re-authorizations per request before giving up: default 1. */
  maxStepUps?: number;
}

/** `raw` checked as a {@link SignInRecord}; `io_error` naming `path` (never a value) when it is not one. */
export function readSignIn(raw: unknown, path: string): SignInRecord | undefined {
  if (raw === undefined) return undefined;
  const parsed = SignInRecordSchema.safeParse(raw);
  if (!parsed.success) {
    throw new SdkError('io_error', `the sign-in file ${path} is not a sign-in record`, {
      remedy: 'remove it and sign in again (scienceevolve auth logout, then auth login)',
      data: { path },
    });
  }
  return parsed.data as SignInRecord;
}

/**
 * The transport's auth provider for one remote session: the bearer token of the stored sign-in, refreshed
 * ahead of expiry and on a 401 under the store's lock. Also the `OAuthClientProvider` the SDK's `auth()`
 * works through (it is given to `auth()`, never to the transport, so every refresh is ours to serialize).
 */
export class RemoteSignIn implements AuthProvider {
  private record: SignInRecord | undefined;
  private loaded = false;
  private readonly provider: StoreProvider;
  /** The token last handed to the transport (what a 401 refused). */
  private sentToken: string | undefined;
  /** Secrets this sign-in may meet, for message redaction. */
  private readonly secrets: string[] = [];

  constructor(private readonly options: RemoteSignInOptions) {
    this.provider = new StoreProvider(this, options);
    if (options.client?.clientSecret) this.secrets.push(options.client.clientSecret);
    if (options.client?.privateKey) this.secrets.push(options.client.privateKey);
  }

  /** The record as last read or written (loading it first). */
  async current(): Promise<SignInRecord | undefined> {
    if (!this.loaded) {
      this.record = readSignIn(await this.options.store.read(), this.options.store.path);
      this.loaded = true;
    }
    return this.record;
  }

  /** Keeps `record` in memory and in the store. */
  async save(record: SignInRecord): Promise<void> {
    this.record = record;
    this.loaded = true;
    await this.options.store.write(record);
  }

  /** Drops the tokens (or everything) from memory and the store. */
  async forget(what: 'tokens' | 'all'): Promise<void> {
    const record = await this.current();
    if (record === undefined) return;
    if (what === 'all') {
      this.record = undefined;
      await this.options.store.remove();
      return;
    }
    const { tokens: _t, expiresAt: _e, savedAt: _s, ...rest } = record;
    await this.save(rest);
  }

  async token(): Promise<string | undefined> {
    const record = await this.current();
    let token = record?.tokens?.access_token;
    // Renewable only with a refresh token or the client-credentials grant: a token that cannot be renewed is
    // used until the server refuses it (a 401 then asks for a sign-in), not given up 60 s early.
    const renewable =
      record?.tokens?.refresh_token !== undefined || this.options.client?.grant === 'client_credentials';
    if (
      token !== undefined &&
      renewable &&
      record?.expiresAt !== undefined &&
      record.expiresAt - Date.now() < REFRESH_AHEAD_MS
    ) {
      // Ahead of expiry: refreshed once under the lock (a token another process refreshed meanwhile is taken).
      await this.authorize({ refusedToken: token });
      token = this.record?.tokens?.access_token;
    }
    this.sentToken = token;
    return token;
  }

  async onUnauthorized(ctx: { response: Response; serverUrl: URL }): Promise<void> {
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(ctx.response);
    // A 401 on a token the server took before: discovery again, so a server that now names another
    // authorization server is noticed (the stored token, stamped with the old issuer, is then not used).
    await this.authorize({ refusedToken: this.sentToken, resourceMetadataUrl, scope, rediscover: true });
  }

  /**
   * A `403 insufficient_scope`: asks for the union of the scopes held and required. Only a person can grant
   * more (`auth login`); without one it is `remote_auth_required` naming the scope.
   */
  async stepUp(requiredScope: string | undefined): Promise<void> {
    const held = (await this.current())?.tokens?.scope;
    const union = [...new Set([...(held ?? '').split(' '), ...(requiredScope ?? '').split(' ')])]
      .filter((s) => s !== '')
      .join(' ');
    if (this.options.interactive === undefined) {
      throw this.required(
        `asks for a wider scope${requiredScope ? ` ("${requiredScope}")` : ''} than the stored sign-in holds`,
      );
    }
    await this.authorize({ refusedToken: this.sentToken, scope: union || undefined, force: true });
  }

  /**
   * Gets a usable token under the lock: a token another process saved meanwhile is taken as it is;
   * otherwise the SDK's `auth()` refreshes, runs the client-credentials grant, or (interactive only) the
   * authorization-code flow.
   */
  async authorize(request: {
    refusedToken?: string | undefined;
    resourceMetadataUrl?: URL | undefined;
    scope?: string | undefined;
    force?: boolean;
    rediscover?: boolean;
  }): Promise<void> {
    const { store } = this.options;
    await store.withLock(async () => {
      this.loaded = false;
      const record = await this.current();
      const held = record?.tokens?.access_token;
      const fresh = record?.expiresAt === undefined || record.expiresAt - Date.now() >= REFRESH_AHEAD_MS;
      if (!request.force && held !== undefined && held !== request.refusedToken && fresh) return;
      if (request.rediscover && record?.discovery !== undefined) {
        const { discovery: _d, ...rest } = record;
        await this.save(rest);
      }
      const canRefresh = record?.tokens?.refresh_token !== undefined;
      const unattendedGrant = this.options.client?.grant === 'client_credentials';
      if (this.options.interactive === undefined && !canRefresh && !unattendedGrant) {
        throw this.required(held === undefined ? 'needs a sign-in and none is held' : 'refused the stored sign-in');
      }
      this.provider.refreshing = canRefresh && !request.force;
      const scope = request.scope ?? this.options.scope;
      const base = {
        serverUrl: this.options.url,
        ...(request.resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl: request.resourceMetadataUrl }),
        ...(scope === undefined ? {} : { scope }),
        ...(request.force ? { forceReauthorization: true } : {}),
        fetchFn: authFetch,
      };
      try {
        let result = await auth(this.provider, base);
        if (result === 'REDIRECT') {
          const interactive = this.options.interactive;
          if (interactive === undefined) throw this.required('needs a sign-in');
          const params = await interactive.callback();
          const error = params.get('error');
          if (error !== null) {
            throw this.failed(`sign-in was refused by the authorization server (${error})`, undefined);
          }
          const code = params.get('code');
          if (code === null) throw this.failed('sign-in came back without an authorization code', undefined);
          if (params.get('state') !== this.provider.expectedState) {
            throw this.failed('sign-in came back with a state that is not ours (a forged redirect?)', undefined);
          }
          const iss = params.get('iss');
          result = await auth(this.provider, {
            ...base,
            authorizationCode: code,
            ...(iss === null ? {} : { iss }),
          });
          if (result !== 'AUTHORIZED') throw this.failed('sign-in did not complete', undefined);
        }
      } catch (error) {
        throw this.classify(error);
      } finally {
        this.provider.refreshing = false;
      }
    });
  }

  /** The SDK's failures as our codes; messages never quote a token, secret or key. */
  private classify(error: unknown): SdkError {
    if (isSdkError(error)) return error as SdkError;
    const brand = brandOf(error);
    if (brand === 'mcp.IssuerMismatchError' && (error as { kind?: unknown }).kind === 'metadata') {
      return this.failed(
        "the authorization server's metadata names another issuer than the server it was fetched from (RFC 8414 §3.3); refused",
        error,
      );
    }
    if (brand === 'mcp.AuthorizationServerMismatchError' || brand === 'mcp.IssuerMismatchError') {
      return this.required('now names a different authorization server than the one the stored sign-in is from', error);
    }
    if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
      return new SdkError(
        'remote_unreachable',
        `the authorization server of remote service "${this.options.service}" could not be reached: ${this.text(error)}`,
        {
          remedy: 'Check that the authorization server is up and reachable from this machine.',
          data: { service: this.options.service, url: redactUrl(this.options.url) },
          cause: error,
        },
      );
    }
    return this.failed(`sign-in failed: ${this.text(error)}`, error);
  }

  private text(error: unknown): string {
    return redactText(errorText(error), { urls: [this.options.url], values: this.secretValues() });
  }

  /** Every secret this sign-in holds now: client secret, key, tokens. */
  private secretValues(): string[] {
    const tokens = this.record?.tokens;
    return [
      ...this.secrets,
      ...(tokens?.access_token ? [tokens.access_token] : []),
      ...(tokens?.refresh_token ? [tokens.refresh_token] : []),
    ];
  }

  /** `remote_auth_required`: the fix is the exact `auth login` command. */
  required(what: string, cause?: unknown): SdkError {
    return new SdkError(
      'remote_auth_required',
      `remote service "${this.options.service}" ${what} (${redactUrl(this.options.url)}); sign in with: ${this.options.loginCommand}`,
      {
        remedy: `sign in: ${this.options.loginCommand}`,
        data: { service: this.options.service, url: redactUrl(this.options.url), login: this.options.loginCommand },
        cause,
      },
    );
  }

  /** `remote_auth_failed`: a refresh, a grant or a sign-in refused. */
  failed(what: string, cause: unknown): SdkError {
    const unattended = this.options.client?.grant === 'client_credentials';
    const next = unattended ? 'check its client credentials' : `sign in again with: ${this.options.loginCommand}`;
    return new SdkError('remote_auth_failed', `remote service "${this.options.service}": ${what}; ${next}`, {
      remedy: unattended
        ? "check the client id and the client secret or private key the workflow's oauth settings name"
        : `sign in again: ${this.options.loginCommand}`,
      data: { service: this.options.service, url: redactUrl(this.options.url), login: this.options.loginCommand },
      cause,
    });
  }
}

/** The authorization server's requests go out without the entry's headers, and follow no redirect. */
const authFetch: FetchLike = (input, init) => fetch(input, { ...init, redirect: 'error' });

export { authFailure, isInsufficientScope, loginCommand } from './remoteAuthErrors.js';
