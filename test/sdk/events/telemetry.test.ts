/**
 * The telemetry seam (packages/sdk/src/events/telemetry.ts) and its implementation, in this process: when
 * export counts as on (a table of environments), what a client's trace context may look like, what a
 * request carries in `params._meta`, and what a call span may record of arguments and results (nothing by
 * default; redacted when the operator turns recording on). Spans go to a receiver on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  carrierOfHeaders,
  carrierOfMeta,
  continueTrace,
  exportConfigured,
  startTelemetry,
  telemetry,
  withTraceMeta,
} from '../../../packages/sdk/src/events/telemetry.js';
import { REDACTED, redactValue } from '../../../packages/sdk/src/redact.js';
import { startOtlpReceiver } from '../../fixtures/otel/otlpReceiver.js';

test('export is on only with an endpoint, and off with OTEL_SDK_DISABLED=true', () => {
  const cases: [NodeJS.ProcessEnv, boolean][] = [
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '   ' }, false],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'x' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:4318/v1/metrics' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'TRUE' }, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'false' }, true],
  ];
  for (const [env, on] of cases) assert.equal(exportConfigured(env), on, JSON.stringify(env));
});

test('a client trace context is read only from a string traceparent, in _meta or a header', () => {
  const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const cases: [unknown, unknown][] = [
    [undefined, undefined],
    [null, undefined],
    [{}, undefined],
    [{ _meta: null }, undefined],
    [{ _meta: 'x' }, undefined],
    [{ _meta: { traceparent: 42 } }, undefined],
    [{ _meta: { traceparent: tp } }, { traceparent: tp }],
    [{ _meta: { traceparent: tp, tracestate: 'a=1' } }, { traceparent: tp, tracestate: 'a=1' }],
    [{ _meta: { traceparent: tp, tracestate: ['a=1'] } }, { traceparent: tp }],
  ];
  for (const [params, expected] of cases) assert.deepEqual(carrierOfMeta(params), expected, JSON.stringify(params));
  assert.deepEqual(carrierOfHeaders({ traceparent: tp, tracestate: 'a=1' }), { traceparent: tp, tracestate: 'a=1' });
  assert.equal(carrierOfHeaders({ traceparent: [tp, tp] }), undefined);
  assert.equal(carrierOfHeaders({}), undefined);
});

test('redactValue hides secret-named members and URL credentials, and keeps other values', () => {
  const shown = redactValue({
    query: 'materials',
    apiKey: 'sk-123',
    nested: { Authorization: 'Bearer abc', list: [{ password: 'p' }, 'https://user:pw@host.example/x?token=t'] },
    ['__proto__' as string]: 'x',
  }) as Record<string, unknown>;
  assert.equal(shown.query, 'materials');
  assert.equal(shown.apiKey, REDACTED);
  const nested = shown.nested as { Authorization: string; list: unknown[] };
  assert.equal(nested.Authorization, REDACTED);
  assert.deepEqual(nested.list[0], Object.assign(Object.create(null), { password: REDACTED }));
  assert.equal(nested.list[1], `https://host.example/x?token=${REDACTED}`);
  assert.ok(!JSON.stringify(shown).includes('sk-123') && !JSON.stringify(shown).includes('pw@'));
});

test('with export on: a call span is active while the call runs, its context goes into _meta; content recorded only redacted', async (t) => {
  // Off until started: the seam passes messages through untouched.
  const request = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } };
  assert.equal(telemetry(), undefined);
  assert.equal(withTraceMeta(request), request);

  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const spans = await startTelemetry({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
  });
  assert.ok(spans !== undefined);
  let meta: unknown;
  const result = await spans.inCall(
    {
      method: 'tools/call',
      target: 'search',
      service: 'lab',
      kind: 'project',
      arguments: { q: 'x', token: 'secret-1' },
    },
    async () => {
      const sent = withTraceMeta(request) as { params: { _meta?: { traceparent?: string } } };
      meta = sent.params._meta;
      return { content: [{ type: 'text', text: 'found' }] };
    },
  );
  assert.deepEqual(result, { content: [{ type: 'text', text: 'found' }] });
  assert.match((meta as { traceparent: string }).traceparent, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  assert.deepEqual(request.params, { name: 'x' }, 'the original message is not changed');
  // A notification carries nothing: only requests do.
  const note = { jsonrpc: '2.0', method: 'notifications/cancelled', params: {} };
  assert.equal(withTraceMeta(note), note);

  // A client's context is continued: a span started inside is its child.
  const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  await continueTrace({ traceparent: tp }, () =>
    spans.inCall({ method: 'prompts/get', target: 'greet', service: 'lab', kind: 'remote' }, async () => ({})),
  );
  // A malformed one is ignored.
  await continueTrace({ traceparent: 'garbage' }, () =>
    spans.inCall(
      { method: 'resources/read', target: 'lab://notes', service: 'lab', kind: 'project' },
      async () => ({}),
    ),
  );
  // A failure is recorded with its code and a redacted message, never the library's raw text or a stack.
  const failure = Object.assign(new Error('fetch https://u:pw@lab.example/mcp?token=secret-2 failed'), {
    code: 'remote_unreachable',
  });
  await assert.rejects(
    spans.inCall({ method: 'tools/call', target: 'broken', service: 'lab', kind: 'remote' }, async () => {
      throw failure;
    }),
    (error) => error === failure,
  );
  await spans.flush();
  const broken = receiver.spans.find((s) => s.name === 'tools/call broken');
  assert.ok(broken !== undefined);
  assert.equal(broken.attributes['error.type'], 'remote_unreachable');
  const exception = broken.events.find((e) => e.name === 'exception');
  assert.ok(exception !== undefined, JSON.stringify(broken.events));
  assert.equal(exception.attributes['exception.type'], 'remote_unreachable');
  assert.equal(exception.attributes['exception.message'], 'fetch https://lab.example/mcp?token=REDACTED failed');
  assert.ok(!('exception.stacktrace' in exception.attributes));
  for (const hidden of ['secret-2', 'pw@', String(failure.stack).split('\n')[1]?.trim()]) {
    assert.ok(hidden !== undefined && !JSON.stringify(receiver.spans).includes(hidden), hidden);
  }
  const call = receiver.spans.find((s) => s.name === 'tools/call search');
  assert.ok(call !== undefined, JSON.stringify(receiver.requests));
  assert.equal(call.attributes['gen_ai.tool.name'], 'search');
  assert.equal(call.attributes['mcp.method.name'], 'tools/call');
  // Recording is off by default: no arguments or result.
  assert.ok(!('gen_ai.tool.call.arguments' in call.attributes));
  assert.ok(!JSON.stringify(receiver.spans).includes('secret-1'));
  assert.equal((meta as { traceparent: string }).traceparent.split('-')[2], call.spanId);
  const continued = receiver.spans.find((s) => s.name === 'prompts/get greet')!;
  assert.equal(continued.traceId, '0af7651916cd43dd8448eb211c80319c');
  assert.equal(continued.parentSpanId, 'b7ad6b7169203331');
  const fresh = receiver.spans.find((s) => s.name === 'resources/read lab://notes')!;
  assert.notEqual(fresh.traceId, '0af7651916cd43dd8448eb211c80319c');
  assert.equal(fresh.attributes['mcp.resource.uri'], 'lab://notes');
});
