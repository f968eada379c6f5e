/**
 * Remote sessions kept honestly, against real Streamable HTTP servers written with the v2 SDK on
 * 127.0.0.1: closing ends the session (DELETE) so the remote frees it; a restarted remote's 404 starts a
 * new session once and the request is retried; a remote that is down is `remote_unreachable`; a modern
 * remote's serverInfo stamp is not passed on; a tool a 2025-era remote adds is listed again and offered.
 * Then the same through `bridge http-to-stdio`.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { type TestContext, test } from 'node:test';
import { httpToStdio } from '../../../packages/sdk/src/gateway/httpToStdio.js';
import { isSdkError } from '../../../packages/sdk/src/errors.js';
import { connectRemoteService } from '../../../packages/sdk/src/sessions/remoteService.js';
import type { ServiceEvent } from '../../../packages/sdk/src/sessions/serviceEvents.js';
import { startSessionServer } from '../../fixtures/remote/sessionServer.js';
import { waitFor } from './helpers.js';

const after = (t: TestContext) => (fn: () => unknown) => t.after(fn);

test('closing a remote service ends its session at the remote (DELETE)', async (t) => {
  const remote = await startSessionServer('stateful', after(t));
  for (let i = 0; i < 3; i++) {
    const session = await connectRemoteService({ name: 'r', url: remote.url }, { deadline: Date.now() + 10_000 });
    t.after(() => session.close());
    assert.equal(session.catalog.protocolVersion, '2025-11-25');
    assert.equal(remote.sessions(), 1, 'one session while connected');
    await session.close();
    assert.equal(remote.sessions(), 0, `session ${i + 1} was freed on close`);
  }
  assert.equal(remote.deletes(), 3);
});

test('a remote that forgot the session (restarted) gets a new one once, and the call is retried', async (t) => {
  const remote = await startSessionServer('stateful', after(t));
  const session = await connectRemoteService({ name: 'r', url: remote.url }, { deadline: Date.now() + 10_000 });
  t.after(() => session.close());
  assert.deepEqual((await session.callTool('echo', { text: 'before' })).content, [{ type: 'text', text: 'before' }]);
  await remote.restart();
  assert.equal(remote.sessions(), 0);
  const [a, b] = await Promise.all([session.callTool('echo', { text: 'a' }), session.callTool('echo', { text: 'b' })]);
  assert.deepEqual([a.content, b.content], [[{ type: 'text', text: 'a' }], [{ type: 'text', text: 'b' }]]);
  assert.equal(remote.sessions(), 1, 'two calls that met the forgotten session started one new session');
  assert.deepEqual((await session.callTool('echo', { text: 'after' })).content, [{ type: 'text', text: 'after' }]);
  await session.close();
  assert.equal(remote.sessions(), 0, 'the new session is ended on close');
});

test('a remote that is down answers remote_unreachable, not fetch failed', async (t) => {
  const remote = await startSessionServer('stateful', after(t));
  const session = await connectRemoteService({ name: 'r', url: remote.url }, { deadline: Date.now() + 10_000 });
  t.after(() => session.close());
  await remote.stop();
  await assert.rejects(session.callTool('echo', { text: 'x' }), (error) => {
    assert.ok(isSdkError(error), `an SdkError, not ${String(error)}`);
    assert.equal(error.code, 'remote_unreachable');
    assert.match(error.message, /remote service "r" could not be reached for tools\/call "echo"/);
    assert.ok(error.remedy);
    return true;
  });
});

test('a tool a 2025-11-25 remote adds while connected is heard (list_changed) and offered', async (t) => {
  const remote = await startSessionServer('stateful', after(t));
  const events: ServiceEvent[] = [];
  const session = await connectRemoteService(
    { name: 'r', url: remote.url },
    { deadline: Date.now() + 10_000, listChangeDebounceMs: 0, onEvent: (e) => events.push(e) },
  );
  t.after(() => session.close());
  assert.ok(!session.catalog.tools.some((tool) => tool.name === 'late'));
  assert.deepEqual((await session.callTool('add_tool', { name: 'late' })).content, [
    { type: 'text', text: 'added late' },
  ]);
  const change = await waitFor(() =>
    events.find(
      (e): e is Extract<ServiceEvent, { type: 'service.catalog_changed' }> => e.type === 'service.catalog_changed',
    ),
  );
  assert.deepEqual(change.added.tools, ['late']);
  assert.ok(session.catalog.tools.some((tool) => tool.name === 'late'));
  assert.deepEqual((await session.callTool('late', {})).content, [{ type: 'text', text: 'I am late' }]);
  await session.close();
  assert.equal(remote.sessions(), 0);
});

test("a modern remote's serverInfo stamp is not passed on; its other _meta is", async (t) => {
  const remote = await startSessionServer('modern', after(t));
  const session = await connectRemoteService({ name: 'm', url: remote.url }, { deadline: Date.now() + 10_000 });
  t.after(() => session.close());
  assert.equal(session.catalog.protocolVersion, '2026-07-28');
  const result = await session.callTool('echo', { text: 'x' });
  assert.deepEqual(result.content, [{ type: 'text', text: 'x' }]);
  assert.equal(result._meta?.['io.modelcontextprotocol/serverInfo'], undefined);
  const kept = await session.callTool('meta', {});
  assert.deepEqual(kept._meta, { 'example.com/kept': 1 });
});

/** A line client of the bridge's stdio side: `request` resolves with the answer to it. */
function lineClient(t: TestContext) {
  const input = new PassThrough();
  const output = new PassThrough();
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  let buffer = '';
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const message = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
      buffer = buffer.slice(nl + 1);
      if (typeof message.id === 'number') waiting.get(message.id)?.(message);
    }
  });
  t.after(() => input.end());
  let next = 1;
  return {
    input,
    output,
    request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
      const id = next++;
      const answer = new Promise<Record<string, unknown>>((resolve) => waiting.set(id, resolve));
      input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return answer;
    },
    notify(method: string) {
      input.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
    },
  };
}

test('bridge http-to-stdio: a session renewed after a restart, ended on close, and remote_unreachable when down', async (t) => {
  const remote = await startSessionServer('stateful', after(t));
  const lines = lineClient(t);
  const bridge = await httpToStdio({ url: remote.url, input: lines.input, output: lines.output });
  t.after(() => bridge.close());
  assert.equal(remote.sessions(), 1);
  const init = await lines.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'lines', version: '1' },
  });
  assert.ok(init.result);
  lines.notify('notifications/initialized');
  const call = (text: string) => lines.request('tools/call', { name: 'echo', arguments: { text } });
  assert.deepEqual((await call('one')).result, { content: [{ type: 'text', text: 'one' }] });

  await remote.restart();
  assert.deepEqual((await call('two')).result, { content: [{ type: 'text', text: 'two' }] });
  assert.equal(remote.sessions(), 1);

  await bridge.close();
  assert.equal(remote.sessions(), 0, 'closing the bridge ended its session');
  assert.ok(remote.deletes() >= 1);
});

test('bridge http-to-stdio: a remote that went down answers remote_unreachable', async (t) => {
  const remote = await startSessionServer('stateful', after(t));
  const lines = lineClient(t);
  const bridge = await httpToStdio({ url: remote.url, input: lines.input, output: lines.output });
  t.after(() => bridge.close());
  await lines.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'lines', version: '1' },
  });
  lines.notify('notifications/initialized');
  await remote.stop();
  const answer = await lines.request('tools/call', { name: 'echo', arguments: { text: 'x' } });
  const error = answer.error as { code: number; message: string; data?: { code?: string } };
  assert.equal(error.data?.code, 'remote_unreachable', JSON.stringify(error));
  assert.match(error.message, /could not be reached/);
});
