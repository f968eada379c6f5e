/**
 * The stdio transport's line rules, case by case, on in-memory streams: what is delivered, what is skipped
 * as pollution, what is reported invalid (and why), and what ends the connection.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { ServiceStdioTransport } from '../../../packages/sdk/src/sessions/stdioTransport.js';

function harness() {
  const stdout = new PassThrough();
  const stdin = new PassThrough();
  const messages: JSONRPCMessage[] = [];
  const invalid: string[] = [];
  let firstPollution = 0;
  let closed = 0;
  const transport = new ServiceStdioTransport(stdout, stdin, {
    onFirstPollution: () => firstPollution++,
    onInvalidLine: (reason) => invalid.push(reason),
  });
  transport.onmessage = (m) => messages.push(m);
  transport.onclose = () => closed++;
  return {
    stdout,
    stdin,
    transport,
    messages,
    invalid,
    get firstPollution() {
      return firstPollution;
    },
    get closed() {
      return closed;
    },
  };
}

/** Lets the stream deliver what was written. */
const tick = () => new Promise((r) => setImmediate(r));

const answer = JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} });

test('messages split across chunks, and a multi-byte character split across chunks, are delivered whole', async () => {
  const h = harness();
  await h.transport.start();
  const text = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'é✓' } });
  const bytes = Buffer.from(`${text}\n${answer}\n`);
  const cut = Buffer.from(text).indexOf(Buffer.from('✓')) + 1; // inside the 3-byte ✓
  h.stdout.write(bytes.subarray(0, cut));
  await tick();
  h.stdout.write(bytes.subarray(cut));
  await tick();
  assert.equal(h.messages.length, 2);
  assert.deepEqual((h.messages[0] as unknown as { params: { data: string } }).params.data, 'é✓');
  assert.equal(h.transport.pollutedLines, 0);
});

test('lines that are not JSON-RPC are skipped and counted; the first one is warned once', async () => {
  const h = harness();
  await h.transport.start();
  for (const line of ['Server v1 starting', '{"level":"info","msg":"boot"}', '42', '["a"]', '', '   ']) {
    h.stdout.write(`${line}\n`);
  }
  h.stdout.write(`${answer}\n`);
  await tick();
  assert.equal(h.transport.pollutedLines, 4, 'empty lines are not pollution');
  assert.equal(h.firstPollution, 1);
  assert.equal(h.messages.length, 1);
});

test('during setup a \\r progress bar before the answer does not lose it; after setup it is not guessed at', async () => {
  const h = harness();
  await h.transport.start();
  h.stdout.write(`Loading 10%\rLoading 99%\r${answer}\n`);
  await tick();
  assert.equal(h.messages.length, 1);
  h.transport.endSetup();
  h.stdout.write(`working 50%\r${answer}\n`);
  await tick();
  assert.equal(h.messages.length, 1);
  assert.equal(h.transport.invalidLines, 1);
  assert.match(h.invalid[0] ?? '', /glued to other text/);
  // CRLF line endings are fine at any time.
  h.stdout.write(`${answer}\r\n`);
  await tick();
  assert.equal(h.messages.length, 2);
});

const invalidCases: [string, unknown, RegExp][] = [
  ['wrong version', { jsonrpc: '1.0', id: 1, result: {} }, /"jsonrpc" is "1.0", not "2.0"/],
  ['neither method nor id', { jsonrpc: '2.0' }, /neither a request or notification/],
  ['response without result or error', { jsonrpc: '2.0', id: 3 }, /neither "result" nor "error"/],
  [
    'response with both',
    { jsonrpc: '2.0', id: 3, result: {}, error: { code: 1, message: 'x' } },
    /both "result" and "error"/,
  ],
  ['method not a string', { jsonrpc: '2.0', method: 5 }, /"method" is not a string/],
  ['id an object', { jsonrpc: '2.0', id: {}, result: {} }, /"id" is neither a string nor a number/],
  ['error without message', { jsonrpc: '2.0', id: 3, error: { code: 1 } }, /error/],
  ['a batch', [{ jsonrpc: '2.0', method: 'x' }], /batch/],
];

for (const [name, value, reason] of invalidCases) {
  test(`a line that claims JSON-RPC but is invalid is reported, not delivered: ${name}`, async () => {
    const h = harness();
    await h.transport.start();
    h.stdout.write(`${JSON.stringify(value)}\n`);
    await tick();
    assert.equal(h.messages.length, 0);
    assert.equal(h.transport.invalidLines, 1);
    assert.equal(h.transport.pollutedLines, 0);
    assert.match(h.invalid[0] ?? '', reason);
    assert.equal(h.closed, 0, 'the connection stays open');
  });
}

test('broken JSON that claims JSON-RPC is reported with the parse error', async () => {
  const h = harness();
  await h.transport.start();
  h.stdout.write('{"jsonrpc":"2.0","id":1,"result":\n');
  await tick();
  assert.match(h.invalid[0] ?? '', /not valid JSON/);
});

test('bytes that are not UTF-8 end the connection with a clear reason', async () => {
  const h = harness();
  await h.transport.start();
  h.stdout.write(Buffer.from([0x7b, 0xff, 0x0a]));
  await tick();
  assert.match(h.transport.fatalReason ?? '', /stdout is not UTF-8/);
  assert.equal(h.closed, 1);
  assert.ok(h.stdin.writableEnded, 'stdin was ended');
  await assert.rejects(h.transport.send({ jsonrpc: '2.0', method: 'x' }), /Not connected/);
});

test('a last message without a newline is delivered at end of stream; send writes one line', async () => {
  const h = harness();
  await h.transport.start();
  const written: string[] = [];
  h.stdin.on('data', (c: Buffer) => written.push(c.toString()));
  await h.transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
  assert.deepEqual(written, ['{"jsonrpc":"2.0","id":1,"method":"ping"}\n']);
  h.stdout.end(answer);
  await tick();
  assert.equal(h.messages.length, 1);
  assert.equal(h.closed, 1);
  await h.transport.close();
  assert.equal(h.closed, 1, 'close is idempotent');
});

test('an overlong line ends the connection', async () => {
  const stdout = new PassThrough();
  const transport = new ServiceStdioTransport(stdout, new PassThrough(), { maxLineChars: 100 });
  await transport.start();
  stdout.write('x'.repeat(101));
  await tick();
  assert.match(transport.fatalReason ?? '', /longer than 100 characters/);
});
