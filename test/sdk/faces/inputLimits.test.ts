/**
 * One set of input limits on every face: the same messages sent to the stdio face and to the HTTP face
 * are refused alike (the same JSON-RPC error code and message; HTTP 400, or 413 for size), and the same
 * good messages pass both. Real faces over a real surface (the lab service in memory).
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { PassThrough } from 'node:stream';
import { type TestContext, test } from 'node:test';
import { createBridgeToken, serveHttp } from '../../../packages/sdk/src/faces/httpFace.js';
import { DEFAULT_INPUT_LIMITS } from '../../../packages/sdk/src/faces/inputLimits.js';
import { serveStdio } from '../../../packages/sdk/src/faces/stdioFace.js';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { connectSession, createLabServer } from '../../fixtures/bridge/labService.js';

const SIZE = 4096;

function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

/** An `initialize` whose params hold `levels` more levels (the request reaches 4 levels at `experimental`). */
function initialize(id: number, levels = 0): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: levels === 0 ? {} : { experimental: { deep: nested(levels) } },
      clientInfo: { name: 'limits', version: '1' },
    },
  };
}

interface Answer {
  status?: number;
  message: { id?: unknown; result?: unknown; error?: { code: number; message: string } };
}

async function faces(t: TestContext) {
  const lab = await connectSession('lab', createLabServer('lab'));
  t.after(() => lab.close());
  const surface = createSurface([lab]);

  const input = new PassThrough();
  const output = new PassThrough();
  const stdio = serveStdio(surface, { input, output, maxLineBytes: SIZE });
  t.after(() => stdio.close());
  const lines: string[] = [];
  let buffer = '';
  let wake: () => void = () => {};
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
    wake();
  });
  const sendStdio = async (text: string): Promise<Answer> => {
    input.write(`${text}\n`);
    while (lines.length === 0) await new Promise<void>((resolve) => (wake = resolve));
    return { message: JSON.parse(lines.shift()!) };
  };

  const token = createBridgeToken();
  const http = await serveHttp(surface, { token, maxBodyBytes: SIZE });
  t.after(() => http.close());
  const sendHttp = (text: string): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const req = httpRequest(
        http.url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
          },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => {
            // A 2025 answer may come as one SSE event; take its data line.
            const data = /^data: (.*)$/m.exec(body)?.[1] ?? body;
            resolve({ status: res.statusCode ?? 0, message: JSON.parse(data) });
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  return { sendStdio, sendHttp };
}

test('both faces refuse and accept the same messages, with the same errors', async (t) => {
  const { sendStdio, sendHttp } = await faces(t);
  const refused: { why: string; text: string; code: number; message: RegExp; status: number }[] = [
    {
      why: 'an 83-level message',
      text: JSON.stringify(initialize(1, 79)),
      code: -32600,
      message: /nested deeper than 64 levels/,
      status: 400,
    },
    {
      why: 'a batch',
      text: JSON.stringify([initialize(2), initialize(3)]),
      code: -32600,
      message: /batches are refused/,
      status: 400,
    },
    { why: 'not JSON', text: '{"jsonrpc": "2.0", "id": 4,', code: -32700, message: /parse error/, status: 400 },
    {
      why: 'not JSON-RPC',
      text: JSON.stringify({ jsonrpc: '1.0', id: 5, method: 'initialize' }),
      code: -32600,
      message: /not a JSON-RPC 2.0 message/,
      status: 400,
    },
  ];
  for (const c of refused) {
    const [viaStdio, viaHttp] = [await sendStdio(c.text), await sendHttp(c.text)];
    assert.equal(viaHttp.status, c.status, `${c.why} over HTTP: ${JSON.stringify(viaHttp.message)}`);
    for (const [face, answer] of [
      ['stdio', viaStdio],
      ['HTTP', viaHttp],
    ] as const) {
      assert.equal(answer.message.error?.code, c.code, `${c.why} over ${face}: ${JSON.stringify(answer.message)}`);
      assert.match(answer.message.error?.message ?? '', c.message, `${c.why} over ${face}`);
      assert.equal(answer.message.result, undefined);
    }
    assert.deepEqual(viaStdio.message.error, viaHttp.message.error, `${c.why}: one error on both faces`);
    assert.equal(viaStdio.message.id, viaHttp.message.id);
  }

  // Over the size limit: refused on both (HTTP answers 413 before reading on).
  const big = JSON.stringify({ ...initialize(6), pad: 'x'.repeat(SIZE) });
  const [bigStdio, bigHttp] = [await sendStdio(big), await sendHttp(big)];
  assert.equal(bigHttp.status, 413);
  assert.match(bigHttp.message.error?.message ?? '', new RegExp(`limit is ${SIZE} bytes`));
  assert.equal(bigStdio.message.error?.code, -32600);
  assert.match(bigStdio.message.error?.message ?? '', new RegExp(`at most ${SIZE} bytes`));

  // At the limits: accepted on both (60 levels inside the request's 4 is 64).
  for (const good of [
    JSON.stringify(initialize(7, DEFAULT_INPUT_LIMITS.maxDepth - 4)),
    JSON.stringify(initialize(8)),
  ]) {
    const [viaStdio, viaHttp] = [await sendStdio(good), await sendHttp(good)];
    assert.equal(viaHttp.status, 200, JSON.stringify(viaHttp.message));
    assert.ok(viaStdio.message.result, JSON.stringify(viaStdio.message));
    assert.ok(viaHttp.message.result, JSON.stringify(viaHttp.message));
  }
});
