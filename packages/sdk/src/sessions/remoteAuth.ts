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
  ClientCredentialsProvider,
  extractWWWAuthenticateParams,
  type FetchLike,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  PrivateKeyJwtProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { isSdkError, SdkError } from '../errors.js';
import { errorText, redactText, redactUrl } from '../redact.js';

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
 * resource, the record holding its issuer. Every method is safe to call from several processes.
 */
export interface SignInStore {
  /** Where the record is kept (named in errors). */
  readonly path: string;
  /** The record as read (checked by {@link SignInRecordSchema}), or undefined when none is held. */
  read(): Promise<unknown>;
  /** Replaces the record atomically (0600). */
  write(record: SignInRecord): Promise<void>;
  /** Removes the record. */
  remove(): Promise<void>;
  /** Runs `fn` holding this record's cross-process lock. */
  withLock<T>(fn: () => Promise<T>): Promise<T>;
}

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

/** The SDK's error brands we branch on (its classes are branded: two copies may be loaded). */
function brandOf(error: unknown): string | undefined {
  const ctor = (error as { constructor?: { mcpBrand?: unknown } } | null)?.constructor;
  const brand = ctor?.mcpBrand;
  return typeof brand === 'string' ? brand : undefined;
}

/** Whether `error` is the transport's `403 insufficient_scope` (step-up needed). */
export function isInsufficientScope(error: unknown): error is Error & { requiredScope?: string } {
  return brandOf(error) === 'mcp.InsufficientScopeError' || (error as Error | null)?.name === 'InsufficientScopeError';
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
    if (token !== undefined && record?.expiresAt !== undefined && record.expiresAt - Date.now() < REFRESH_AHEAD_MS) {
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

/** The redirect an unattended authorization-code sign-in names (never visited). */
const UNATTENDED_REDIRECT = 'http://127.0.0.1/callback';

/** The authorization server's requests go out without the entry's headers, and follow no redirect. */
const authFetch: FetchLike = (input, init) => fetch(input, { ...init, redirect: 'error' });

/**
 * The `OAuthClientProvider` the SDK's `auth()` works through: reads and writes the {@link RemoteSignIn}'s
 * record (the caller holds the lock), delegating the client's identity to the SDK's client-credentials
 * providers when the entry configures one.
 */
class StoreProvider implements OAuthClientProvider {
  /** True while `auth()` runs with a refresh token in hand: a redirect then means the refresh was refused. */
  refreshing = false;
  /** The `state` of the authorization request in flight. */
  expectedState: string | undefined;
  private verifier: string | undefined;
  private readonly delegate: OAuthClientProvider | undefined;

  constructor(
    private readonly signIn: RemoteSignIn,
    private readonly options: RemoteSignInOptions,
  ) {
    const client = options.client;
    if (client?.grant === 'client_credentials') {
      this.delegate =
        client.authMethod === 'private_key_jwt'
          ? new PrivateKeyJwtProvider({
              clientId: client.clientId,
              privateKey: client.privateKey ?? '',
              algorithm: client.algorithm ?? 'RS256',
              ...(options.scope === undefined ? {} : { scope: options.scope }),
            })
          : new ClientCredentialsProvider({
              clientId: client.clientId,
              clientSecret: client.clientSecret ?? '',
              ...(options.scope === undefined ? {} : { scope: options.scope }),
            });
      if (client.authMethod === 'client_secret_post') {
        const info = this.delegate.clientInformation.bind(this.delegate);
        this.delegate.clientInformation = (ctx?: OAuthClientInformationContext) => {
          const stored = info(ctx) as StoredOAuthClientInformation | undefined;
          return stored === undefined ? undefined : { ...stored, token_endpoint_auth_method: 'client_secret_post' };
        };
      }
      const addAuth = this.delegate.addClientAuthentication;
      if (addAuth !== undefined) this.addClientAuthentication = addAuth.bind(this.delegate);
      this.prepareTokenRequest = (scope?: string) => this.delegate?.prepareTokenRequest?.(scope);
    }
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  clientMetadataUrl?: string;
  addClientAuthentication?: OAuthClientProvider['addClientAuthentication'];
  prepareTokenRequest?: OAuthClientProvider['prepareTokenRequest'];

  get redirectUrl(): string | undefined {
    if (this.delegate !== undefined) return undefined;
    // Unattended, an authorization-code sign-in still names a redirect: without one the SDK takes the flow
    // for a machine grant and never refreshes. No person is sent there (redirectToAuthorization refuses).
    return this.options.interactive?.redirectUrl ?? UNATTENDED_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    if (this.delegate !== undefined) return this.delegate.clientMetadata;
    const redirect = this.options.interactive?.redirectUrl;
    return {
      client_name: 'ScienceEvolve',
      redirect_uris: redirect === undefined ? [] : [redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.options.client?.clientSecret ? 'client_secret_basic' : 'none',
      ...(this.options.scope === undefined ? {} : { scope: this.options.scope }),
    };
  }

  state(): string {
    this.expectedState = randomBytes(16).toString('base64url');
    return this.expectedState;
  }

  async clientInformation(ctx?: OAuthClientInformationContext): Promise<StoredOAuthClientInformation | undefined> {
    if (this.delegate !== undefined) return this.delegate.clientInformation(ctx);
    const client = this.options.client;
    if (client !== undefined) {
      return {
        client_id: client.clientId,
        ...(client.clientSecret === undefined ? {} : { client_secret: client.clientSecret }),
        ...(client.authMethod === undefined || client.authMethod === 'private_key_jwt'
          ? {}
          : { token_endpoint_auth_method: client.authMethod }),
      };
    }
    return (await this.signIn.current())?.client;
  }

  async saveClientInformation(info: StoredOAuthClientInformation): Promise<void> {
    if (this.delegate !== undefined || this.options.client !== undefined) return; // configured, never stored
    const record = (await this.signIn.current()) ?? { resource: redactUrl(this.options.url) };
    await this.signIn.save({ ...record, client: info });
  }

  async tokens(ctx?: OAuthClientInformationContext): Promise<StoredOAuthTokens | undefined> {
    const record = await this.signIn.current();
    if (ctx !== undefined && record?.issuer !== undefined && record.issuer !== ctx.issuer) {
      // Another authorization server: the stored sign-in is not for it (the SDK checks the stamp too).
      return undefined;
    }
    return record?.tokens;
  }

  async saveTokens(tokens: StoredOAuthTokens, ctx?: OAuthClientInformationContext): Promise<void> {
    const record = (await this.signIn.current()) ?? { resource: redactUrl(this.options.url) };
    const now = Date.now();
    const issuer = ctx?.issuer ?? tokens.issuer ?? record.issuer;
    const kept: StoredOAuthTokens = {
      ...tokens,
      // A refresh answer without a refresh token keeps the one we had (RFC 6749 §6).
      ...(tokens.refresh_token === undefined && record.tokens?.refresh_token !== undefined
        ? { refresh_token: record.tokens.refresh_token }
        : {}),
    };
    const next: SignInRecord = { ...record, tokens: kept, savedAt: now };
    if (issuer !== undefined) next.issuer = issuer;
    if (typeof tokens.expires_in === 'number') next.expiresAt = now + tokens.expires_in * 1000;
    else delete next.expiresAt;
    await this.signIn.save(next);
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const interactive = this.options.interactive;
    if (interactive === undefined) {
      if (this.refreshing) {
        throw this.signIn.failed('the authorization server refused to refresh the stored sign-in', undefined);
      }
      throw this.signIn.required('needs a sign-in');
    }
    await interactive.open(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no authorization request is in flight');
    return this.verifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') {
      this.verifier = undefined;
      return;
    }
    const record = await this.signIn.current();
    if (record === undefined) return;
    if (scope === 'all') return this.signIn.forget('all');
    if (scope === 'tokens') return this.signIn.forget('tokens');
    if (scope === 'client') {
      const { client: _c, ...rest } = record;
      return this.signIn.save(rest);
    }
    const { discovery: _d, ...rest } = record;
    return this.signIn.save(rest);
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    const record = (await this.signIn.current()) ?? { resource: redactUrl(this.options.url) };
    await this.signIn.save({ ...record, discovery: state });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.signIn.current())?.discovery;
  }
}

/** The HTTP status an SDK transport error carries, if any. */
function httpStatus(error: unknown): number | undefined {
  const status = (error as { data?: { status?: unknown } } | null)?.data?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * A remote's refusal as `remote_auth_required` (or the sign-in's own coded failure), or undefined when
 * `error` is not about authorization: an HTTP 401 (with or without our sign-in), the SDK's
 * `UnauthorizedError`, or a 403 `insufficient_scope` that was not stepped up.
 */
export function authFailure(
  error: unknown,
  context: {
    service: string;
    url: string;
    signIn?: RemoteSignIn | undefined;
    /** Header → host variable, when the entry sends static credentials. */
    headerSources?: Readonly<Record<string, string>> | undefined;
    loginCommand: string;
  },
): SdkError | undefined {
  if (isSdkError(error)) {
    const code = (error as SdkError).code;
    return code === 'remote_auth_required' || code === 'remote_auth_failed' ? (error as SdkError) : undefined;
  }
  const status = httpStatus(error);
  const unauthorized = status === 401 || brandOf(error) === 'mcp.UnauthorizedError';
  const scope = isInsufficientScope(error);
  if (!unauthorized && !scope) return undefined;
  const shown = redactUrl(context.url);
  const variables = Object.entries(context.headerSources ?? {});
  if (variables.length > 0 && context.signIn === undefined) {
    const named = variables.map(([header, variable]) => `"${header}" (from ${variable})`).join(', ');
    return new SdkError(
      'remote_auth_required',
      `remote service "${context.service}" refused the credentials of header ${named} with HTTP ${scope ? 403 : 401} (${shown})`,
      {
        remedy: `check the value of ${variables.map(([, v]) => v).join(', ')}: the server does not accept it (expired, revoked or for another service)`,
        data: { service: context.service, url: shown, variables: variables.map(([, v]) => v) },
        cause: error,
      },
    );
  }
  const what = scope
    ? `asks for a wider scope${(error as { requiredScope?: string }).requiredScope ? ` ("${(error as { requiredScope?: string }).requiredScope}")` : ''} than the stored sign-in holds`
    : 'answered HTTP 401: it needs a sign-in';
  return new SdkError(
    'remote_auth_required',
    `remote service "${context.service}" ${what} (${shown}); sign in with: ${context.loginCommand}`,
    {
      remedy: `sign in: ${context.loginCommand}`,
      data: { service: context.service, url: shown, login: context.loginCommand },
      cause: error,
    },
  );
}

/**
 * The exact command that signs in to `service` of `project` (named by every `remote_auth_required`).
 * Arguments that are not plain words are single-quoted for a POSIX shell.
 */
export function loginCommand(dataDir: string, project: string, service: string): string {
  const quote = (word: string) => (/^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);
  return `scienceevolve auth login --data-dir ${quote(dataDir)} --project ${quote(project)} --service ${quote(service)}`;
}
