import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/server';
import {
  DEFAULT_FORWARD_LIMITS,
  type ForwardLimits,
  type GateEvent,
  gateEventFields,
  resolveForwardLimits,
} from '../../../packages/sdk/src/surface/serviceGate.js';
import { ERROR_META_KEY, createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { DEFAULT_FORWARD_TIMEOUT_MS } from '../../../packages/sdk/src/sessions/forwarding.js';
import { connectSession, createLabServer } from '../../fixtures/bridge/labService.js';

function codeOf(result: CallToolResult): string | undefined {
  return (result._meta?.[ERROR_META_KEY] as { code?: string } | undefined)?.code;
}
function textOf(result: CallToolResult): string {
  const block = result.content[0];
  return block?.type === 'text' ? block.text : '';
}

test('a call that outlives the timeout is answered forward_timeout and cancelled', async (t) => {
  const lab = await connectSession('lab', createLabServer());
  t.after(() => lab.close());
  const surface = createSurface([lab], { timeoutMs: 150 });
  const started = Date.now();
  const result = await surface.callTool('lab__sleep', { ms: 5_000 });
  assert.ok(Date.now() - started < 2_000, 'answered at the timeout, not when the service finished');
  assert.equal(result.isError, true);
  assert.equal(codeOf(result), 'forward_timeout');
  assert.match(textOf(result), /did not answer tool "sleep" within 0.15 s/);
});

test('past the in-flight cap a call is answered service_busy at once', async (t) => {
  const lab = await connectSession('lab', createLabServer());
  t.after(() => lab.close());
  const surface = createSurface([lab], { maxInFlight: 2 });
  const slow = [surface.callTool('lab__sleep', { ms: 300 }), surface.callTool('lab__sleep', { ms: 300 })];
  const started = Date.now();
  const busy = await surface.callTool('lab__echo', { text: 'x' });
  assert.ok(Date.now() - started < 100, 'refused without waiting');
  assert.equal(codeOf(busy), 'service_busy');
  assert.match(textOf(busy), /already has 2 requests in flight \(the limit is 2\)/);
  for (const result of await Promise.all(slow)) assert.equal(result.isError, undefined);
  // Once the slow calls finished, calls go through again; other services are not affected by the cap.
  assert.equal(textOf(await surface.callTool('lab__echo', { text: 'x' })), 'x');
});

test('aliases of one session share its cap', async (t) => {
  const shared = await connectSession('a', createLabServer(), { aliases: ['a', 'b'] });
  t.after(() => shared.close());
  const surface = createSurface([shared], { maxInFlight: 1 });
  const slow = surface.callTool('a__sleep', { ms: 200 });
  assert.equal(codeOf(await surface.callTool('b__echo', { text: 'x' })), 'service_busy');
  await slow;
});

test('a result over the size limit is answered result_too_large, naming the size', async (t) => {
  const lab = await connectSession('lab', createLabServer());
  t.after(() => lab.close());
  const surface = createSurface([lab], { maxResultBytes: 10_000 });
  const ok = await surface.callTool('lab__big', { bytes: 5_000 });
  assert.equal(ok.isError, undefined);
  const big = await surface.callTool('lab__big', { bytes: 20_000 });
  assert.equal(codeOf(big), 'result_too_large');
  assert.match(textOf(big), /answered tool "big" with 200\d\d bytes, over the 10000-byte limit/);
  // The default limit is 1 MiB.
  const defaults = createSurface([lab]);
  assert.equal(codeOf(await defaults.callTool('lab__big', { bytes: 1024 * 1024 })), 'result_too_large');
  assert.equal((await defaults.callTool('lab__big', { bytes: 1000 * 1000 })).isError, undefined);
});

test('three failures in a row rest a service; JSON-RPC errors count, tool errors (isError) do not', async (t) => {
  const lab = await connectSession('lab', createLabServer());
  t.after(() => lab.close());
  let clock = 1_000_000;
  const events: GateEvent[] = [];
  const surface = createSurface([lab], {
    timeoutMs: 50,
    restMs: 60_000,
    now: () => clock,
    onEvent: (e) => events.push(e),
  });

  // Tool errors (isError: true) are ordinary results, not failures.
  for (let i = 0; i < 4; i++) assert.equal((await surface.callTool('lab__oops', {})).isError, true);
  assert.equal(surface.gateState('lab'), 'open');

  // Two timeouts, an answer (resets the count), then three failures: two JSON-RPC errors the service
  // answered (each fails its call, passed on as the error it is) and a timeout.
  for (let i = 0; i < 2; i++)
    assert.equal(codeOf(await surface.callTool('lab__sleep', { ms: 1_000 })), 'forward_timeout');
  assert.equal(textOf(await surface.callTool('lab__echo', { text: 'alive' })), 'alive');
  for (let i = 0; i < 2; i++) await assert.rejects(surface.callTool('lab__reject', {}), { code: -32602 });
  assert.equal(surface.gateState('lab'), 'open');
  assert.equal(codeOf(await surface.callTool('lab__sleep', { ms: 1_000 })), 'forward_timeout');
  assert.equal(surface.gateState('lab'), 'resting');
  assert.deepEqual(events, [{ kind: 'service_rested', service: 'lab', failures: 3, untilMs: clock + 60_000 }]);

  const resting = await surface.callTool('lab__echo', { text: 'x' });
  assert.equal(codeOf(resting), 'service_resting');
  assert.match(textOf(resting), /failed 3 requests in a row and is resting for 60 s more/);
  await assert.rejects(surface.readResource('lab://readme'), { code: 'service_resting' });
  await assert.rejects(surface.getPrompt('lab__greet', { who: 'x' }), { code: 'service_resting' });

  // After the rest the next call is a probe: a failure rests again at once...
  clock += 60_000;
  assert.equal(surface.gateState('lab'), 'probing');
  assert.equal(codeOf(await surface.callTool('lab__sleep', { ms: 1_000 })), 'forward_timeout');
  assert.equal(surface.gateState('lab'), 'resting');
  // ...and an answer opens the service again.
  clock += 60_000;
  assert.equal(textOf(await surface.callTool('lab__echo', { text: 'back' })), 'back');
  assert.equal(surface.gateState('lab'), 'open');
  assert.deepEqual(
    events.map((e) => e.kind),
    ['service_rested', 'service_rested', 'service_recovered'],
  );
});

test('a service whose connection is gone fails fast and is rested', async (t) => {
  const lab = await connectSession('lab', createLabServer());
  t.after(() => lab.close());
  const surface = createSurface([lab]);
  await lab.close();
  for (let i = 0; i < 3; i++) {
    const result = await surface.callTool('lab__echo', { text: 'x' });
    assert.equal(result.isError, true);
    assert.match(textOf(result), /service "lab" did not answer tool "echo"/);
  }
  assert.equal(codeOf(await surface.callTool('lab__echo', { text: 'x' })), 'service_resting');
});

test('the gate owns the one forwarding default, and refuses limits out of range', () => {
  assert.equal(DEFAULT_FORWARD_LIMITS.timeoutMs, DEFAULT_FORWARD_TIMEOUT_MS);
  assert.equal(DEFAULT_FORWARD_TIMEOUT_MS, 60_000);
  const cases: [Partial<ForwardLimits>, RegExp][] = [
    [{ timeoutMs: 0 }, /timeoutMs must be an integer from 1 to 2147483647, not 0/],
    [{ timeoutMs: 2 ** 31 }, /timeoutMs must be an integer from 1 to 2147483647/],
    [{ timeoutMs: 1.5 }, /timeoutMs .* not 1\.5/],
    [{ timeoutMs: Number.NaN }, /timeoutMs .* not NaN/],
    [{ maxInFlight: 0 }, /maxInFlight must be an integer from 1/],
    [{ maxResultBytes: -1 }, /maxResultBytes must be an integer from 1/],
    [{ failuresBeforeRest: 0 }, /failuresBeforeRest must be an integer from 1/],
    [{ restMs: -1 }, /restMs must be an integer from 0 to 2147483647/],
  ];
  for (const [limits, message] of cases) {
    assert.throws(() => createSurface([], limits), { code: 'usage', message }, JSON.stringify(limits));
  }
  assert.deepEqual(resolveForwardLimits({ timeoutMs: undefined, restMs: 0 }), { ...DEFAULT_FORWARD_LIMITS, restMs: 0 });
});

test('gate events become public event fields: service.rested with an ISO end, service.recovered', () => {
  assert.deepEqual(
    gateEventFields({ kind: 'service_rested', service: 'lab', failures: 3, untilMs: Date.UTC(2030, 0, 2) }),
    {
      type: 'service.rested',
      service: 'lab',
      failures: 3,
      until: '2030-01-02T00:00:00.000Z',
    },
  );
  assert.deepEqual(gateEventFields({ kind: 'service_recovered', service: 'lab' }), {
    type: 'service.recovered',
    service: 'lab',
  });
});
