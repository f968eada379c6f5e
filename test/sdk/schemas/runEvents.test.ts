/**
 * The run-event schemas: a line as the journal writes it passes; a line a service forged or damaged is
 * refused case by case, with a problem that names the event type and the field, never the value.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRunEvent } from '../../../packages/sdk/src/events/checkEvent.js';

const time = '2026-12-01T20:00:00.000Z';
const base = { time, run: 'r1', invocation: 'i1', agent: 'main' };
const reconfigured = { ...base, type: 'workflow.reconfigured', version: 2, changedMcps: ['a'], changedAgents: [] };
const called = {
  ...base,
  type: 'tool.called',
  tool: 'notes__read',
  arguments: { name: 'x' },
  ok: true,
  durationMs: 3,
  summary: 'ok',
};

test('events as the journal writes them pass, extra fields from a newer writer included', () => {
  for (const event of [
    reconfigured,
    called,
    { ...called, arguments: null },
    { ...called, callId: 'call_1', resultDigest: 'a'.repeat(64) },
    { ...base, type: 'service.recovered', service: 's' },
    { time, run: 'r1', type: 'run.finished', status: 'succeeded', output: null, usage: usage() },
    { ...reconfigured, addedLater: true },
  ]) {
    const check = checkRunEvent(event);
    assert.ok(check.ok, `${JSON.stringify(event)}: ${check.ok ? '' : check.problem}`);
  }
});

test('a forged or damaged line is refused, naming its type and field but not its value', () => {
  const cases: [unknown, RegExp][] = [
    [{ ...reconfigured, changedMcps: 'SECRET' }, /"workflow\.reconfigured" event: field "changedMcps"/],
    [{ ...reconfigured, changedMcps: [1] }, /field "changedMcps\.0"/],
    [{ ...called, ok: 'yes' }, /"tool\.called" event: field "ok"/],
    [{ ...called, durationMs: -1 }, /field "durationMs"/],
    [{ ...called, time: 'yesterday' }, /field "time"/],
    [{ ...called, summary: undefined }, /field "summary"/],
    [{ ...base, type: 'no.such.event' }, /"no\.such\.event" event: field "type"/],
    [{ ...base }, /an event without a known type/],
    [null, /^an event without a known type does not match/],
    ['SECRET', /an event without a known type/],
    [{ ...base, type: 'invocation.state', from: null, to: 'exploded', attempt: 1 }, /field "to"/],
    [
      { time, run: 'r1', type: 'run.finished', status: 'succeeded', output: null, usage: { modelCalls: 1.5 } },
      /"usage\./,
    ],
  ];
  for (const [value, expected] of cases) {
    const check = checkRunEvent(value);
    assert.equal(check.ok, false, JSON.stringify(value));
    if (check.ok) continue;
    assert.match(check.problem, expected, JSON.stringify(value));
    assert.ok(!check.problem.includes('SECRET'), 'never the value');
  }
});

function usage() {
  return { modelCalls: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 0 };
}
