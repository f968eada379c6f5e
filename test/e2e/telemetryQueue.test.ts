/**
 * One trace across machines (docs/telemetry.md): a run whose Main delegates to a queue worker on a real
 * redis-server, the coordinator and the worker each exporting to the same receiver. The job carries the
 * trace context: the worker's `process invocations` span is the child of the coordinator's `send
 * invocations` span, and the worker's tool calls are under it. Real services in a worker process and
 * the coordinator: 240 s.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { startOtlpReceiver } from '../fixtures/otel/otlpReceiver.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';
import {
  queuedRunArgs,
  RUN_TIMEOUT_MS,
  startRedis,
  startWorker,
  stopWorker,
  writeDelegatingRun,
} from '../queue/helpers.js';
import { assertOneTrace, parentOf, runCliWith, until } from './telemetryHelpers.js';

test('a queued run is one trace: the job carries the context to the worker', async (t) => {
  const box = await sandbox(t);
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const redis = await startRedis(t, box.base);
  const { workflowPath, scriptPath, expected } = await writeDelegatingRun(box.base, 2);
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const worker = await startWorker(t, redis.url, join(box.base, 'worker-1'), [], [], {
    ...base,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'lab-worker',
  });
  const r = await runCliWith(
    queuedRunArgs(box, redis.url, { workflowPath, scriptPath }),
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'lab-coordinator' },
    RUN_TIMEOUT_MS,
  );
  assert.equal(r.code, 0, r.stderr);
  const doc = r.json as { status: string; output: string; events: { type: string }[] };
  assert.equal(doc.status, 'succeeded');
  assert.equal(doc.output, expected);

  const processed = () => receiver.spans.filter((s) => s.name === 'process invocations');
  await until(() => processed().length === 2);
  await stopWorker(worker);
  const spans = receiver.spans;
  assertOneTrace(spans);
  const sends = spans.filter((s) => s.name === 'send invocations');
  assert.equal(sends.length, 2);
  for (const send of sends) {
    assert.equal(send.resource['service.name'], 'lab-coordinator');
    assert.equal(send.kind, 4, 'a producer span');
    assert.equal(parentOf(spans, send)?.name, 'scienceevolve.attempt');
  }
  for (const job of processed()) {
    assert.equal(job.resource['service.name'], 'lab-worker');
    assert.equal(job.kind, 5, 'a consumer span');
    const send = parentOf(spans, job)!;
    assert.equal(send.name, 'send invocations', 'the worker continued the context the job carried');
    assert.equal(job.attributes['messaging.message.id'], send.attributes['messaging.message.id']);
    // The worker's calls to its services are under the job's span.
    const calls = spans.filter(
      (s) => s.parentSpanId === job.spanId && s.attributes['mcp.method.name'] === 'tools/call',
    );
    assert.deepEqual(calls.map((s) => s.attributes['gen_ai.tool.name']).sort(), ['add', 'count', 'sleep']);
    assert.ok(calls.every((s) => s.resource['service.name'] === 'lab-worker'));
  }
  // The worker's service starts, journaled by the coordinator, are under the coordinator's attempt spans.
  const starts = spans.filter((s) => s.name.startsWith('service.start '));
  assert.equal(starts.length, doc.events.filter((e) => e.type === 'service.ready').length);
  await assertNothingLeft(box.project, doc.events as never);
});
