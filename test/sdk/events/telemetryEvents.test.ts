/**
 * Journal events as the telemetry draws them (events/telemetrySpans.ts): a service start becomes a span
 * under the attempt (its wait at the admission gate as an attribute and an `admitted` event; a failed start
 * with its error code), and rests, recoveries, catalog changes and model retries become span events of the
 * attempt. Its own process: telemetry starts once per process.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTelemetry } from '../../../packages/sdk/src/events/telemetry.js';
import { startOtlpReceiver } from '../../fixtures/otel/otlpReceiver.js';

test('journal events become service start spans and span events of the attempt', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const spans = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  assert.ok(spans !== undefined);
  const run = 'run-events-check';
  const invocation = 'inv-events-check';
  const base = { run, invocation, agent: 'main' };
  const end = Date.now();
  const at = (ms: number) => new Date(end + ms).toISOString();
  const event = (fields: Record<string, unknown>) => spans.onEvent({ ...base, ...fields } as never);
  const traceId = spans.runStarted(run, false);
  await spans.inRun(run, () =>
    spans.inAttempt({ run, invocation, agent: 'main', attempt: 1 }, async () => {
      event({ type: 'service.ready', time: at(0), service: 'notes', kind: 'project', startMs: 300, queuedMs: 200 });
      event({
        type: 'service.failed',
        time: at(5),
        service: 'broken',
        kind: 'project',
        error: { code: 'startup_timeout' },
      });
      event({ type: 'service.rested', time: at(10), service: 'notes', failures: 3, until: at(60_010) });
      event({ type: 'service.recovered', time: at(20), service: 'notes' });
      event({ type: 'service.catalog_changed', time: at(30), service: 'notes' });
      event({ type: 'model.retry', time: at(40), turn: 1, attempt: 1, delayMs: 10, message: 'busy' });
      // An event it does not know, and one with a bad time, change nothing and break nothing.
      event({ type: 'not.an.event', time: 'not a time' });
      event({ type: 'service.ready', time: 'not a time', service: 'odd', kind: 'project' });
      return { attempt: { outcome: 'succeeded', error: null } };
    }),
  );
  event({ type: 'invocation.finished', time: at(50), status: 'succeeded' });
  await spans.flush();

  const received = receiver.spans;
  assert.ok(
    received.every((s) => s.traceId === traceId),
    'one trace',
  );
  const attempt = received.find((s) => s.name === 'scienceevolve.attempt')!;
  assert.ok(attempt !== undefined, received.map((s) => s.name).join(', '));
  assert.equal(attempt.attributes['scienceevolve.attempt.outcome'], 'succeeded');
  assert.deepEqual(
    attempt.events.map((e) => e.name),
    ['rest', 'recovery', 'catalog change', 'retry'],
  );
  const start = received.find((s) => s.name === 'service.start notes')!;
  assert.equal(start.parentSpanId, attempt.spanId);
  assert.equal(start.attributes['scienceevolve.service.queued_ms'], 200);
  assert.deepEqual(
    start.events.map((e) => e.name),
    ['admitted'],
  );
  const failed = received.find((s) => s.name === 'service.start broken')!;
  assert.equal(failed.status, 2);
  assert.equal(failed.attributes['error.type'], 'startup_timeout');
  const invocationSpan = received.find((s) => s.name === 'invoke_agent main')!;
  assert.equal(attempt.parentSpanId, invocationSpan.spanId);
  assert.equal(invocationSpan.attributes['scienceevolve.invocation.status'], 'succeeded');
  assert.equal(received.find((s) => s.name === 'scienceevolve.run')?.parentSpanId, '');
});
