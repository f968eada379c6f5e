/**
 * The test receiver (test/fixtures/otel/otlpReceiver.ts) decodes what the official OpenTelemetry OTLP/HTTP
 * exporters send, protobuf and JSON alike: spans with every kind of attribute, events, status and parent,
 * and histogram and counter points. Sent by the OpenTelemetry SDK itself, in this process, to a real
 * socket on 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPMetricExporter as JsonMetrics } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetrics } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraces } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraces } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startOtlpReceiver } from '../../fixtures/otel/otlpReceiver.js';

for (const encoding of ['protobuf', 'json'] as const) {
  test(`the receiver decodes OTLP/HTTP ${encoding} from the official exporters`, async (t) => {
    const receiver = await startOtlpReceiver();
    t.after(() => receiver.close());
    const url = receiver.url;
    const traces =
      encoding === 'json' ? new JsonTraces({ url: `${url}/v1/traces` }) : new ProtoTraces({ url: `${url}/v1/traces` });
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'receiver-check' }),
      spanProcessors: [new SimpleSpanProcessor(traces)],
    });
    const tracer = provider.getTracer('check');
    const parent = tracer.startSpan('parent');
    const child = tracer.startSpan(
      'child',
      { attributes: { s: 'text', i: 42, d: 2.5, b: true, list: ['a', 'b'] } },
      trace.setSpan(ROOT_CONTEXT, parent),
    );
    child.addEvent('rest', { 'scienceevolve.service': 'notes' });
    child.setStatus({ code: SpanStatusCode.ERROR });
    child.end();
    parent.end();
    await provider.forceFlush();

    const metrics =
      encoding === 'json'
        ? new JsonMetrics({ url: `${url}/v1/metrics` })
        : new ProtoMetrics({ url: `${url}/v1/metrics` });
    const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 60_000 });
    const meters = new MeterProvider({ readers: [reader] });
    const meter = meters.getMeter('check');
    meter.createHistogram('mcp.client.operation.duration', { unit: 's' }).record(0.25, { 'gen_ai.tool.name': 'add' });
    meter.createHistogram('mcp.client.operation.duration', { unit: 's' }).record(0.75, { 'gen_ai.tool.name': 'add' });
    meter.createCounter('scienceevolve.service.rests').add(3, { 'scienceevolve.service': 'notes' });
    await meters.forceFlush();
    await meters.shutdown();
    await provider.shutdown();

    assert.deepEqual(receiver.errors, []);
    const contentType = encoding === 'json' ? 'application/json' : 'application/x-protobuf';
    assert.ok(receiver.requests.includes(`/v1/traces ${contentType}`), receiver.requests.join(', '));
    const byName = new Map(receiver.spans.map((s) => [s.name, s]));
    const p = byName.get('parent');
    const c = byName.get('child');
    assert.ok(p !== undefined && c !== undefined, JSON.stringify(receiver.spans));
    assert.equal(c.encoding, encoding);
    assert.match(c.traceId, /^[0-9a-f]{32}$/);
    assert.equal(c.traceId, p.traceId);
    assert.equal(c.parentSpanId, p.spanId);
    assert.equal(p.parentSpanId, '');
    assert.deepEqual(c.attributes, { s: 'text', i: 42, d: 2.5, b: true, list: ['a', 'b'] });
    assert.deepEqual(c.events, [{ name: 'rest', attributes: { 'scienceevolve.service': 'notes' } }]);
    assert.equal(c.status, 2);
    assert.equal(c.resource['service.name'], 'receiver-check');

    const duration = receiver.points.find((pt) => pt.metric === 'mcp.client.operation.duration');
    assert.ok(duration !== undefined, JSON.stringify(receiver.points));
    assert.equal(duration.count, 2);
    assert.equal(duration.sum, 1);
    assert.deepEqual(duration.attributes, { 'gen_ai.tool.name': 'add' });
    const rests = receiver.points.find((pt) => pt.metric === 'scienceevolve.service.rests');
    assert.equal(rests?.value, 3);
  });
}
