/**
 * Trace context to a remote service (docs/telemetry.md): a run with export on calls a Streamable HTTP
 * service (the v2 SDK fixture, 2025-11-25 sessions) through a recording proxy on 127.0.0.1. Each request
 * carries the `traceparent` header of the span active when it was sent — the `tools/call` request that
 * of its call span — and the call span names the MCP session. The CLI in a child process: 60 s.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { startOtlpReceiver } from '../fixtures/otel/otlpReceiver.js';
import { startSessionServer } from '../fixtures/remote/sessionServer.js';
import { tempDir } from './helpers.js';
import { runCliWith } from './telemetryHelpers.js';

interface Seen {
  method: string;
  traceparent: string | undefined;
  session: string | undefined;
}

test('every request to a remote service carries the traceparent of its call, as a header', async (t) => {
  const dir = tempDir(t);
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const remote = await startSessionServer('stateful', (fn) => t.after(fn));
  const seen: Seen[] = [];
  // Forwards to the fixture and notes each request's JSON-RPC method and trace header.
  const proxy = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      let method = req.method ?? '';
      try {
        method = (JSON.parse(body.toString('utf8')) as { method?: string }).method ?? method;
      } catch {
        // GET or DELETE
      }
      const header = (name: string) =>
        typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined;
      seen.push({ method, traceparent: header('traceparent'), session: header('mcp-session-id') });
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers.set(name, value);
      }
      const answer = await fetch(remote.url, {
        method: req.method,
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (name !== 'content-length' && name !== 'transfer-encoding') out[name] = value;
      });
      res.writeHead(answer.status, out);
      res.end(Buffer.from(await answer.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  proxy.listen(0, '127.0.0.1');
  await new Promise((r) => proxy.once('listening', r));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  );
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;

  writeFileSync(
    join(dir, 'workflow.json'),
    JSON.stringify({
      orchestration: { allowedRemoteUrls: [url] },
      agents: { main: { instructions: 'Echo.', harness: { type: 'scripted' }, mcpServers: [{ name: 'remote', url }] } },
    }),
  );
  writeFileSync(
    join(dir, 'script.json'),
    JSON.stringify({
      agents: { main: [{ call: 'remote__echo', arguments: { text: 'far away' } }, { final: '{{0}}' }] },
    }),
  );
  mkdirSync(join(dir, 'ws'));
  const r = await runCliWith(
    [
      'run',
      '--data-dir',
      join(dir, 'data'),
      '--workflow',
      join(dir, 'workflow.json'),
      '--workspace',
      join(dir, 'ws'),
    ].concat(['--script', join(dir, 'script.json'), '--json', 'echo']),
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    60_000,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal((r.json as { output: string }).output, 'far away');

  const call = receiver.spans.find((s) => s.name === 'tools/call echo');
  assert.ok(call !== undefined, receiver.spans.map((s) => s.name).join(', '));
  assert.equal(call.attributes['scienceevolve.service.kind'], 'remote');
  const sent = seen.find((s) => s.method === 'tools/call');
  assert.ok(sent !== undefined, JSON.stringify(seen));
  assert.equal(sent.traceparent, `00-${call.traceId}-${call.spanId}-01`, 'the call carried its own span as parent');
  assert.equal(call.attributes['mcp.session.id'], sent.session);
  // The start's requests carry the attempt's context (same trace), not the call's.
  const init = seen.find((s) => s.method === 'initialize');
  assert.match(init?.traceparent ?? '', new RegExp(`^00-${call.traceId}-[0-9a-f]{16}-01$`));
  assert.ok(!init?.traceparent?.includes(call.spanId));
});
