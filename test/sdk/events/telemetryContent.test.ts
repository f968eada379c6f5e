/**
 * With `SCIENCEEVOLVE_OTEL_RECORD_CONTENT=true` a call span records the call's arguments and result, each
 * through the one redaction helper: secret-named members and URL credentials never reach the collector;
 * nor does a read resource's URI carry its credentials (span name and `mcp.resource.uri`).
 * (Its own process: telemetry starts once per process.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTelemetry } from '../../../packages/sdk/src/events/telemetry.js';
import { startOtlpReceiver } from '../../fixtures/otel/otlpReceiver.js';

test('recorded arguments and results are redacted', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const spans = await startTelemetry({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    SCIENCEEVOLVE_OTEL_RECORD_CONTENT: 'true',
  });
  assert.ok(spans !== undefined);
  await spans.inCall(
    {
      method: 'tools/call',
      target: 'fetch',
      service: 'web',
      kind: 'remote',
      arguments: { url: 'https://me:hunter2@data.example/set?sig=abc123', api_key: 'sk-live-1', rows: 3 },
    },
    async () => ({ content: [{ type: 'text', text: 'rows: 3' }], structuredContent: { access_token: 'tok-9' } }),
  );
  // A resource URI is shown as every output shows a URL, in the span's name and its attribute alike.
  await spans.inCall(
    {
      method: 'resources/read',
      target: 'https://reader:pa55word@files.example/report.pdf?X-Amz-Signature=feedbeef',
      service: 'files',
      kind: 'remote',
    },
    async () => ({ contents: [] }),
  );
  await spans.flush();
  const read = receiver.spans.find((s) => String(s.name).startsWith('resources/read'));
  assert.ok(read !== undefined, JSON.stringify(receiver.spans.map((s) => s.name)));
  assert.equal(read.attributes['mcp.resource.uri'], 'https://files.example/report.pdf?X-Amz-Signature=REDACTED');
  const call = receiver.spans.find((s) => s.name === 'tools/call fetch');
  assert.ok(call !== undefined);
  const args = JSON.parse(String(call.attributes['gen_ai.tool.call.arguments']));
  assert.deepEqual(args, { url: 'https://data.example/set?sig=REDACTED', api_key: 'REDACTED', rows: 3 });
  const result = JSON.parse(String(call.attributes['gen_ai.tool.call.result']));
  assert.equal(result.content[0].text, 'rows: 3');
  assert.equal(result.structuredContent.access_token, 'REDACTED');
  const all = JSON.stringify(receiver.spans);
  for (const secret of ['hunter2', 'abc123', 'sk-live-1', 'tok-9', 'pa55word', 'feedbeef'])
    assert.ok(!all.includes(secret), secret);
});
