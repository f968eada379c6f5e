import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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

for (const mode of ['legacy', 'auto'] as const) {
  test(`HTTP face, v2 client (${mode}): tools/list, tools/call, resources/read, prompts/get`, async (t) => {
    const { face, token } = await startFace(t);
    assert.match(face.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const client = new Client({ name: 'http-face-test', version: '1.0.0' }, { versionNegotiation: { mode } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(face.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    t.after(() => client.close());
    assert.equal(client.getNegotiatedProtocolVersion(), mode === 'legacy' ? '2025-11-25' : '2026-07-28');
    assert.ok((await client.listTools()).tools.some((tool) => tool.name === 'lab__echo'));
    assert.deepEqual(
      (await client.callTool({ name: 'lab__echo', arguments: { text: 'over http' } })).structuredContent,
      {
        echoed: 'over http',
      },
    );
    const read = await client.readResource({ uri: 'lab://items/3' });
    assert.equal((read.contents[0] as { text: string }).text, 'lab says: lab://items/3');
    const prompt = await client.getPrompt({ name: 'lab__greet', arguments: { who: 'Bo' } });
    assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'Hello, Bo!' });
  });
}

test('HTTP face, v1 client (2025 Streamable HTTP)', async (t) => {
  const { face, token } = await startFace(t);
  const client = new V1Client({ name: 'http-face-test-v1', version: '1.0.0' });
  await client.connect(
    new V1StreamableHTTPClientTransport(new URL(face.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  t.after(() => client.close());
  const result = await client.callTool({ name: 'lab__echo', arguments: { text: 'v1' } });
  assert.deepEqual(result.structuredContent, { echoed: 'v1' });
});

/** A raw request, so Host and other headers can be anything. */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

test('HTTP face refusals, each by status code', async (t) => {
  const { face, token } = await startFace(t);
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const good = {
    authorization: `Bearer ${token}`,
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  const port = new URL(face.url).port;
  const cases: {
    why: string;
    status: number;
    method?: string;
    url?: string;
    headers: Record<string, string>;
    body?: string;
  }[] = [
    { why: 'a good request', status: 200, headers: good, body: initialize },
    { why: 'no token', status: 401, headers: { ...good, authorization: '' }, body: initialize },
    { why: 'wrong token', status: 401, headers: { ...good, authorization: `Bearer ${token}x` }, body: initialize },
    { why: 'not a bearer token', status: 401, headers: { ...good, authorization: `Basic ${token}` }, body: initialize },
    { why: 'foreign Host', status: 403, headers: { ...good, host: 'evil.example.com' }, body: initialize },
    { why: 'Host with another port', status: 403, headers: { ...good, host: '127.0.0.1:1' }, body: initialize },
    { why: 'foreign Origin', status: 403, headers: { ...good, origin: 'https://evil.example.com' }, body: initialize },
    {
      why: 'loopback Origin is fine',
      status: 200,
      headers: { ...good, origin: `http://localhost:${port}` },
      body: initialize,
    },
    // A GET with Accept text/event-stream opens the 2025-11-25 notification stream (test/sdk/surface/listChanges).
    {
      why: 'GET without Accept text/event-stream',
      status: 406,
      method: 'GET',
      headers: { ...good, accept: 'application/json' },
    },
    { why: 'GET without the token', status: 401, method: 'GET', headers: { ...good, authorization: '' } },
    { why: 'DELETE', status: 405, method: 'DELETE', headers: good },
    { why: 'PUT', status: 405, method: 'PUT', headers: good, body: initialize },
    {
      why: 'Accept without text/event-stream',
      status: 406,
      headers: { ...good, accept: 'application/json' },
      body: initialize,
    },
    {
      why: 'Accept without application/json',
      status: 406,
      headers: { ...good, accept: 'text/event-stream' },
      body: initialize,
    },
    { why: 'text body', status: 415, headers: { ...good, 'content-type': 'text/plain' }, body: initialize },
    {
      why: 'a body over 4 MiB',
      status: 413,
      headers: good,
      body: JSON.stringify({ pad: 'x'.repeat(4 * 1024 * 1024) }),
    },
    {
      why: 'a chunked body over 4 MiB',
      status: 413,
      headers: { ...good, 'transfer-encoding': 'chunked' },
      body: JSON.stringify({ pad: 'x'.repeat(4 * 1024 * 1024) }),
    },
    { why: 'another path', status: 404, url: face.url.replace('/mcp', '/sse'), headers: good, body: initialize },
  ];
  for (const c of cases) {
    const response = await raw(c.url ?? face.url, { method: c.method, headers: c.headers, body: c.body });
    assert.equal(response.status, c.status, `${c.why}: ${response.body}`);
    if (c.status === 401) assert.equal(response.headers['www-authenticate'], 'Bearer');
    if (c.status === 405) assert.equal(response.headers.allow, 'GET, POST');
  }
});

test('HTTP face listens on 127.0.0.1 only and needs a real token', async (t) => {
  const lab = await connectSession('lab', createLabServer('lab'));
  t.after(() => lab.close());
  const surface = createSurface([lab]);
  await assert.rejects(serveHttp(surface, { token: createBridgeToken(), host: '0.0.0.0' as '127.0.0.1' }), {
    code: 'usage',
  });
  await assert.rejects(serveHttp(surface, { token: 'short' }), { code: 'usage' });
  const face = await serveHttp(surface, { token: createBridgeToken() });
  await face.close();
  await face.close();
  await assert.rejects(fetch(face.url, { method: 'POST' }));
});
