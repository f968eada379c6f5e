/**
 * The `OAuthClientProvider` behind a {@link RemoteSignIn}: what the SDK's `auth()` reads and writes during a
 * sign-in or refresh (tokens, the registered client, discovery results, the PKCE verifier), kept in the
 * sign-in's record; a configured client's identity delegated to the SDK's own client-credentials providers.
 */
import {
  ClientCredentialsProvider,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  PrivateKeyJwtProvider,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { randomBytes } from 'node:crypto';
import { redactUrl } from '../redact.js';
import type { RemoteSignIn, RemoteSignInOptions, SignInRecord } from './remoteAuth.js';

/** The redirect an unattended authorization-code sign-in names (never visited). */
const UNATTENDED_REDIRECT = 'http://127.0.0.1/callback';

/**
 * The `OAuthClientProvider` the SDK's `auth()` works through: reads and writes the {@link RemoteSignIn}'s
 * record (the caller holds the lock), delegating the client's identity to the SDK's client-credentials
 * providers when the entry configures one.
 */
export class StoreProvider implements OAuthClientProvider {
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
