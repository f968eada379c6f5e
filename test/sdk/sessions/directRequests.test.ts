/**
 * `tools/call` sent beside the official client (sessions/directRequests.ts), on a real 2025-era service
 * process: the answer under our own id, the timeout and the caller's abort each cancelled at the service
 * as the client would, a JSON-RPC error as the client's ProtocolError, a closed connection failing what is
 * in flight; and the transport's and the faces' shortcuts past the message schema, which must accept only
 * what the schema accepts and returns unchanged.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client, parseJSONRPCMessage, ProtocolError } from '@modelcontextprotocol/client';
import { parseJSONRPCMessage as parseOnServer } from '@modelcontextprotocol/server';
import { serviceNodePath } from '../../../packages/sdk/src/processes/serviceEnv.js';
import { isPlainResponse, ServiceStdioTransport } from '../../../packages/sdk/src/sessions/stdioTransport.js';
import { isPlainRequest } from '../../../packages/sdk/src/faces/inputLimits.js';
import { fixture, isGone, tempDir, waitFor } from './helpers.js';

function cancelLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

test('direct requests: answered under our id, cancelled at the service on timeout and abort, errors and a closed connection as the client reports them', async (t) => {
  const cancelFile = join(tempDir(t), 'cancelled.txt');
  const child = spawn(process.execPath, [fixture('slowTool.cjs'), cancelFile], {
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...process.env, NODE_PATH: serviceNodePath() },
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const transport = new ServiceStdioTransport(child.stdout, child.stdin, { pid: child.pid! });
  const client = new Client({ name: 'direct-test', version: '1.0.0' });
  await client.connect(transport);
  assert.equal(client.getProtocolEra(), 'legacy');
  const direct = transport.direct;

  // The answer comes back under our id and never reaches the client (which would report an unknown id).
  const clientErrors: Error[] = [];
  client.onerror = (error) => clientErrors.push(error);
  const result = await direct.request('tools/call', { name: 'sleep', arguments: { ms: 5 } });
  assert.deepEqual(result, { content: [{ type: 'text', text: 'slept 5' }] });
  assert.equal(direct.inFlight, 0);

  // The timeout: REQUEST_TIMEOUT, and the service hears notifications/cancelled.
  await assert.rejects(direct.request('tools/call', { name: 'sleep', arguments: { ms: 4000 } }, { timeout: 100 }), {
    code: 'REQUEST_TIMEOUT',
  });
  await waitFor(() => cancelLines(cancelFile).includes('cancelled 4000'));

  // The caller's abort: rejected with its reason, cancelled at the service.
  const controller = new AbortController();
  const aborted = direct.request(
    'tools/call',
    { name: 'sleep', arguments: { ms: 3000 } },
    { signal: controller.signal },
  );
  setTimeout(() => controller.abort(new Error('user stopped it')), 50);
  await assert.rejects(aborted, /user stopped it/);
  await waitFor(() => cancelLines(cancelFile).includes('cancelled 3000'));
  // An already aborted signal sends nothing.
  await assert.rejects(
    direct.request('tools/call', { name: 'sleep', arguments: { ms: 1 } }, { signal: controller.signal }),
  );

  // A JSON-RPC error answer: the client's ProtocolError, with the service's code.
  await assert.rejects(direct.request('no/such/method', {}), (error) => {
    assert.ok(error instanceof ProtocolError);
    assert.equal(error.code, -32601);
    return true;
  });

  // The service exits mid-call: what is in flight fails CONNECTION_CLOSED, later requests NOT_CONNECTED.
  const pending = direct.request('tools/call', { name: 'exitNow', arguments: {} });
  await assert.rejects(pending, { code: 'CONNECTION_CLOSED' });
  await assert.rejects(direct.request('tools/call', { name: 'sleep', arguments: { ms: 1 } }), {
    code: 'NOT_CONNECTED',
  });
  assert.deepEqual(clientErrors, [], 'no answer of ours reached the client');
  await waitFor(() => (isGone(child.pid!) ? true : undefined));
});

test('the shortcuts past the message schema accept only what the schema accepts, and return it unchanged', () => {
  const responses: unknown[] = [
    { jsonrpc: '2.0', id: 1, result: {} },
    { jsonrpc: '2.0', id: 'a', result: { content: [{ type: 'text', text: 'x', vendor: 1 }] } },
    { jsonrpc: '2.0', id: 'a', result: { _meta: { 'io.modelcontextprotocol/serverInfo': 7 } } },
    { jsonrpc: '2.0', id: 2 ** 53, result: {} },
    { jsonrpc: '2.0', id: 1.5, result: {} },
    { jsonrpc: '2.0', id: 1, result: [] },
    { jsonrpc: '2.0', id: 1, result: null },
    { jsonrpc: '2.0', id: 1, result: {}, extra: true },
    { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'nope' } },
    { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'nope', data: { a: 1 } } },
    { jsonrpc: '2.0', error: { code: -32700, message: 'parse error' } },
    { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'nope', extra: 1 } },
    { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'nope' } },
    { jsonrpc: '2.0', id: 1, error: { code: 1 } },
    { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } },
  ];
  let taken = 0;
  for (const value of responses) {
    if (!isPlainResponse(value as Record<string, unknown>)) continue;
    taken++;
    assert.deepEqual(parseJSONRPCMessage(value), value, JSON.stringify(value));
  }
  assert.equal(taken, 5, 'the plain responses of the table are taken');

  const requests: unknown[] = [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
    { jsonrpc: '2.0', id: 'x', method: 'tools/list' },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'e', _meta: { progressToken: 'p', other: 1 } } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'e', _meta: { progressToken: 1.5 } } },
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'x',
      params: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't', x: 1 } } },
    },
    { jsonrpc: '2.0', id: 1, method: 'x', params: [] },
    { jsonrpc: '2.0', id: 1, method: 'x', params: null },
    { jsonrpc: '2.0', id: 1, method: 'x', extra: 1 },
    { jsonrpc: '1.0', id: 1, method: 'x' },
    { jsonrpc: '2.0', id: null, method: 'x' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
  ];
  taken = 0;
  for (const value of requests) {
    if (!isPlainRequest(value)) continue;
    taken++;
    assert.deepEqual(parseOnServer(value), value, JSON.stringify(value));
  }
  assert.equal(taken, 3, 'the plain requests of the table are taken');
});
