/**
 * What forwarding a call to a service shares between project and remote services: the one default
 * forwarding timeout, and reading the official client's error codes. The time of a forwarded request is
 * decided by the agent's surface (its gate, whose default is this constant); a session passes the time
 * it is given to the official client, which cancels the request at the service when it runs out (the
 * client's own default would otherwise cut every request at 60 s, whatever the surface decided).
 */

/** Default milliseconds a forwarded call may take before it is cancelled at the service: 60,000 (SPEC §5.6). */
export const DEFAULT_FORWARD_TIMEOUT_MS = 60_000;

/**
 * The official client's error code (`REQUEST_TIMEOUT`, `CONNECTION_CLOSED`, `NOT_CONNECTED`, …), or a
 * JSON-RPC error's numeric code as text, if `error` has one. Read by value, not `instanceof`.
 */
export function mcpCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'number') return String(code);
  return typeof code === 'string' ? code : undefined;
}
