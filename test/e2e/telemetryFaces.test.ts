/**
 * The faces continue a client's trace (docs/telemetry.md): `services serve` with export on, called by the
 * official v1 client — on the stdio face with `traceparent` in `params._meta`, on the HTTP face with the
 * `traceparent` header. Our call span is the child of the client's span, in the client's trace, and the
 * service behind it receives our call span's context. One serve process and one service each: 60 s.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startOtlpReceiver } from '../fixtures/otel/otlpReceiver.js';
import { assertGone, assertNothingLeft, labProject, labServeArgs, labWorkflow, ROOT, spawnNode } from './helpers.js';
import { assertOneTrace, runCliWith, until } from './telemetryHelpers.js';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;

function otelEnv(url: string): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  return { ...base, OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_SERVICE_NAME: 'lab-bridge' };
}

test('the stdio face continues the traceparent a client sends in _meta', async (t) => {
  const lab = await labProject(t);
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const [command, ...args] = [process.execPath, ...labServeArgs(lab)];
  const transport = new StdioClientTransport({
    command: command!,
    args,
    env: otelEnv(receiver.url) as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'tracing-agent', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid!;
  t.after(async () => {
    await client.close().catch(() => {});
    await assertGone(pid);
  });
  const result = await client.callTool({
    name: 'lab__echo',
    arguments: { text: 'hi' },
    _meta: { traceparent: TRACEPARENT },
  });
  assert.deepEqual(result.content, [{ type: 'text', text: 'echo: hi' }]);
  // A call without one is a trace of its own.
  await client.callTool({ name: 'lab__echo', arguments: { text: 'untraced' } });
  await client.close();
  await assertGone(pid);
  await until(() => receiver.spans.filter((s) => s.name === 'tools/call echo').length === 2);
  const calls = receiver.spans.filter((s) => s.name === 'tools/call echo');
  const continued = calls.find((s) => s.traceId === CLIENT_TRACE);
  assert.ok(continued !== undefined, JSON.stringify(calls.map((s) => s.traceId)));
  assert.equal(continued.parentSpanId, CLIENT_SPAN);
  assert.equal(continued.resource['service.name'], 'lab-bridge');
  const other = calls.find((s) => s !== continued)!;
  assert.notEqual(other.traceId, CLIENT_TRACE);
  assert.equal(other.parentSpanId, '');
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});

test('the HTTP face continues the traceparent header', async (t) => {
  const lab = await labProject(t);
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const tokenFile = join(lab.dir, 'token');
  const serve = spawnNode(t, labServeArgs(lab, ['--http', '--port', '0', '--token-file', tokenFile, '--json']), {
    env: otelEnv(receiver.url),
  });
  const served = await serve.json<{ url: string }>();
  const token = readFileSync(tokenFile, 'utf8').trim();
  const transport = new StreamableHTTPClientTransport(new URL(served.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}`, traceparent: TRACEPARENT } },
  });
  const client = new Client({ name: 'tracing-agent', version: '1.0.0' });
  await client.connect(transport);
  const result = await client.callTool({ name: 'lab__echo', arguments: { text: 'over http' } });
  assert.deepEqual(result.content, [{ type: 'text', text: 'echo: over http' }]);
  await client.close();
  serve.child.kill('SIGTERM');
  assert.deepEqual(await serve.exited, { code: 0, signal: null });
  await assertGone(serve.pid);
  await until(() => receiver.spans.some((s) => s.name === 'tools/call echo'));
  const call = receiver.spans.find((s) => s.name === 'tools/call echo')!;
  assert.ok(call !== undefined, JSON.stringify(receiver.spans.map((s) => s.name)));
  assert.equal(call.traceId, CLIENT_TRACE);
  assert.equal(call.parentSpanId, CLIENT_SPAN);
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});

test("an agent CLI's calls, through the relay and the invocation's face, are spans of the run's trace", async (t) => {
  const lab = await labProject(t);
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const agent = join(ROOT, 'test/fixtures/agents/mcpAgent.mjs');
  const workflow = labWorkflow();
  const main = (workflow.agents as Record<string, Record<string, unknown>>).main!;
  main.harness = { type: 'command', command: 'node', args: [agent, '{mcpConfig}', 'call', '{prompt}'] };
  writeFileSync(join(lab.dir, 'cli-workflow.json'), JSON.stringify(workflow));
  const r = await runCliWith(
    [
      'run',
      '--data-dir',
      lab.dataDir,
      '--project',
      lab.project,
      '--workflow',
      join(lab.dir, 'cli-workflow.json'),
    ].concat([
      '--workspace',
      lab.workspace,
      '--json',
      JSON.stringify({ tool: 'lab__echo', arguments: { text: 'via cli' } }),
    ]),
    { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match((r.json as { output: string }).output, /answer from \S+: echo: via cli/);
  const spans = receiver.spans;
  assertOneTrace(spans);
  const call = spans.find((s) => s.name === 'tools/call echo');
  assert.ok(call !== undefined, spans.map((s) => s.name).join(', '));
  assert.equal(spans.find((s) => s.spanId === call.parentSpanId)?.name, 'scienceevolve.attempt');
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});
