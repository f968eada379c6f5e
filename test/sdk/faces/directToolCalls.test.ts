/**
 * The stdio face answers `tools/call` on a 2025-era connection directly from the surface: a real service
 * (`extraFields.cjs`, which writes its lines by hand) behind a surface served over a pair of streams, driven with raw JSON-RPC lines.
 * What the service answered reaches the client as it was (unknown fields and `_meta` byte for byte);
 * errors are the SDK's; a malformed call is still refused by the SDK; `notifications/cancelled` cancels
 * the call at the service, and no answer follows; a 2026-07-28 connection is served by the SDK as before.
 */
import assert from 'node:assert/strict';
import { createInterface } from 'node:readline';
import { PassThrough } from 'node:stream';
import { type TestContext, test } from 'node:test';
import { serveStdio } from '../../../packages/sdk/src/faces/stdioFace.js';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { assertAllGone, fixtureSpec, startService } from '../sessions/helpers.js';

/** A face over a pair of streams: `send` writes a line, `next` reads the next one (raw text and parsed). */
async function rawFace(t: TestContext) {
  const { session } = await startService(t, fixtureSpec(t, 'extraFields.cjs', { serviceName: 'extra' }));
  const toFace = new PassThrough();
  const fromFace = new PassThrough();
  const face = serveStdio(createSurface([session]), { input: toFace, output: fromFace });
  t.after(() => face.close());
  const lines = createInterface({ input: fromFace });
  const received: string[] = [];
  const waiters: (() => void)[] = [];
  lines.on('line', (line) => {
    received.push(line);
    waiters.shift()?.();
  });
  const next = async (): Promise<{ raw: string; message: Record<string, unknown> }> => {
    if (received.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
    const raw = received.shift()!;
    return { raw, message: JSON.parse(raw) as Record<string, unknown> };
  };
  const send = (message: unknown) => toFace.write(`${JSON.stringify(message)}\n`);
  return { session, face, send, next, pending: () => received.length };
}

const call = (id: number | string, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

test('2025-era stdio: a tool result reaches the client as the service sent it, unknown fields and _meta included', {
  timeout: 30_000,
}, async (t) => {
  const { session, send, next } = await rawFace(t);
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  assert.equal(((await next()).message.result as { protocolVersion: string }).protocolVersion, '2025-11-25');
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });

  send(call('a', 'extra__extra'));
  const { raw } = await next();
  // As the service wrote its result (fixture: EXTRA in extraFields.cjs), every field and every value byte
  // for byte; the one change is the order of the result's own keys: the SDK client's JSON-RPC message
  // parse (of every message on the service's pipe) puts a result's `_meta` first.
  const meta = '"_meta":{"vendor/trace":{"id":"abc","spans":[1,2.5,null,true]},"vendor/note":"ünïcode ✓"}';
  const rest =
    '"vendorField":{"nested":[{"x":1},"y"]},"content":[{"vendorHint":{"level":2,"tags":["a","b"]},"type":"text","text":"with extras"}]';
  assert.equal(raw, `{"jsonrpc":"2.0","id":"a","result":{${meta},${rest}}}`);

  // The surface's refusals are the same JSON-RPC errors the SDK sends for them.
  send(call(2, 'extra__nope'));
  const unknown = (await next()).message as { id: unknown; error: { code: number; message: string; data: unknown } };
  assert.equal(unknown.id, 2);
  assert.equal(unknown.error.code, -32602);
  assert.match(
    unknown.error.message,
    /this surface has no tool "extra__nope"\. Call a tool by a name from tools\/list\./,
  );
  assert.equal((unknown.error.data as { code: string }).code, 'unknown_tool');

  // Arguments that do not match the input schema: a tool error (isError), as before.
  send(call(3, 'extra__hold', { ms: 'soon' }));
  const invalid = (await next()).message as { result: { isError: boolean; _meta: Record<string, { code: string }> } };
  assert.equal(invalid.result.isError, true);
  assert.equal(invalid.result._meta['scienceevolve/error']?.code, 'invalid_arguments');

  // A malformed call is still the SDK's to refuse.
  send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 7 } });
  const malformed = (await next()).message as { id: unknown; error: { code: number } };
  assert.equal(malformed.id, 4);
  assert.equal(malformed.error.code, -32602);

  await session.close();
  await assertAllGone([session.pid]);
});

test('2025-era stdio: notifications/cancelled cancels a call at the service and no answer follows', {
  timeout: 30_000,
}, async (t) => {
  const { session, send, next, pending } = await rawFace(t);
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  await next();
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  send(call(1, 'extra__hold', { ms: 60_000 }));
  // The call reaches the service before it is cancelled: wait until the gate counts it in flight.
  send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'changed my mind' } });
  // The service saw the cancellation (polled: it travels a hop).
  let seen = '0';
  for (let i = 0; i < 200 && seen === '0'; i++) {
    send(call(`count-${i}`, 'extra__count'));
    const answer = (await next()).message as { id: unknown; result: { content: { text: string }[] } };
    assert.equal(answer.id, `count-${i}`, 'no answer to the cancelled call arrives');
    seen = answer.result.content[0]!.text;
    if (seen === '0') await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(seen, '1');
  assert.equal(pending(), 0);
  await session.close();
  await assertAllGone([session.pid]);
});

test('2026-07-28 stdio: tools/call goes through the SDK (results carry the era envelope)', {
  timeout: 30_000,
}, async (t) => {
  const { session, send, next } = await rawFace(t);
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  };
  send({ jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: envelope } });
  assert.ok(
    ((await next()).message.result as { supportedVersions: string[] }).supportedVersions.includes('2026-07-28'),
  );
  send({ ...call(1, 'extra__extra'), params: { name: 'extra__extra', arguments: {}, _meta: envelope } });
  const { message } = await next();
  const result = message.result as { _meta: Record<string, unknown>; vendorField?: unknown };
  assert.deepEqual(result._meta['io.modelcontextprotocol/serverInfo'], {
    name: 'scienceevolve-bridge',
    version: '0.1.0',
  });
  assert.deepEqual(result._meta['vendor/trace'], { id: 'abc', spans: [1, 2.5, null, true] });
  await session.close();
  await assertAllGone([session.pid]);
});
