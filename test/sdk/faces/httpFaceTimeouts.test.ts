/**
 * The HTTP face's request timeouts against slow clients on real sockets (127.0.0.1): a client that sends
 * its headers, or its body, a byte at a time is cut after the (short, test-set) timeout, while a normal call
 * works and an answer streamed for longer than the timeouts is not cut. Node's own defaults (60 s for the
 * headers, 300 s for a request) would let each slow client through the whole 20 s each test waits at most.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createBridgeToken, serveHttp } from '../../../packages/sdk/src/faces/httpFace.js';
import { DEFAULT_HTTP_TIMEOUTS, httpServerTimeouts } from '../../../packages/sdk/src/faces/httpTimeouts.js';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { connectSession, createLabServer } from '../../fixtures/bridge/labService.js';
import { readStreamFor, slowClient } from '../../fixtures/bridge/slowClient.js';

/** Test-set timeouts: 400 ms for the headers, 800 ms for a whole request. */
const TIMEOUTS = { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 500 };

async function startFace(t: { after: (fn: () => unknown) => void }) {
  const lab = await connectSession('lab', createLabServer('lab'));
  t.after(() => lab.close());
  const token = createBridgeToken();
  const face = await serveHttp(createSurface([lab]), { token, port: 0, ...TIMEOUTS });
  t.after(() => face.close());
  return { face, token };
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'slow', version: '1' } },
});

test('HTTP face: a client sending its headers a byte at a time is cut after headersTimeoutMs', async (t) => {
  const { face, token } = await startFace(t);
  const head = `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${face.port}\r\nAuthorization: Bearer ${token}\r\n`;
  const result = await slowClient(t, face.port, { trickle: `${head}X-Slow: ${'a'.repeat(200)}`, everyMs: 100 });
  assert.equal(result.cut, true, `the connection stayed open for all ${result.elapsedMs} ms of trickling`);
  assert.match(result.received, /^HTTP\/1\.1 408 /);
  assert.ok(result.elapsedMs < 10_000, `cut after ${result.elapsedMs} ms`);
});

test('HTTP face: an authenticated client sending its body a byte at a time is cut after requestTimeoutMs', async (t) => {
  const { face, token } = await startFace(t);
  const head = [
    'POST /mcp HTTP/1.1',
    `Host: 127.0.0.1:${face.port}`,
    `Authorization: Bearer ${token}`,
    'Accept: application/json, text/event-stream',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(initialize)}`,
    '',
    '',
  ].join('\r\n');
  const result = await slowClient(t, face.port, { first: head, trickle: initialize, everyMs: 100 });
  assert.equal(result.cut, true, `the connection stayed open for all ${result.elapsedMs} ms of trickling`);
  assert.match(result.received, /^HTTP\/1\.1 408 /);
});

test('HTTP face: a connection that sends nothing is cut too', async (t) => {
  const { face } = await startFace(t);
  const result = await slowClient(t, face.port, { trickle: '', everyMs: 100, holdMs: 15_000 });
  assert.equal(result.cut, true, `an idle connection stayed open for ${result.elapsedMs} ms`);
});

test('HTTP face: with short timeouts a normal call works, and a notification stream outlives them', async (t) => {
  const { face, token } = await startFace(t);
  const answer = await fetch(face.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    },
    body: initialize,
  });
  assert.equal(answer.status, 200);
  assert.match(await answer.text(), /"protocolVersion"/);
  // The 2025-11-25 GET stream: open for 3 s (almost 4 times the request timeout), then still readable.
  const stream = await fetch(face.url, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25' },
  });
  assert.equal(stream.status, 200);
  const { text, endedEarly } = await readStreamFor(stream, 3000);
  assert.equal(endedEarly, false, 'the server ended the notification stream');
  assert.match(text, /scienceevolve notification stream/);
});

test('HTTP face: a tool call answered after longer than the timeouts is not cut', async (t) => {
  const { face, token } = await startFace(t);
  const headers = {
    authorization: `Bearer ${token}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': '2025-11-25',
  };
  const call = JSON.stringify({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'lab__sleep', arguments: { ms: 2000 }, _meta: { progressToken: 'p1' } },
  });
  const started = Date.now();
  const answer = await fetch(face.url, { method: 'POST', headers, body: call });
  assert.equal(answer.status, 200);
  const text = await answer.text();
  assert.ok(Date.now() - started >= 2000, 'the call took its 2 s');
  assert.match(text, /"id":2/);
  assert.equal(/"error"/.test(text), false, text);
});

test('HTTP timeouts: defaults, and a table of bad values each refused with usage', () => {
  assert.deepEqual(httpServerTimeouts('the HTTP face'), {
    headersTimeout: DEFAULT_HTTP_TIMEOUTS.headersTimeoutMs,
    requestTimeout: DEFAULT_HTTP_TIMEOUTS.requestTimeoutMs,
    keepAliveTimeout: DEFAULT_HTTP_TIMEOUTS.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1000,
  });
  assert.deepEqual(DEFAULT_HTTP_TIMEOUTS, {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5000,
  });
  const bad: [Record<string, number>, RegExp][] = [
    [{ headersTimeoutMs: 0 }, /headersTimeoutMs must be a whole number/],
    [{ requestTimeoutMs: -1 }, /requestTimeoutMs must be a whole number/],
    [{ keepAliveTimeoutMs: 1.5 }, /keepAliveTimeoutMs must be a whole number/],
    [{ requestTimeoutMs: 2 ** 31 }, /from 1 to 2147483647/],
    [{ headersTimeoutMs: Number.NaN }, /headersTimeoutMs/],
    [{ headersTimeoutMs: 5000, requestTimeoutMs: 1000 }, /must not be longer than requestTimeoutMs/],
  ];
  for (const [options, message] of bad) {
    assert.throws(
      () => httpServerTimeouts('the HTTP face', options),
      (error: unknown) => (error as { code?: string }).code === 'usage' && message.test(String(error)),
      JSON.stringify(options),
    );
  }
});
