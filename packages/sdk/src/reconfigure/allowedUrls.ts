/**
 * `orchestration.allowedRemoteUrls` (SPEC §3.3): a remote URL Main proposes must match one allowed URL —
 * the same scheme, host and port, and a path that starts with the allowed path on a `/` boundary. URLs are
 * parsed, never prefix-matched as strings: `http://127.0.0.1:80` is a string prefix of
 * `http://127.0.0.1:8099` and of `http://127.0.0.1:80@evil.example`.
 */

/** Why `url` matches none of `allowed`, or `undefined` when it matches one. */
export function remoteUrlRefusal(url: string, allowed: readonly string[]): string | undefined {
  let candidate: URL;
  try {
    candidate = new URL(url);
  } catch {
    return 'not a valid URL';
  }
  if (candidate.username !== '' || candidate.password !== '') {
    return 'a URL with user information (user:password@) is refused; put credentials in headers the operator configures';
  }
  if (allowed.some((entry) => matchesAllowed(candidate, entry))) return undefined;
  return allowed.length === 0
    ? 'Main may not add remote services to this workflow (orchestration.allowedRemoteUrls is empty); write a project service instead'
    : `the URL must match one of: ${allowed.map(shown).join(', ')} (same scheme, host and port, and a path below the allowed path)`;
}

/** An allowed URL as a message may show it: without user information, query or fragment. */
function shown(entry: string): string {
  try {
    const url = new URL(entry);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(an invalid URL)';
  }
}

function matchesAllowed(candidate: URL, entry: string): boolean {
  let allowed: URL;
  try {
    allowed = new URL(entry);
  } catch {
    return false;
  }
  if (allowed.username !== '' || allowed.password !== '') return false;
  // `URL` lower-cases scheme and host and drops a default port, so equal origins compare equal as strings.
  if (candidate.protocol !== allowed.protocol || candidate.hostname !== allowed.hostname) return false;
  if (candidate.port !== allowed.port) return false;
  const base = allowed.pathname.endsWith('/') ? allowed.pathname : `${allowed.pathname}/`;
  return candidate.pathname === allowed.pathname || candidate.pathname.startsWith(base);
}
