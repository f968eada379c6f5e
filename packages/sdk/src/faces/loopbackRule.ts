/**
 * The Host/Origin rule of every HTTP endpoint the SDK serves on loopback — the managed bridge's HTTP face
 * and the supervised gateway (supergateway, through `loopbackGuard.ts`) — written once: the DNS-rebinding
 * defence. A request is served only when its `Host` is a loopback name with this endpoint's port (or no
 * port), in canonical form, and its `Origin`, when present, is an `http:` or `https:` loopback origin.
 * `chrome-extension://localhost`, `null` and `http://localhost.evil.example` are refused.
 *
 * It imports nothing: `loopbackGuard.ts` loads it into supergateway's process before supergateway itself.
 */

/** The loopback host names, as `URL.hostname` writes them. */
const LOOPBACK_HOSTNAMES: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Whether a request's `Host` header names this loopback endpoint: a loopback name, the endpoint's `port`
 * or none, and nothing else (no user information, path or trailing dot).
 */
export function loopbackHostAllowed(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  try {
    const url = new URL(`http://${host}`);
    return (
      LOOPBACK_HOSTNAMES.has(url.hostname) &&
      (url.port === '' || Number(url.port) === port) &&
      url.host === host.toLowerCase()
    );
  } catch {
    return false;
  }
}

/** Whether a request's `Origin` header may reach the endpoint: absent, or an http(s) loopback origin. */
export function loopbackOriginAllowed(origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTNAMES.has(url.hostname);
  } catch {
    return false;
  }
}
