/**
 * What the host journaled of an invocation's steps, read back from journal lines (which are not typed on
 * read): only the invocation's own `model.called` and `tool.called` lines count, fields of another shape add
 * nothing, any call id survives (`__proto__` included), and the JSON a queue job carries to the worker
 * round-trips.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  fromJournaledJson,
  isJournaledJson,
  journaledJson,
  journaledSteps,
} from '../../../packages/sdk/src/engine/journaledSteps.js';

const base = { time: '2026-12-01T21:00:00.000Z', run: 'r1', agent: 'main' };
const called = (invocation: string, callId: unknown, resultDigest: unknown, tool: unknown = 'lab__echo') => ({
  ...base,
  type: 'tool.called',
  invocation,
  tool,
  callId,
  resultDigest,
});

test('the steps of one invocation: its responses and completed calls, nothing of another shape', () => {
  const steps = journaledSteps(
    [
      { ...base, type: 'model.called', invocation: 'i1', turn: 1, responseDigest: 'r-1' },
      {
        ...base,
        type: 'model.called',
        invocation: 'i1',
        turn: 2,
        responseDigest: 'r-2',
        answered: [{ callId: 'c-bad', tool: 'nope', resultDigest: 'd-answered' }, { callId: 5 }],
      },
      called('i1', 'c-1', 'd-1'),
      called('i1', 'c-1', 'd-1b'),
      called('i1', '__proto__', 'd-proto'),
      // Another invocation's, a call without an id (an agent CLI's), and fields of the wrong type.
      called('i2', 'c-2', 'd-2'),
      called('i1', undefined, 'd-3'),
      called('i1', 'c-4', 7),
      { ...base, type: 'model.called', invocation: 'i1', turn: 3, responseDigest: 9 },
      null,
      'a line',
      { ...base, type: 'tool.calling', invocation: 'i1', tool: 'lab__echo', callId: 'c-5' },
    ],
    'i1',
  );
  assert.deepEqual([...steps.responses], ['r-1', 'r-2']);
  assert.deepEqual([...steps.calls.keys()], ['c-bad', 'c-1', '__proto__']);
  assert.deepEqual(steps.calls.get('c-1'), [
    { tool: 'lab__echo', resultDigest: 'd-1' },
    { tool: 'lab__echo', resultDigest: 'd-1b' },
  ]);
  assert.deepEqual(steps.calls.get('__proto__'), [{ tool: 'lab__echo', resultDigest: 'd-proto' }]);

  // What a queue job carries: JSON, checked on receipt, the same steps on the worker.
  const json = JSON.parse(JSON.stringify(journaledJson(steps)));
  assert.equal(isJournaledJson(json), true);
  assert.deepEqual(fromJournaledJson(json), steps);
  for (const bad of [null, {}, { responses: [1], calls: [] }, { responses: [], calls: [{ callId: 'x' }] }]) {
    assert.equal(isJournaledJson(bad), false, JSON.stringify(bad));
  }
});
