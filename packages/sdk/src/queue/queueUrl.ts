/**
 * The queue's Redis address (`--queue`): `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS) or
 * `unix:///path/to/redis.sock` (also `redis+unix://`). Credentials are for the connection only: every text
 * that leaves this module names the address without them (events, logs, errors).
 */
import { SdkError } from '../errors.js';
import { redactUrlsIn } from '../redact.js';

/** What ioredis needs to connect, and the address as it may be shown. */
export interface QueueAddress {
  /** The address without userinfo: safe for events, logs and errors. */
  publicUrl: string;
  /** ioredis connection options (host/port or path, credentials, db, TLS). Never print it. */
  connection: {
    host?: string;
    port?: number;
    path?: string;
    username?: string;
    password?: string;
    db?: number;
    tls?: Record<string, never>;
  };
}

/**
 * Parses a queue URL; `usage` naming the problem (never the credentials) for anything else.
 */
export function parseQueueUrl(text: string): QueueAddress {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badUrl(redactUrlsIn(text), 'it is not a URL');
  }
  const publicUrl = publicQueueUrl(url);
  // A `%` not followed by two hex digits cannot be decoded: named, never quoted (it may be the password).
  const decode = (part: string, what: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw badUrl(publicUrl, `its ${what} has a "%" not followed by two hex digits (write "%" as %25)`);
    }
  };
  const username = url.username === '' ? undefined : decode(url.username, 'user name');
  const password = url.password === '' ? undefined : decode(url.password, 'password');
  const credentials = {
    ...(username === undefined ? {} : { username }),
    ...(password === undefined ? {} : { password }),
  };
  if (url.protocol === 'unix:' || url.protocol === 'redis+unix:') {
    if (url.pathname === '' || url.pathname === '/') throw badUrl(publicUrl, 'it names no socket path');
    return { publicUrl, connection: { path: decode(url.pathname, 'socket path'), ...credentials } };
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw badUrl(publicUrl, `the scheme "${url.protocol}" is not redis:, rediss: or unix:`);
  }
  if (url.hostname === '') throw badUrl(publicUrl, 'it names no host');
  const port = url.port === '' ? 6379 : Number(url.port);
  let db: number | undefined;
  const dbText = url.pathname.replace(/^\//, '');
  if (dbText !== '') {
    if (!/^[0-9]{1,2}$/.test(dbText)) throw badUrl(publicUrl, `the database "${dbText}" is not a number from 0 to 99`);
    db = Number(dbText);
  }
  return {
    publicUrl,
    connection: {
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port,
      ...credentials,
      ...(db === undefined ? {} : { db }),
      ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  };
}

/** `url` without userinfo, query or fragment. */
function publicQueueUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = '';
  copy.password = '';
  copy.search = '';
  copy.hash = '';
  return copy.href;
}

/** Kept here for the public API; `redact.ts` owns the redaction of URLs in messages. */
export { redactUrlsIn } from '../redact.js';

function badUrl(shown: string, why: string): SdkError {
  return new SdkError('usage', `the queue address ${shown} cannot be used: ${why}`, {
    remedy:
      'give --queue as redis://[user:password@]host[:port][/db], rediss://… for TLS, or unix:///path/to/redis.sock',
    data: { queue: shown },
  });
}
