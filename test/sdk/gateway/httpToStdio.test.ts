// A real Streamable HTTP server (the official v1 SDK's transport, stateless, requiring an API key
// header) is bridged to stdio by the http-to-stdio fixture process, which the official v2 client drives
// in both eras. Spawns take about a second each under tsx, hence the 30 s timeouts.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { httpToStdio } from '../../../packages/sdk/src/gateway/httpToStdio.js';
import { connectSession, createLabServer } from '../../fixtures/bridge/labService.js';
import { killIfAlive, waitUntilGone } from '../../fixtures/bridge/processGone.js';
import { serveStatelessMcp } from '../../fixtures/remote/statelessServer.js';

const fixture = fileURLToPath(new URL('../../fixtures/bridge/runsHttpToStdio.ts', import.meta.url));
const API_KEY = 'k-123456789';

async function startRemote(t: { after: (fn: () => unknown) => void }): Promise<string> {
  return serveStatelessMcp(
    t,
    () => createLabServer('remote'),
    (req, res) => {
      if (req.headers['x-api-key'] === API_KEY) return true;
      res.writeHead(401).end();
      return false;
    },
  );
}

for (const mode of ['legacy', { pin: '2026-07-28' }] as const) {
  test(`http-to-stdio, stdio side ${JSON.stringify(mode)}: tools, resources and prompts pass through`, {
    timeout: 30_000,
  }, async (t) => {
    const url = await startRemote(t);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', fixture, url, `X-Api-Key: ${API_KEY}`],
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'http-to-stdio-test', version: '1.0.0' }, { versionNegotiation: { mode } });
    await client.connect(transport);
    const pid = transport.pid!;
    t.after(() => killIfAlive(pid));

    const { tools } = await client.listTools();
    assert.ok(
      tools.some((tool) => tool.name === 'echo'),
      'names are not prefixed',
    );
    assert.deepEqual((await client.callTool({ name: 'echo', arguments: { text: 'bridged' } })).structuredContent, {
      echoed: 'bridged',
    });
    const oops = await client.callTool({ name: 'oops', arguments: {} });
    assert.equal(oops.isError, true);
    await assert.rejects(client.callTool({ name: 'reject', arguments: {} }), /rejected on purpose/);
    const read = await client.readResource({ uri: 'remote://items/9' });
    assert.equal((read.contents[0] as { text: string }).text, 'remote says: remote://items/9');
    assert.deepEqual(
      (await client.listResourceTemplates()).resourceTemplates.map((r) => r.uriTemplate),
      ['remote://items/{id}'],
    );
    const prompt = await client.getPrompt({ name: 'greet', arguments: { who: 'Cy' } });
    assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'Hello, Cy!' });

    await client.close();
    await waitUntilGone(pid);
    assert.match(stderr, /bridging http:\/\/127\.0\.0\.1:\d+\/mcp \(remote protocol 2025-11-25\)/);
  });
}

test('http-to-stdio against our own HTTP face negotiates 2026-07-28 on the HTTP side', async (t) => {
  const { createBridgeToken, serveHttp } = await import('../../../packages/sdk/src/faces/httpFace.js');
  const { createSurface } = await import('../../../packages/sdk/src/surface/surface.js');
  const lab = await connectSession('lab', createLabServer('lab'));
  t.after(() => lab.close());
  const token = createBridgeToken();
  const face = await serveHttp(createSurface([lab]), { token });
  t.after(() => face.close());
  const input = new PassThrough();
  const output = new PassThrough();
  const bridge = await httpToStdio({ url: face.url, headers: { Authorization: `Bearer ${token}` }, input, output });
  t.after(() => bridge.close());
  assert.equal(bridge.remoteProtocolVersion, '2026-07-28');
  const lines: string[] = [];
  // Whole lines only: a line may come in more than one chunk.
  let partial = '';
  output.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts.filter(Boolean));
  });
  input.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
  );
  input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  input.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'lab__echo', arguments: { text: 'twice bridged' } } })}\n`,
  );
  const deadline = Date.now() + 5_000;
  while (lines.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(lines.length >= 2, `two answers within 5 s, got: ${JSON.stringify(lines)} (partial: ${partial})`);
  const answer = JSON.parse(lines[1]!) as {
    id: number;
    result: { structuredContent: unknown; _meta?: Record<string, unknown> };
  };
  assert.equal(answer.id, 2);
  assert.deepEqual(answer.result.structuredContent, { echoed: 'twice bridged' });
  // The 2026 envelope of the HTTP side does not leak into the 2025 stdio side.
  assert.equal(answer.result._meta?.['io.modelcontextprotocol/serverInfo'], undefined);
  input.end();
  await bridge.closed;
});

test('http-to-stdio names an unreachable server', async () => {
  await assert.rejects(
    httpToStdio({
      url: 'http://127.0.0.1:9/mcp',
      input: new PassThrough(),
      output: new PassThrough(),
      connectTimeoutMs: 3_000,
    }),
    { code: 'remote_unreachable', message: /could not connect to the MCP server at http:\/\/127\.0\.0\.1:9\/mcp/ },
  );
});
