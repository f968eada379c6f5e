/**
 * The run viewer's HTTP server: read-only, on 127.0.0.1, every request carrying the token of the printed
 * URL. Refusals, in order: a `Host` or `Origin` that is not loopback → 403 (the SDK's loopback guard, the
 * same module that fences `gateway`); a missing or wrong `token` → 401; a method other than GET/HEAD → 405;
 * an unknown path or an id the data dir does not list → 404. Nothing in it writes to the data dir.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { type HttpTimeouts, SdkError } from '@scienceevolve/sdk';
import { checkRunEvent, httpServerTimeouts } from '@scienceevolve/sdk/internal';
import { type JournalLine, JournalTail } from './journalTail.js';
import { VIEWER_CSS, VIEWER_JS, viewerHtml } from './viewerPage.js';
import { NotFound, ViewerData } from './viewerData.js';

/**
 * Options of {@link startViewer}. The request timeouts ({@link HttpTimeouts}: headers 10 s, whole request
 * 30 s, keep-alive 5 s by default) bound how long a browser may take to send a request; an event stream
 * stays open as long as the page follows the run.
 */
export interface ViewerOptions extends HttpTimeouts {
  /** The data dir to show. */
  dataDir: string;
  /** TCP port; 0 picks a free one. Default 0. */
  port?: number;
  /** The address to listen on: only `127.0.0.1`. Default `127.0.0.1`. */
  host?: string;
  /** Milliseconds between polls of a followed journal, besides the file watch. Default 500. */
  pollMs?: number;
  /** Milliseconds between keep-alive comments on an event stream. Default 15,000. */
  keepAliveMs?: number;
}

/** A running viewer. */
export interface Viewer {
  /** `http://127.0.0.1:PORT/?token=…`: the address to open. */
  url: string;
  port: number;
  /** Stops listening, ends every event stream and stops every watch. Idempotent. */
  close(): Promise<void>;
}

/**
 * The security headers of every answer. The token is in the page's URL, so no `Referer` may carry it
 * away; the page loads only its own script and style; nothing may frame it.
 */
const BASE_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
} as const;

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Starts the viewer. The token is 32 random bytes (base64url), new at every start.
 *
 * @throws SdkError `usage` for a host other than 127.0.0.1 or a timeout out of range; `io_error` when the
 *   port cannot be bound.
 */
export async function startViewer(options: ViewerOptions): Promise<Viewer> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') {
    throw new SdkError('usage', `the viewer listens on 127.0.0.1 only, not on "${host}"`, {
      remedy: 'Leave --host unset; to look from another machine, forward the port over ssh (ssh -L).',
    });
  }
  const timeouts = httpServerTimeouts('the viewer', options);
  // Loaded here, not at the top: it fences every HTTP server of this process (403 to a non-loopback Host
  // or Origin), which is right for the process that serves the viewer and for no other command.
  await import('@scienceevolve/sdk/loopback-guard');
  const data = new ViewerData(resolve(options.dataDir));
  const token = randomBytes(32).toString('base64url');
  const expected = digest(token);
  const streams = new Set<{ tail: JournalTail; res: ServerResponse; timer: NodeJS.Timeout }>();

  const server: Server = createServer(timeouts, (req, res) => {
    void handle(req, res).catch((error: unknown) => {
      const notFound = error instanceof NotFound;
      if (!res.headersSent) {
        send(res, notFound ? 404 : 500, 'application/json', {
          error: notFound ? error.message : `the viewer could not read the data dir: ${(error as Error).message}`,
        });
      } else {
        res.end();
      }
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const given = url.searchParams.get('token') ?? '';
    if (!timingSafeEqual(digest(given), expected) || given === '') {
      send(res, 401, 'text/plain', 'unauthorized: open the URL the viewer printed, with its token\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...BASE_HEADERS, allow: 'GET, HEAD', 'content-type': 'text/plain' });
      res.end('the viewer is read-only: GET only\n');
      return;
    }
    const q = (name: string) => url.searchParams.get(name) ?? '';
    switch (url.pathname) {
      case '/':
        return send(res, 200, 'text/html; charset=utf-8', viewerHtml(token));
      case '/viewer.js':
        return send(res, 200, 'text/javascript; charset=utf-8', VIEWER_JS);
      case '/viewer.css':
        return send(res, 200, 'text/css; charset=utf-8', VIEWER_CSS);
      case '/api/projects':
        return send(res, 200, 'application/json', { dataDir: data.dataDir, projects: await data.projects() });
      case '/api/version':
        return send(res, 200, 'application/json', await data.version(q('project'), q('version')));
      case '/api/run':
        return send(res, 200, 'application/json', await data.run(q('project'), q('run')));
      case '/api/log':
        return send(
          res,
          200,
          'application/json',
          await data.serviceLog(q('project'), q('run'), q('servicesId'), q('service')),
        );
      case '/api/events':
        return follow(req, res, await data.eventsPath(q('project'), q('run')));
      default:
        throw new NotFound(`no page ${url.pathname}`);
    }
  }

  /** Server-Sent Events: every line of the journal from the start (or after `Last-Event-ID`), then each new one. */
  function follow(req: IncomingMessage, res: ServerResponse, path: string): void {
    const last = req.headers['last-event-id'];
    const fromIndex = typeof last === 'string' && /^[0-9]{1,9}$/.test(last) ? Number(last) + 1 : 0;
    res.writeHead(200, {
      ...BASE_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.write('retry: 1000\n\n');
    const write = (lines: JournalLine[]) => {
      for (const line of lines) {
        let kind: 'journal' | 'corrupt' | 'invalid';
        let body: unknown;
        if ('corrupt' in line) {
          kind = 'corrupt';
          body = { message: line.corrupt };
        } else {
          // A line is drawn only once it matches its event's schema (a service may have written it); one that
          // does not is shown as text, so it can neither break the page nor hide what came after it.
          const check = checkRunEvent(line.event);
          kind = check.ok ? 'journal' : 'invalid';
          body = check.ok ? line.event : { message: check.problem, raw: rawText(line.event) };
        }
        res.write(`id: ${line.index}\nevent: ${kind}\ndata: ${JSON.stringify(body)}\n\n`);
      }
    };
    const tail = new JournalTail(path, write, { fromIndex, pollMs: options.pollMs });
    const timer = setInterval(() => res.write(': keep-alive\n\n'), options.keepAliveMs ?? 15_000);
    timer.unref();
    const entry = { tail, res, timer };
    streams.add(entry);
    const stop = () => {
      tail.close();
      clearInterval(timer);
      streams.delete(entry);
    };
    res.on('close', stop);
  }

  function send(res: ServerResponse, status: number, type: string, body: unknown): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      ...BASE_HEADERS,
      'content-type': type.startsWith('application/json') ? 'application/json; charset=utf-8' : type,
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new SdkError('io_error', `the viewer could not listen on ${host}:${options.port ?? 0}: ${error.message}`, {
          remedy: 'Pick another --port, or leave it out for a free one.',
          data: { port: options.port ?? 0 },
        }),
      ),
    );
    server.listen(options.port ?? 0, host, () => resolveListen());
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/?token=${token}`,
    port,
    close() {
      closing ??= new Promise<void>((done) => {
        for (const s of [...streams]) {
          try {
            s.tail.close();
            clearInterval(s.timer);
          } finally {
            s.res.end();
          }
        }
        streams.clear();
        server.close(() => done());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Characters of an invalid journal line the viewer shows at most. */
const MAX_RAW_CHARS = 4096;

/** An invalid line as text to show: its JSON, cut to {@link MAX_RAW_CHARS} with a note of the rest. */
function rawText(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= MAX_RAW_CHARS
    ? text
    : `${text.slice(0, MAX_RAW_CHARS)}… (${text.length - MAX_RAW_CHARS} more characters)`;
}
