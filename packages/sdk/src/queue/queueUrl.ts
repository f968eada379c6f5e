/**
 * The queue's Redis address: `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS) or
 * `unix:///path/to/redis.sock` (also `redis+unix://`). Credentials are for the connection only: every text
 * that leaves this module names the address without them (events, logs, errors).
 *
 * Where the CLI takes it from ({@link queueUrlFrom}): `--queue URL` only without credentials, since every
 * user of the machine can read a process's command line (`/proc/<pid>/cmdline`); a URL with a password comes
 * from a variable (`--queue-env VAR`) or from a file only its owner can read (`--queue-file F`).
 */
import { SdkError } from '../errors.js';
import { readPrivateFileSync } from '../fileModes.js';
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

/** The variable `scienceevolve worker` reads the queue URL from when no queue option is given. @internal */
export const QUEUE_URL_ENV = 'SCIENCEEVOLVE_QUEUE_URL';

/** The largest queue file read, in bytes: 4,096 (one URL line). */
export const QUEUE_FILE_MAX_BYTES = 4096;

/** The three ways to give the queue URL on a command line; at most one is given. */
export interface QueueUrlOptions {
  /** `--queue URL`: refused when it carries a user name, a password or a query (the command line is public). */
  url?: string | undefined;
  /** `--queue-env VAR`: the name of the variable that holds the URL. */
  env?: string | undefined;
  /** `--queue-file F`: a file of the user's own, mode 0600 or stricter, no symlink, holding the URL on one line. */
  file?: string | undefined;
}

/** The queue URL and where it came from (the variable's name, so the caller can unset it). */
export interface QueueUrlSource {
  url: string;
  from: { kind: 'argv' } | { kind: 'env'; variable: string } | { kind: 'file'; path: string };
}

const OTHER_WAYS =
  'give the URL in a variable (--queue-env VAR, e.g. --queue-env SCIENCEEVOLVE_QUEUE_URL) or in a file only you can read (--queue-file F, chmod 600 F)';

/**
 * The queue URL from `--queue`, `--queue-env` or `--queue-file` (at most one), checked by
 * {@link parseQueueUrl}; undefined when none is given. `hostEnv` is where `--queue-env` reads (usually
 * `process.env`; never modified).
 *
 * @throws SdkError `usage` (two options given, credentials or a query in `--queue`, a variable that is not
 *   set, a file that does not hold one URL line, a URL that does not parse), `insecure_file` (the file is a
 *   symbolic link, not a regular file, not the user's own, or readable or writable by others), `io_error`
 *   (the file cannot be read).
 * @internal
 */
export function queueUrlFrom(
  options: QueueUrlOptions,
  hostEnv: Readonly<Record<string, string | undefined>>,
): QueueUrlSource | undefined {
  const given = (['url', 'env', 'file'] as const).filter((key) => options[key] !== undefined);
  if (given.length > 1) {
    throw new SdkError('usage', `${given.map(flagOf).join(' and ')} cannot be given together`, {
      remedy: 'give the queue URL one way: --queue, --queue-env or --queue-file',
    });
  }
  let source: QueueUrlSource;
  if (options.url !== undefined) {
    assertNoArgvCredentials(options.url);
    source = { url: options.url, from: { kind: 'argv' } };
  } else if (options.env !== undefined) {
    const variable = options.env;
    // Never quoted back unless it is a variable name: a URL given here by mistake carries its password.
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(variable)) {
      throw new SdkError(
        'usage',
        '--queue-env takes the name of an environment variable (letters, digits and _), not a URL',
        {
          remedy: 'e.g. --queue-env QUEUE_URL with QUEUE_URL set to redis://…',
        },
      );
    }
    const value = Object.hasOwn(hostEnv, variable) ? hostEnv[variable] : undefined;
    if (value === undefined || value.trim() === '') {
      throw new SdkError('usage', `--queue-env ${variable}: the variable ${variable} is not set (or empty)`, {
        remedy: `export ${variable}=redis://… in the environment that runs scienceevolve, or name another variable`,
        data: { variable },
      });
    }
    source = { url: value.trim(), from: { kind: 'env', variable } };
  } else if (options.file !== undefined) {
    source = { url: readQueueUrlFile(options.file), from: { kind: 'file', path: options.file } };
  } else {
    return undefined;
  }
  parseQueueUrl(source.url);
  return source;
}

function flagOf(key: 'url' | 'env' | 'file'): string {
  return key === 'url' ? '--queue' : `--queue-${key}`;
}

/**
 * Refuses a `--queue` URL that carries a user name or password, or a query (which the queue does not read,
 * and which may hold one): on the command line it is readable by every user of the machine. The message
 * never repeats the URL's secret part.
 */
export function assertNoArgvCredentials(text: string): void {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    // A URL that does not parse can still hold `user:password@`: refused as such, never quoted.
  }
  const userinfo =
    url === undefined ? /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(text) : url.username !== '' || url.password !== '';
  const query = url === undefined ? /\?/.test(text) : url.search !== '';
  if (!userinfo && !query) return;
  const what = userinfo
    ? 'a user name or password (user:password@)'
    : 'a query (?…), which the queue does not read and which may hold a password';
  throw new SdkError(
    'usage',
    `--queue must not carry ${what}: a command line is readable by every user of the machine (/proc/<pid>/cmdline)`,
    {
      remedy: OTHER_WAYS,
      data: { option: '--queue', refused: userinfo ? 'credentials' : 'query' },
    },
  );
}

/**
 * The URL in `path` (`--queue-file`): opened without following a symbolic link and without blocking on a
 * FIFO, then checked on the open handle — a regular file, owned by this process's user, no permission for
 * group or others (0600 or stricter) — and read: one URL line (a final line break is allowed), at most
 * {@link QUEUE_FILE_MAX_BYTES}. Errors name the file and the fix, never its content.
 */
export function readQueueUrlFile(path: string): string {
  const text = readPrivateFileSync(path, QUEUE_FILE_MAX_BYTES, {
    subject: `the queue file ${path}`,
    holds: 'the queue URL (one line)',
    stakes: "it holds the queue's password",
  });
  const lines = text.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  if (lines.length !== 1) {
    throw new SdkError(
      'usage',
      `the queue file ${path} holds ${lines.length === 0 ? 'no URL' : `${lines.length} lines`}; it holds one line, the queue URL`,
      { remedy: 'write the URL as its one line: redis://[user:password@]host[:port][/db]', data: { path } },
    );
  }
  return lines[0]!.trim();
}
