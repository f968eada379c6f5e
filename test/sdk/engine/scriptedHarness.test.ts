/** The scripted harness against an in-process surface: order across invocations, {{N}}, errors as results. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { type HarnessInput, nothingJournaled } from '../../../packages/sdk/src/harness/harness.js';
import { ScriptedHarness, parseScript } from '../../../packages/sdk/src/harness/scriptedHarness.js';

const surface = createSurface([
  {
    name: 'svc',
    tools: [
      {
        tool: { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
        handler: (args) => ({ content: [{ type: 'text', text: String(args.text) }] }),
      },
      {
        tool: { name: 'fails', inputSchema: { type: 'object' } },
        handler: () => ({ isError: true, content: [{ type: 'text', text: 'it failed' }] }),
      },
      {
        tool: { name: 'throws', inputSchema: { type: 'object' } },
        handler: () => {
          throw new Error('it threw');
        },
      },
    ],
  },
]);

/** Checkpoints saved by the harness, per invocation id, the last one last. */
const saved = new Map<string, unknown[]>();

function input(agent: string, invocationId = 'inv-test', checkpoint?: unknown): HarnessInput {
  return {
    agent,
    instructions: '',
    task: 't',
    surface,
    workspace: '/tmp',
    signal: new AbortController().signal,
    invocationId,
    runtimePath: '/tmp',
    hostEnv: {},
    registry: undefined as unknown as HarnessInput['registry'],
    graceMs: 100,
    checkpoint,
    journaled: nothingJournaled(),
    saveCheckpoint: async (state) => {
      const list = saved.get(invocationId) ?? [];
      list.push(JSON.parse(JSON.stringify(state)));
      saved.set(invocationId, list);
    },
    report: () => {},
  };
}

test('each agent consumes its list in order across invocations; {{N}} is the N-th result of this invocation', async () => {
  const harness = new ScriptedHarness(
    parseScript({
      agents: {
        a: [
          { call: 'svc__echo', arguments: { text: 'one' } },
          { final: 'first: {{0}}' },
          { call: 'svc__echo', arguments: { text: 'two' } },
          { call: 'svc__fails' },
          { call: 'svc__throws' },
          { final: 'second: {{0}} / {{1}} / {{2}}' },
        ],
      },
    }),
  );
  assert.deepEqual(await harness.run(input('a')), { output: 'first: one' });
  const second = await harness.run(input('a'));
  assert.match(second.output, /^second: two \/ it failed \/ .*it threw$/);
  await assert.rejects(harness.run(input('a')), { code: 'invalid_script', message: /no more steps for agent "a"/ });
  await assert.rejects(harness.run(input('nobody')), {
    code: 'invalid_script',
    message: /no more steps for agent "nobody"/,
  });
});

test('a step naming a tool that is not on the surface fails the invocation with a clear error', async () => {
  const harness = new ScriptedHarness(parseScript({ agents: { a: [{ call: 'svc__nope' }, { final: 'x' }] } }));
  await assert.rejects(harness.run(input('a')), {
    code: 'unknown_tool',
    message: /step 0 of the script for agent "a" calls "svc__nope", which is not on the agent's surface/,
  });
});

test('snapshot and restore replay an invocation from its start', async () => {
  const harness = new ScriptedHarness(parseScript({ agents: { a: [{ final: 'x' }, { final: 'y' }] } }));
  const start = harness.snapshot();
  assert.equal((await harness.run(input('a'))).output, 'x');
  harness.restoreAgent('a', start);
  assert.equal((await harness.run(input('a'))).output, 'x');
  assert.equal((await harness.run(input('a'))).output, 'y');
});

test('it checkpoints at its start and after every call; from a checkpoint it continues without calling again', async () => {
  const script = parseScript({
    agents: {
      a: [
        { call: 'svc__echo', arguments: { text: 'one' } },
        { call: 'svc__echo', arguments: { text: 'two' } },
        { final: '{{0}} {{1}}' },
      ],
    },
  });
  const first = new ScriptedHarness(script);
  assert.equal((await first.run(input('a', 'inv-cp'))).output, 'one two');
  const states = saved.get('inv-cp')!;
  assert.equal(states.length, 3, 'one at the start, one after each call');
  assert.deepEqual(
    states.map((s) => (s as { position: number; results: string[] }).position),
    [0, 1, 2],
  );
  // A new host (a fresh harness) continues from the checkpoint after the first call: the second call and
  // the final step run, the first call's recorded result is reused.
  let calls = 0;
  const counting = {
    ...surface,
    callTool: (...args: Parameters<typeof surface.callTool>) => {
      calls++;
      return surface.callTool(...args);
    },
  };
  const resumed = new ScriptedHarness(script);
  const output = await resumed.run({ ...input('a', 'inv-cp2', states[1]), surface: counting });
  assert.equal(output.output, 'one two');
  assert.equal(calls, 1, 'only the call whose result was not recorded ran');
  await assert.rejects(resumed.run(input('a', 'inv-bad', { harness: 'other' })), { code: 'invalid_checkpoint' });
});
