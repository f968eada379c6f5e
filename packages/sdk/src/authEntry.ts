/**
 * `@scienceevolve/sdk/auth`: signing in to remote services (SPEC §8) — {@link authLogin},
 * {@link authStatus}, {@link authLogout} for the `auth` command, and the parts a custom client composes:
 * {@link remoteCredentials} (headers from host variables and the stored sign-in of an entry),
 * {@link startLoopbackSignIn} (the loopback redirect) and {@link openInBrowser}.
 */
export { authLogin, authLogout, authStatus } from './engine/remoteSignIns.js';
export type { AuthLoginOptions, SignInStatus, SignInTarget, SignOutResult } from './engine/remoteSignIns.js';
export { remoteCredentials, storedSignIn } from './invocation/remoteCredentials.js';
export type { RemoteCredentialContext, RemoteEntry } from './invocation/remoteCredentials.js';
export { LOGIN_TIMEOUT_MS, openInBrowser, startLoopbackSignIn } from './sessions/loopbackSignIn.js';
export type { LoopbackSignIn, LoopbackSignInOptions } from './sessions/loopbackSignIn.js';
export { loginCommand, REFRESH_AHEAD_MS } from './sessions/remoteAuth.js';
export type { InteractiveAuthorizer, SignInRecord } from './sessions/remoteAuth.js';
export { connectRemoteService } from './sessions/remoteService.js';
