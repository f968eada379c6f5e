/**
 * The person's side of `auth login` (RFC 8252 native-app flow): a one-shot HTTP listener on 127.0.0.1 (port
 * 0 unless given) whose `/callback` receives the authorization server's redirect, and a browser opener that
 * honours `BROWSER` (one executable with the URL as its one argument, or a command line whose `%s` is replaced
 * by the URL; no shell),
 * else `xdg-open` (`open` on macOS). The URL is printed first, so a person without a browser on this machine
 * can open it elsewhere — the redirect must then reach this machine's loopback port.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SdkError } from '../errors.js';
import type { InteractiveAuthorizer } from './remoteAuth.js';

/** Milliseconds `auth login` waits for the browser to come back: default 300,000 (5 min). */
export const LOGIN_TIMEOUT_MS = 300_000;

/** Options of {@link startLoopbackSignIn}. */
export interface LoopbackSignInOptions {
  /** Where the authorization URL is shown (a line of text). */
  print: (line: string) => void;
  /** Opens the URL; default {@link openInBrowser} with `process.env`. */
  open?: (url: URL) => Promise<void>;
  /** Loopback port; default 0 (any free one). */
  port?: number;
  /** Milliseconds to wait for the redirect; default {@link LOGIN_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** A listening loopback sign-in; `close()` ends the listener (idempotent). */
export interface LoopbackSignIn extends InteractiveAuthorizer {
  close(): Promise<void>;
}

/** Starts the loopback listener; the caller closes it. */
export async function startLoopbackSignIn(options: LoopbackSignInOptions): Promise<LoopbackSignIn> {
  let deliver: ((params: URLSearchParams) => void) | undefined;
  let pending: Promise<URLSearchParams> | undefined;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== '/callback') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const failed = url.searchParams.has('error');
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' })
      .end(
        failed
          ? '<!doctype html><title>Sign-in refused</title><p>The sign-in was refused. Return to the terminal.</p>'
          : '<!doctype html><title>Signed in</title><p>Signed in to ScienceEvolve. You can close this tab.</p>',
      );
    deliver?.(url.searchParams);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const redirectUrl = `http://127.0.0.1:${port}/callback`;
  const timeoutMs = options.timeoutMs ?? LOGIN_TIMEOUT_MS;
  let closed: Promise<void> | undefined;
  return {
    redirectUrl,
    async open(url: URL) {
      // A new authorization request: the next callback is its answer.
      pending = new Promise<URLSearchParams>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new SdkError(
                'remote_auth_required',
                `no sign-in came back to ${redirectUrl} within ${timeoutMs / 1000} s`,
                {
                  remedy: 'open the printed URL in a browser on this machine and finish the sign-in, then try again',
                },
              ),
            ),
          timeoutMs,
        );
        timer.unref();
        deliver = (params) => {
          clearTimeout(timer);
          deliver = undefined;
          resolve(params);
        };
      });
      pending.catch(() => {});
      options.print(`Open this URL to sign in: ${url.href}`);
      await (options.open ?? ((u: URL) => openInBrowser(u, process.env)))(url);
    },
    callback() {
      if (pending === undefined) return Promise.reject(new Error('no authorization request was opened'));
      return pending;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

/**
 * Opens `url` with `BROWSER` (one executable, given the URL as its one argument; or, when it holds `%s`, a
 * command line split into words on white space, `%s` replaced by the URL), else `xdg-open` (`open` on
 * macOS). Resolves once the opener started; an opener that cannot
 * start is not an error (the URL was printed).
 */
export async function openInBrowser(url: URL, env: Readonly<Record<string, string | undefined>>): Promise<void> {
  const browser = env.BROWSER?.split(':')[0]?.trim();
  const command =
    browser !== undefined && browser !== '' ? browser : process.platform === 'darwin' ? 'open' : 'xdg-open';
  // With `%s` the value is a command line (`firefox --new-tab %s`): its words, split on white space (no
  // shell, no quoting), the first the executable and `%s` in the others replaced by the URL.
  const words = command.includes('%s') ? command.split(/\s+/).filter((w) => w !== '') : [command];
  const file = words[0] ?? command;
  const args = command.includes('%s') ? words.slice(1).map((w) => w.replaceAll('%s', url.href)) : [url.href];
  await new Promise<void>((resolve) => {
    const child = spawn(file, args, { stdio: 'ignore', detached: false });
    child.once('error', () => resolve());
    child.once('spawn', () => resolve());
    child.unref();
  });
}
