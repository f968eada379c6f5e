// Spawns the stdio face fixture (a real process, served with `node --import tsx`) and drives it with the
// official v2 client in both protocol eras, then with raw lines for the input limits. Each spawn costs
// about a second of tsx start-up; the suite's timeout is 30 s for that reason.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { killIfAlive, waitUntilGone } from '../../fixtures/bridge/processGone.js';

const fixture = fileURLToPath(new URL('../../fixtures/bridge/servesSurfaceOnStdio.ts', import.meta.url));
const eras = [
  { label: '2025-11-25 (initialize)', mode: 'legacy' as const, version: '2025-11-25' },
  { label: '2026-07-28 (server/discover)', mode: { pin: '2026-07-28' }, version: '2026-07-28' },
];

for (const era of eras) {
  test(`stdio face, ${era.label}: tools/list, tools/call, resources/read, prompts/get`, {
    timeout: 30_000,
  }, async (t) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', fixture],
      stderr: 'pipe',
    });
    const client = new Client(
      { name: 'stdio-face-test', version: '1.0.0' },
      { versionNegotiation: { mode: era.mode } },
    );
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await client.connect(transport);
    const pid = transport.pid!;
    t.after(() => killIfAlive(pid));
    assert.equal(client.getNegotiatedProtocolVersion(), era.version);

    const { tools } = await client.listTools();
    assert.ok(tools.some((tool) => tool.name === 'lab__echo'));
    assert.ok(tools.some((tool) => tool.name === 'twin__echo'));
    const echo = await client.callTool({ name: 'lab__echo', arguments: { text: 'hello' } });
    assert.deepEqual(echo.structuredContent, { echoed: 'hello' });
    const refused = await client.callTool({ name: 'lab__echo', arguments: { text: 1 } });
    assert.equal(refused.isError, true);
    const read = await client.readResource({ uri: 'other://readme' });
    assert.equal((read.contents[0] as { text: string }).text, 'other says: other://readme');
    const prompt = await client.getPrompt({ name: 'twin__greet', arguments: { who: 'Ada' } });
    assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'Hello, Ada!' });
    await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), /no tool "nope"/);

    await client.close();
    await waitUntilGone(pid);
    assert.match(stderr, /noise from console\.log/);
    assert.match(stderr, /noise from process\.stdout\.write/);
  });
}

test('stdio face with passthrough keeps the one service own names', { timeout: 30_000 }, async (t) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', fixture, '--passthrough'],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'stdio-face-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid!;
  t.after(() => killIfAlive(pid));
  const { tools } = await client.listTools();
  assert.ok(tools.some((tool) => tool.name === 'echo'));
  assert.deepEqual((await client.callTool({ name: 'echo', arguments: { text: 'as itself' } })).structuredContent, {
    echoed: 'as itself',
  });
  assert.deepEqual(
    (await client.listPrompts()).prompts.map((p) => p.name),
    ['greet'],
  );
  await client.close();
  await waitUntilGone(pid);
});

test('stdio face: oversized and deep lines and batches are refused; stdout carries protocol only', {
  timeout: 30_000,
}, async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['pipe', 'pipe', 'pipe'] });
  const pid = child.pid!;
  t.after(() => killIfAlive(pid));
  child.stderr.resume();
  const lines = createInterface({ input: child.stdout });
  const received: unknown[] = [];
  const waiters: (() => void)[] = [];
  lines.on('line', (line) => {
    received.push(JSON.parse(line)); // Throws (fails the test) on anything that is not JSON.
    waiters.shift()?.();
  });
  const next = async (): Promise<Record<string, unknown>> => {
    if (received.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
    return received.shift() as Record<string, unknown>;
  };
  const send = (text: string) => child.stdin.write(`${text}\n`);

  send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  );
  assert.equal(((await next()).result as { protocolVersion: string }).protocolVersion, '2025-11-25');
  send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));

  // A line over 4 MiB, written in pieces.
  const big = JSON.stringify({
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'lab__echo', arguments: { text: 'x'.repeat(4 * 1024 * 1024) } },
  });
  for (let i = 0; i < big.length; i += 1024 * 1024) child.stdin.write(big.slice(i, i + 1024 * 1024));
  child.stdin.write('\n');
  const oversized = await next();
  assert.equal(oversized.id, null);
  assert.equal((oversized.error as { code: number }).code, -32600);
  assert.match((oversized.error as { message: string }).message, /at most 4194304 bytes/);

  // Nesting deeper than 64.
  let deep: unknown = 'leaf';
  for (let i = 0; i < 70; i++) deep = { d: deep };
  send(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'lab__args', arguments: deep } }));
  const tooDeep = await next();
  assert.match((tooDeep.error as { message: string }).message, /nested deeper than 64 levels/);

  // A batch.
  send(JSON.stringify([{ jsonrpc: '2.0', id: 4, method: 'tools/list' }]));
  const batch = await next();
  assert.match((batch.error as { message: string }).message, /batches are refused/);

  // Garbage, then a normal request still works on the same connection.
  send('not json');
  assert.equal(((await next()).error as { code: number }).code, -32700);
  send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/call',
      params: { name: 'lab__echo', arguments: { text: 'still here' } },
    }),
  );
  const answer = await next();
  assert.equal(answer.id, 5);
  assert.deepEqual((answer.result as { structuredContent: unknown }).structuredContent, { echoed: 'still here' });

  // Sampling/elicitation/roots-style requests and subscriptions get a clear -32601, never silence.
  for (const [id, method] of [
    [6, 'resources/subscribe'],
    [7, 'sampling/createMessage'],
    [8, 'roots/list'],
  ] as const) {
    send(JSON.stringify({ jsonrpc: '2.0', id, method, params: { uri: 'lab://readme' } }));
    const refused = await next();
    assert.equal(refused.id, id);
    assert.equal((refused.error as { code: number }).code, -32601, method);
  }

  child.stdin.end();
  await once(child, 'exit');
  await waitUntilGone(pid);
});
