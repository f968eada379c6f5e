/**
 * OpenTelemetry export end to end (docs/telemetry.md): the built CLI runs with `OTEL_EXPORTER_OTLP_ENDPOINT`
 * pointed at a collector-shaped receiver on 127.0.0.1 (test/fixtures/otel/otlpReceiver.ts, protobuf and
 * JSON decoded). The demo's run is one trace covering every invocation, service start, tool call and
 * `apply_workflow`; a project service instrumented with the OpenTelemetry Node SDK exports its own span
 * under the call span that reached it; a collector that is down or refusing never fails the run, and the
 * run says once how many spans were dropped. Each run starts 1–3 real services (several seconds on 2
 * cores): 120 s per CLI run.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { startOtlpReceiver } from '../fixtures/otel/otlpReceiver.js';
import { assertNothingLeft, killLeftovers, ROOT, tempDir } from './helpers.js';
import { assertOneTrace, closedPort, droppedLines, parentOf, runCliWith, until } from './telemetryHelpers.js';

const DEMO = join(ROOT, 'examples/workflows/demo');
const REQUIREMENT = 'Record the measurements 3, 5, 8, 13, summarize them and chart them.';

interface RunJson {
  run: string;
  status: string;
  events: { type: string; invocation?: string; agent?: string; service?: string; tool?: string }[];
}

function demoArgs(dir: string): string[] {
  const workspace = join(dir, 'ws');
  mkdirSync(workspace, { recursive: true });
  return [
    'run',
    '--data-dir',
    join(dir, 'data'),
    '--workflow',
    DEMO,
    '--workspace',
    workspace,
    '--script',
    join(DEMO, 'script.json'),
    '--json',
    REQUIREMENT,
  ];
}

test('the demo with export on is one trace: every invocation, service start, tool call and apply_workflow', async (t) => {
  const dir = tempDir(t);
  t.after(() => killLeftovers({ dir }));
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const r = await runCliWith(demoArgs(dir), {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'demo-lab',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test,team=materials',
  });
  assert.equal(r.code, 0, r.stderr);
  const run = r.json as RunJson;
  assert.equal(run.status, 'succeeded');
  assert.deepEqual(receiver.errors, []);
  assert.ok(
    receiver.requests.every((q) => q.endsWith('application/x-protobuf')),
    'http/protobuf by default',
  );
  assert.deepEqual(droppedLines(r.stderr), [], 'nothing dropped');

  const spans = receiver.spans;
  const traceId = assertOneTrace(spans);
  for (const s of spans) {
    assert.equal(s.resource['service.name'], 'demo-lab', 'OTEL_SERVICE_NAME');
    assert.equal(s.resource['deployment.environment'], 'test', 'OTEL_RESOURCE_ATTRIBUTES');
    assert.equal(s.resource.team, 'materials');
  }
  const root = spans.find((s) => s.name === 'scienceevolve.run')!;
  assert.equal(root.attributes['scienceevolve.run.id'], run.run);
  assert.equal(root.attributes['scienceevolve.run.status'], 'succeeded');

  // Every invocation: an invoke_agent span with an attempt under it; a worker's under Main's delegate call.
  const started = run.events.filter((e) => e.type === 'invocation.started');
  assert.equal(started.length, 3);
  for (const e of started) {
    const inv = spans.find(
      (s) => s.name === `invoke_agent ${e.agent}` && s.attributes['scienceevolve.invocation.id'] === e.invocation,
    );
    assert.ok(inv !== undefined, `invocation ${e.invocation} (${e.agent}) has a span`);
    const parent = parentOf(spans, inv)!;
    if (e.agent === 'main') assert.equal(parent.name, 'scienceevolve.run');
    else assert.equal(parent.name, 'tools/call delegate');
    assert.ok(
      spans.some((s) => s.name === 'scienceevolve.attempt' && s.parentSpanId === inv.spanId),
      `invocation ${e.invocation} has an attempt span`,
    );
  }
  // Every service start, under the attempt of its invocation.
  const ready = run.events.filter((e) => e.type === 'service.ready');
  assert.equal(ready.length, 3);
  for (const e of ready) {
    const start = spans.find((s) => s.name === `service.start ${e.service}`);
    assert.ok(start !== undefined, `service ${e.service} has a start span`);
    const attempt = parentOf(spans, start)!;
    assert.equal(attempt.name, 'scienceevolve.attempt');
    assert.equal(attempt.attributes['scienceevolve.invocation.id'], e.invocation);
  }
  // Every tool call, on the MCP conventions; apply_workflow among them.
  const called = run.events.filter((e) => e.type === 'tool.called');
  const calls = spans.filter((s) => s.attributes['mcp.method.name'] === 'tools/call');
  assert.equal(calls.length, called.length, 'one span per tool call');
  for (const e of called) {
    const [service, tool] = e.tool!.split('__') as [string, string];
    assert.ok(
      calls.some((s) => s.attributes['scienceevolve.service'] === service && s.attributes['gen_ai.tool.name'] === tool),
      `the call ${e.tool} has a span`,
    );
  }
  const apply = calls.find((s) => s.attributes['gen_ai.tool.name'] === 'apply_workflow');
  assert.ok(apply !== undefined, 'apply_workflow has a span');
  assert.equal(apply.kind, 3, 'a client span');
  assert.equal(parentOf(spans, apply)?.name, 'scienceevolve.attempt');
  assert.ok(
    spans.some((s) => s.events.some((ev) => ev.name === 'workflow.reconfigured')),
    'the reconfiguration is a span event',
  );
  // No argument values unless the operator asks for them.
  assert.ok(calls.every((s) => !('gen_ai.tool.call.arguments' in s.attributes)));
  assert.ok(!JSON.stringify(spans).includes('3 5 8 13'), 'no argument value in any span');

  // Metrics: call durations per service and tool, start durations.
  await until(() => receiver.points.some((p) => p.metric === 'mcp.client.operation.duration'));
  const durations = receiver.points.filter((p) => p.metric === 'mcp.client.operation.duration');
  assert.ok(durations.some((p) => p.attributes['gen_ai.tool.name'] === 'summarize' && p.count === 1));
  assert.ok(receiver.points.some((p) => p.metric === 'scienceevolve.service.start.duration'));

  // The trace id is in run.json, run.started and status.
  const project = readdirProject(join(dir, 'data'));
  const record = JSON.parse(readFileSync(join(dir, 'data/projects', project, 'runs', run.run, 'run.json'), 'utf8'));
  assert.equal(record.traceId, traceId);
  const status = await runCliWith(['status', '--data-dir', join(dir, 'data'), '--json'], {});
  assert.equal(status.code, 0, status.stderr);
  const shown = (status.json as { projects: { runs: { run: string; traceId?: string }[] }[] }).projects[0]!.runs;
  assert.equal(shown.find((x) => x.run === run.run)?.traceId, traceId);
  const human = await runCliWith(['status', '--data-dir', join(dir, 'data')], {});
  assert.match(human.stdout, new RegExp(`trace ${traceId}`));
  await assertNothingLeft({ dir });
});

function readdirProject(dataDir: string): string {
  return readdirSync(join(dataDir, 'projects'))[0]!;
}

test('a service instrumented with OpenTelemetry continues the trace: its span is the child of the call span (http/json)', async (t) => {
  const dir = tempDir(t);
  t.after(() => killLeftovers({ dir }));
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const workflow = {
    agents: {
      main: {
        instructions: 'Work.',
        harness: { type: 'scripted' },
        mcpServers: [{ name: 'traced', project: 'traced' }],
      },
    },
    mcpDefinitions: {
      traced: {
        command: 'node',
        entrypoint: 'server.cjs',
        files: { 'server.cjs': readFileSync(join(ROOT, 'test/fixtures/otel/tracedService.cjs'), 'utf8') },
        // The service exports to the same collector: the host's variable, mapped in (services get no OTEL_* otherwise).
        envFrom: { OTEL_EXPORTER_OTLP_ENDPOINT: 'LAB_COLLECTOR' },
      },
    },
  };
  const script = {
    agents: { main: [{ call: 'traced__work', arguments: { text: 'hello' } }, { final: '{{0}}' }] },
  };
  writeFileSync(join(dir, 'workflow.json'), JSON.stringify(workflow));
  writeFileSync(join(dir, 'script.json'), JSON.stringify(script));
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
      '--script',
      join(dir, 'script.json'),
      '--json',
      'work',
    ],
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      LAB_COLLECTOR: receiver.url,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  const run = r.json as { status: string; output: string };
  assert.equal(run.status, 'succeeded');
  // The service received the traceparent of the call in params._meta.
  const sent = /traceparent (00-[0-9a-f]{32}-[0-9a-f]{16}-0[01])/.exec(run.output)?.[1];
  assert.ok(sent !== undefined, run.output);

  await until(() => receiver.spans.some((s) => s.name === 'traced-service.work'));
  assert.deepEqual(receiver.errors, []);
  const ours = receiver.spans.filter((s) => s.resource['service.name'] === 'scienceevolve');
  assert.ok(
    ours.every((s) => s.encoding === 'json'),
    'http/json honoured',
  );
  const traceId = assertOneTrace(ours);
  const call = ours.find((s) => s.name === 'tools/call work')!;
  assert.ok(call !== undefined);
  assert.equal(sent, `00-${traceId}-${call.spanId}-01`, 'the traceparent names the call span');
  const theirs = receiver.spans.find((s) => s.name === 'traced-service.work')!;
  assert.equal(theirs.encoding, 'protobuf');
  assert.equal(theirs.resource['service.name'], 'traced-service');
  assert.equal(theirs.traceId, traceId, 'the service span is in the run trace');
  assert.equal(theirs.parentSpanId, call.spanId, "the service span's parent is the call span");
  await assertNothingLeft({ dir });
});

for (const collector of ['down', 'refusing', 'hanging'] as const) {
  test(`a collector that is ${collector}: the run succeeds and says once how many spans were dropped`, async (t) => {
    const dir = tempDir(t);
    t.after(() => killLeftovers({ dir }));
    let endpoint: string;
    if (collector === 'down') endpoint = `http://127.0.0.1:${await closedPort()}`;
    else if (collector === 'hanging') {
      // Accepts connections and never answers: the exporter's 2 s timeout and the flush bound end the wait.
      const held: Socket[] = [];
      const server = createNetServer((socket) => held.push(socket));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      t.after(() => {
        for (const socket of held) socket.destroy();
        server.close();
      });
      endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    } else {
      const receiver = await startOtlpReceiver({ refuse: true });
      t.after(() => receiver.close());
      endpoint = receiver.url;
    }
    const r = await runCliWith(demoArgs(dir), { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((r.json as RunJson).status, 'succeeded');
    const lines = droppedLines(r.stderr);
    assert.equal(lines.length, 1, `one report:\n${r.stderr}`);
    const dropped = Number(/(\d+) spans?/.exec(lines[0]!)![1]);
    assert.ok(dropped > 0);
    // Timing is bench's (tests assert none); the figure is shown for the report.
    t.diagnostic(`run with a ${collector} collector: ${r.ms} ms, ${dropped} spans dropped`);
    await assertNothingLeft({ dir });
  });
}
