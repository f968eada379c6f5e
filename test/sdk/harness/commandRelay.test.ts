/**
 * The socket face and the stdio relay an agent CLI launches: a private socket (0700 directory, 0600
 * socket) removed at close; the relay answers `initialize` quickly (the figure is reported, not asserted:
 * timing goals live in bench/), relays tool calls, which the face counts; the relay exits when its client
 * closes stdin, when the face closes, and with a message when there is no socket.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { relayPath, startSocketFace } from '../../../packages/sdk/src/faces/socketFace.js';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { killIfAlive, waitUntilGone } from '../../fixtures/bridge/processGone.js';

/** A surface with one in-process tool, `lab__echo`: no service process needed. */
function echoSurface() {
  return createSurface([
    {
      name: 'lab',
      tools: [
        {
          tool: {
            name: 'echo',
            inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          },
          handler: (args) => ({ content: [{ type: 'text', text: `echo: ${String(args.text)}` }] }),
        },
      ],
    },
  ]);
}

test('the relay answers initialize from a cold start; calls through it reach the surface and are counted', {
  timeout: 30_000,
}, async (t) => {
  const face = await startSocketFace(echoSurface());
  t.after(() => face.close());
  assert.equal(statSync(dirname(face.socketPath)).mode & 0o777, 0o700);
  assert.equal(statSync(face.socketPath).mode & 0o777, 0o600);
  assert.ok(statSync(face.socketPath).isSocket());

  // Start to the answer of `initialize`, with raw lines: what a CLI waits for before it lists tools.
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    const relay = spawn(process.execPath, [relayPath(), face.socketPath], { stdio: ['pipe', 'pipe', 'pipe'] });
    t.after(() => killIfAlive(relay.pid));
    const lines = createInterface({ input: relay.stdout! });
    relay.stdin!.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      })}\n`,
    );
    const first = await lines[Symbol.asyncIterator]().next();
    samples.push(performance.now() - started);
    assert.equal(first.done, false, 'an answer line');
    assert.equal(JSON.parse(first.value as string).result.serverInfo.name, 'scienceevolve-bridge');
    relay.stdin!.end();
    await waitUntilGone(relay.pid!);
  }
  t.diagnostic(`relay start to initialize answer, ms: ${samples.map((s) => s.toFixed(1)).join(', ')}`);

  // A real client (the v1 SDK, as the CLIs' own MCP clients) through the relay.
  const transport = new StdioClientTransport({ command: process.execPath, args: [relayPath(), face.socketPath] });
  const client = new Client({ name: 'relay-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid!;
  t.after(() => killIfAlive(pid));
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['lab__echo'],
  );
  const result = await client.callTool({ name: 'lab__echo', arguments: { text: 'hi' } });
  assert.deepEqual(result.content, [{ type: 'text', text: 'echo: hi' }]);
  const refused = await client.callTool({ name: 'lab__echo', arguments: { text: 1 } });
  assert.equal(refused.isError, true);
  assert.equal(face.toolCalls, 2, 'a refused call reached the surface too');
  assert.equal(face.connections, 4);
  await client.close();
  await waitUntilGone(pid);
});

test('the relay exits when the face closes, and the socket and its directory are removed', {
  timeout: 30_000,
}, async (t) => {
  const face = await startSocketFace(echoSurface());
  t.after(() => face.close());
  const transport = new StdioClientTransport({ command: process.execPath, args: [relayPath(), face.socketPath] });
  const client = new Client({ name: 'relay-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid!;
  t.after(() => killIfAlive(pid));
  await client.listTools();
  await face.close();
  await waitUntilGone(pid);
  assert.ok(!existsSync(face.socketPath));
  assert.ok(!existsSync(dirname(face.socketPath)));
  await client.close();
});

test('the relay without a socket says so on stderr and exits 1', { timeout: 30_000 }, async (t) => {
  const relay = spawn(process.execPath, [relayPath(), '/nonexistent/se-mcp/surface.sock'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.after(() => killIfAlive(relay.pid));
  let stderr = '';
  relay.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => relay.once('exit', (exitCode) => resolve(exitCode)));
  assert.equal(code, 1);
  assert.match(stderr, /cannot connect to the invocation's surface at \/nonexistent\/se-mcp\/surface\.sock \(ENOENT\)/);
});
