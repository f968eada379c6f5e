/**
 * The HTTP face's 2025-era path: stateless requests answered by one long-lived server (JSON bodies, SSE
 * only for a call that asked for progress), client request ids kept even when clients reuse them
 * concurrently, notifications acknowledged, and a client that goes away cancelling its call.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { createBridgeToken, serveHttp } from '../../../packages/sdk/src/faces/httpFace.js';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { connectSession, createLabServer } from '../../fixtures/bridge/labService.js';

async function startFace(t: { after: (fn: () => unknown) => void }) {
  const lab = await connectSession('lab', createLabServer('lab'));
  t.after(() => lab.close());
  const token = createBridgeToken();
  const face = await serveHttp(createSurface([lab]), { token, port: 0 });
  t.after(() => face.close());
  return { face, token };
}

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** POSTs `message` as a 2025-era client does; `signal` aborts the request (closing the connection). */
function post(
  url: string,
  token: string,
  message: unknown,
  options: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': '2025-11-25',
          ...options.headers,
        },
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(message));
  });
}

const call = (id: string | number, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) },
});

test('2025-era HTTP: a call is answered with one JSON body under the client own id', async (t) => {
  const { face, token } = await startFace(t);
  const init = await post(face.url, token, {
    jsonrpc: '2.0',
    id: 'init-1',
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.equal(init.status, 200);
  assert.match(String(init.headers['content-type']), /^application\/json/);
  const initialized = JSON.parse(init.body) as { id: unknown; result: { protocolVersion: string } };
  assert.equal(initialized.id, 'init-1');
  assert.equal(initialized.result.protocolVersion, '2025-11-25');
  assert.equal(init.headers['mcp-session-id'], undefined);

  const answer = await post(face.url, token, call(7, 'lab__echo', { text: 'json' }));
  assert.equal(answer.status, 200);
  assert.match(String(answer.headers['content-type']), /^application\/json/);
  assert.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.body));
  assert.deepEqual(JSON.parse(answer.body), {
    jsonrpc: '2.0',
    id: 7,
    result: { content: [{ type: 'text', text: 'json' }], structuredContent: { echoed: 'json' } },
  });

  // A refusal of the surface is a JSON-RPC error under the same id.
  const unknown = JSON.parse((await post(face.url, token, call('x', 'lab__nope', {}))).body) as {
    id: unknown;
    error: { code: number; message: string };
  };
  assert.equal(unknown.id, 'x');
  assert.equal(unknown.error.code, -32602);
  assert.match(unknown.error.message, /no tool "lab__nope"/);
});

test('2025-era HTTP: clients that reuse a request id concurrently each get their own answer', async (t) => {
  const { face, token } = await startFace(t);
  const answers = await Promise.all(
    [30, 10, 20].map((ms, i) => post(face.url, token, call(1, 'lab__args', { count: ms, flag: i % 2 === 0 }))),
  );
  answers.forEach((answer, i) => {
    const parsed = JSON.parse(answer.body) as { id: unknown; result: { content: { text: string }[] } };
    assert.equal(parsed.id, 1);
    assert.deepEqual(JSON.parse(parsed.result.content[0]!.text), { count: [30, 10, 20][i], flag: i % 2 === 0 });
  });
});

test('2025-era HTTP: notifications and responses are acknowledged with 202; an unknown version is refused', async (t) => {
  const { face, token } = await startFace(t);
  const note = await post(face.url, token, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(note.status, 202);
  assert.equal(note.body, '');
  const cancel = await post(face.url, token, {
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: 1 },
  });
  assert.equal(cancel.status, 202);
  const response = await post(face.url, token, { jsonrpc: '2.0', id: 5, result: {} });
  assert.equal(response.status, 202);
  const old = await post(face.url, token, call(2, 'lab__echo', { text: 'v' }), {
    headers: { 'mcp-protocol-version': '1999-01-01' },
  });
  assert.equal(old.status, 400);
  assert.match(JSON.parse(old.body).error.message, /Unsupported protocol version: 1999-01-01/);
});

test('2025-era HTTP: a call that asks for progress is answered as an SSE stream ending in its result', async (t) => {
  const { face, token } = await startFace(t);
  const answer = await post(face.url, token, call(3, 'lab__echo', { text: 'sse' }, { progressToken: 'p1' }));
  assert.equal(answer.status, 200);
  assert.match(String(answer.headers['content-type']), /^text\/event-stream/);
  const events = answer.body
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => {
      assert.match(e, /^event: message\ndata: /);
      return JSON.parse(e.slice(e.indexOf('data: ') + 6)) as { id?: unknown; result?: unknown };
    });
  const last = events.at(-1);
  assert.equal(last?.id, 3);
  assert.deepEqual((last?.result as { structuredContent?: unknown } | undefined)?.structuredContent, { echoed: 'sse' });
});

test('2025-era HTTP: a client that goes away cancels its call, freeing the service slot', async (t) => {
  const { face, token } = await startFace(t);
  // Four calls fill the service's in-flight limit (4); each client then goes away.
  const aborts = [1, 2, 3, 4].map(() => new AbortController());
  const pending = aborts.map((abort, i) =>
    post(face.url, token, call(i, 'lab__sleep', { ms: 60_000 }), { signal: abort.signal }).catch(
      (error: Error) => error,
    ),
  );
  // While they run, a fifth call is refused as busy.
  let busy: { result: { isError?: boolean; _meta?: Record<string, { code: string }> } } | undefined;
  for (let i = 0; i < 100; i++) {
    busy = JSON.parse((await post(face.url, token, call(9, 'lab__echo', { text: 'b' }))).body);
    if (busy?.result.isError) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(busy?.result._meta?.['scienceevolve/error']?.code, 'service_busy');
  for (const abort of aborts) abort.abort();
  for (const outcome of await Promise.all(pending)) assert.ok(outcome instanceof Error);
  // The cancelled calls left the gate: a new call is served (polled: the cancellations travel a hop).
  let served: { result: { isError?: boolean; structuredContent?: unknown } } | undefined;
  for (let i = 0; i < 100; i++) {
    served = JSON.parse((await post(face.url, token, call(10, 'lab__echo', { text: 'free' }))).body);
    if (!served?.result.isError) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(served?.result.structuredContent, { echoed: 'free' });
});
