/**
 * The request timeouts of the SDK's HTTP servers (the HTTP face, and the CLI's run viewer): how long a
 * client may take to send its request, so a client that trickles its headers or body a byte at a time
 * (slow loris) does not hold a connection for Node's defaults (60 s of headers, 300 s per request).
 *
 * Node's semantics (`http.Server`): `headersTimeout` and `requestTimeout` cover *receiving* a request,
 * from the connection's opening (a connection that sends nothing is cut too) or, on a kept-alive
 * connection, the next request's start, to the end of its headers, and to the end of its body; once the
 * request is received they no longer run, so a long answer (a tool call's SSE stream, the
 * viewer's event stream) is never cut by them. A request cut by either is answered `408` (when nothing
 * of its answer was sent yet) and its connection closed. `keepAliveTimeout` is how long an idle
 * connection waits for its next request after an answer. Node checks the first two on an interval of
 * its own (`connectionsCheckingInterval`, 30 s by default), so a timeout would fire up to 30 s late:
 * this module sets the interval too, from the timeouts.
 */
import type { ServerOptions } from 'node:http';
import { SdkError } from '../errors.js';

/** The request timeouts of one HTTP server; every value in milliseconds. @public */
export interface HttpTimeouts {
  /** Milliseconds a client may take to send a request's headers, from the connection's opening. Default 10,000. */
  headersTimeoutMs?: number;
  /**
   * Milliseconds a client may take to send a whole request, headers and body. Not the answer: a streamed
   * answer may last as long as it lasts. Default 30,000. At least `headersTimeoutMs`.
   */
  requestTimeoutMs?: number;
  /** Milliseconds an idle kept-alive connection waits for its next request. Default 5,000 (Node's own). */
  keepAliveTimeoutMs?: number;
}

/**
 * The defaults: 10 s for the headers, 30 s for the whole request, 5 s of keep-alive. The servers are on
 * loopback, where a request of the largest allowed body (4 MiB) arrives in milliseconds, so these leave a
 * loaded machine a wide margin and still cut a slow client ten times sooner than Node would.
 */
export const DEFAULT_HTTP_TIMEOUTS: Readonly<Required<HttpTimeouts>> = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
});

/** The largest timeout accepted: 2^31−1 ms (about 24.8 days), the ceiling of Node's timers. */
export const MAX_HTTP_TIMEOUT_MS = 2 ** 31 - 1;

/** Milliseconds between Node's checks of the headers and request timeouts, at most: 1,000. */
const MAX_CHECK_INTERVAL_MS = 1000;

/** Milliseconds between those checks, at least: 10. */
const MIN_CHECK_INTERVAL_MS = 10;

function checked(server: string, name: keyof HttpTimeouts, value: number | undefined): number {
  const chosen = value ?? DEFAULT_HTTP_TIMEOUTS[name];
  if (!Number.isSafeInteger(chosen) || chosen < 1 || chosen > MAX_HTTP_TIMEOUT_MS) {
    throw new SdkError(
      'usage',
      `${server}: ${name} must be a whole number of milliseconds from 1 to ${MAX_HTTP_TIMEOUT_MS}, not ${String(chosen)}`,
      { remedy: `Leave ${name} unset for its default (${DEFAULT_HTTP_TIMEOUTS[name]} ms), or give a value in range.` },
    );
  }
  return chosen;
}

/**
 * The `http.createServer` options of `timeouts` (defaults filled in), for the server named `server` in
 * errors: `headersTimeout`, `requestTimeout`, `keepAliveTimeout`, and `connectionsCheckingInterval` (a
 * quarter of the shorter timeout, from 10 ms to 1 s), so a slow client is cut within about a second of its
 * timeout.
 *
 * @throws SdkError `usage` for a value that is not a whole number from 1 to 2^31−1, or a request timeout
 *   shorter than the headers timeout.
 * @internal
 */
export function httpServerTimeouts(
  server: string,
  timeouts: HttpTimeouts = {},
): Required<
  Pick<ServerOptions, 'headersTimeout' | 'requestTimeout' | 'keepAliveTimeout' | 'connectionsCheckingInterval'>
> {
  const headersTimeout = checked(server, 'headersTimeoutMs', timeouts.headersTimeoutMs);
  const requestTimeout = checked(server, 'requestTimeoutMs', timeouts.requestTimeoutMs);
  const keepAliveTimeout = checked(server, 'keepAliveTimeoutMs', timeouts.keepAliveTimeoutMs);
  if (headersTimeout > requestTimeout) {
    throw new SdkError(
      'usage',
      `${server}: headersTimeoutMs (${headersTimeout} ms) must not be longer than requestTimeoutMs (${requestTimeout} ms), which includes the headers`,
      { remedy: 'Raise requestTimeoutMs, or lower headersTimeoutMs.' },
    );
  }
  const connectionsCheckingInterval = Math.min(
    MAX_CHECK_INTERVAL_MS,
    Math.max(MIN_CHECK_INTERVAL_MS, Math.floor(headersTimeout / 4)),
  );
  return { headersTimeout, requestTimeout, keepAliveTimeout, connectionsCheckingInterval };
}
