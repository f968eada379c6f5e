/**
 * The per-call shortcuts of the forwarding path, held to what they replace: a CallCancel behaves as an
 * AbortSignal wherever one is read; the size bound a result's line gives is never below its serialized
 * size, and a gate refuses a result over its limit whether or not it has a bound; the faces' depth check
 * refuses and accepts the same messages with its bracket count as without.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import {
  CALL_CANCEL,
  CallCancel,
  callCancelOf,
  listenAbort,
  withCancel,
} from '../../../packages/sdk/src/sessions/callCancel.js';
import { noteParsedFrom, sizeBoundOf } from '../../../packages/sdk/src/sessions/sizeBound.js';
import { ServiceStdioTransport } from '../../../packages/sdk/src/sessions/stdioTransport.js';
import { ServiceGate, resolveForwardLimits } from '../../../packages/sdk/src/surface/serviceGate.js';
import { checkMessage, jsonDepth } from '../../../packages/sdk/src/faces/inputLimits.js';

test('a CallCancel aborts its listeners once, and its signal (made before or after the abort) carries the reason', () => {
  const cancel = new CallCancel();
  const early = cancel.signal;
  const heard: string[] = [];
  cancel.onAbort(() => heard.push('first'));
  const stop = cancel.onAbort(() => heard.push('stopped'));
  listenAbort(cancel, () => heard.push('listenAbort'));
  let signalHeard = 0;
  early.addEventListener('abort', () => signalHeard++);
  stop();
  assert.equal(cancel.aborted, false);
  assert.equal(early.aborted, false);
  const reason = new Error('the client cancelled');
  cancel.abort(reason);
  cancel.abort(new Error('a second reason is ignored'));
  assert.deepEqual(heard, ['first', 'listenAbort']);
  assert.equal(signalHeard, 1);
  assert.equal(cancel.reason, reason);
  assert.equal(early.reason, reason);
  const late = new CallCancel();
  late.abort();
  assert.equal((late.reason as DOMException).name, 'AbortError', 'no reason: an AbortError, as AbortController gives');
  assert.equal(late.signal.aborted, true, 'a signal made after the abort is aborted');
  assert.equal(late.signal.reason, late.reason);
  let after = 0;
  late.onAbort(() => after++);
  assert.equal(after, 0, 'a listener added after the abort is not called (check aborted first, as with a signal)');
});

test('listenAbort takes a signal too; withCancel hands on a working signal even through a copy of the options', () => {
  const controller = new AbortController();
  let heard = 0;
  const stop = listenAbort(controller.signal, () => heard++);
  stop();
  listenAbort(controller.signal, () => heard++);
  controller.abort();
  assert.equal(heard, 1);
  assert.equal(listenAbort(undefined, () => {})(), undefined);

  const cancel = new CallCancel();
  const options = withCancel({ callId: 'c1' }, cancel);
  assert.equal(callCancelOf(options), cancel);
  assert.equal(options[CALL_CANCEL as never], cancel);
  const copy = { ...options };
  assert.equal(callCancelOf(copy), cancel, 'the CallCancel survives a spread');
  assert.ok(copy.signal instanceof AbortSignal, 'a spread copy carries a real signal');
  cancel.abort('gone');
  assert.equal(copy.signal.aborted, true);
  assert.equal(copy.signal.reason, 'gone');
  const viaSignal = withCancel({}, controller.signal);
  assert.equal(viaSignal.signal, controller.signal);
  assert.equal(callCancelOf(viaSignal), undefined);
});

/** Lines a service might send, with numbers that grow when written again, escapes, and characters of every width. */
const LINES = [
  '{"jsonrpc":"2.0","id":"scienceevolve-1","result":{"content":[{"type":"text","text":"hello"}]}}',
  '{"jsonrpc":"2.0","id":"scienceevolve-1","result":{"n":[1e20,9e20,-1e20,1E20,1e9,1e21,5e-324,1.5e300,0e0,-0]}}',
  '{"jsonrpc":"2.0","id":"scienceevolve-1","result":{"a":[1e20,1e20,1e20,1e20,1e20,1e20,1e20,1e20,1e20,1e20,1e20]}}',
  '{"jsonrpc":"2.0","id":"scienceevolve-1","result":{"t":"\\u00e9\\ud83d\\ude00\\u0001\\n\\"\\\\\\/"}}',
  '{"jsonrpc":"2.0","id":"scienceevolve-1","result":{"t":"é😀中\\t"}}',
  '  {  "jsonrpc" : "2.0" , "id" : "scienceevolve-1" , "result" : { "k" : [ 1 , 2 , { } ] , "k" : 1e20 }  }  ',
  '{"result":{"content":[]},"jsonrpc":"2.0","id":"scienceevolve-1"}',
];

test('the size bound of a result parsed from a line is never below its serialized size (UTF-8 bytes)', async () => {
  for (const line of LINES) {
    const result = (JSON.parse(line) as { result: object }).result;
    noteParsedFrom(result, line.length);
    const bound = sizeBoundOf(result);
    const bytes = Buffer.byteLength(JSON.stringify(result), 'utf8');
    assert.ok(bound !== undefined && bytes <= bound, `${line}: ${bytes} bytes, bound ${bound}`);
  }
  assert.equal(sizeBoundOf({}), undefined, 'no bound for a result that was not noted');
  assert.equal(sizeBoundOf('text'), undefined);

  // The bound is noted where a direct request's answer is taken off the service's line.
  const stdout = new PassThrough();
  const stdin = new PassThrough();
  const transport = new ServiceStdioTransport(stdout, stdin);
  await transport.start();
  stdin.resume();
  const pending = transport.direct.request('tools/call', { name: 'echo' }, { timeout: 5000 });
  const line = LINES[1]!;
  stdout.write(`${line}\n`);
  const result = await pending;
  assert.equal(sizeBoundOf(result), line.length * 6);
  await transport.close();
});

test('a gate refuses a result over its limit with the same bytes whether or not the result has a bound', async () => {
  const limits = resolveForwardLimits({ maxResultBytes: 100 });
  const big = { content: [{ type: 'text', text: 'x'.repeat(200) }] };
  const bytes = Buffer.byteLength(JSON.stringify(big));
  for (const bounded of [false, true]) {
    const result = structuredClone(big);
    // A bound over the limit (as a line of this size gives) is measured exactly.
    if (bounded) noteParsedFrom(result, JSON.stringify(result).length + 40);
    const gate = new ServiceGate('svc', limits);
    await assert.rejects(
      gate.run('tool "echo"', async () => result),
      (error: { code?: string; data?: { bytes?: number } }) =>
        error.code === 'result_too_large' && error.data?.bytes === bytes,
    );
  }
  // A result whose bound is within the limit passes without being measured again.
  const small = { content: [] };
  noteParsedFrom(small, 10);
  assert.equal(await new ServiceGate('svc', limits).run('tool "echo"', async () => small), small);
});

test('the depth check refuses and accepts the same messages with its bracket count as a walk alone does', () => {
  const limits = { maxMessageBytes: 1 << 20, maxDepth: 4 };
  const request = (params: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}}`;
  const cases = [
    request('{"name":"a","arguments":{"x":[1]}}'), // depth 4: accepted
    request('{"name":"a","arguments":{"x":[[1]]}}'), // depth 5: refused
    request('{"name":"a","arguments":{"x":"[[[[[{{{{{"}}'), // many brackets, all in a string: accepted
    request('{"name":"a","arguments":{"x":"{{{{","y":[[1]]}}'), // over the count and too deep: refused
    request('{"name":"a","arguments":{"x":"\\"[[[[","y":{}}}'), // an escaped quote before the brackets: accepted
  ];
  for (const text of cases) {
    const deep = jsonDepth(text, limits.maxDepth) > limits.maxDepth;
    const checked = checkMessage(text, limits);
    assert.equal('refusal' in checked, deep, text);
    if ('refusal' in checked) assert.match(checked.refusal.message, /nested deeper than 4 levels/);
  }
});

test('the size bound holds for a line near the worst growth: a result of numbers that each grow 4.4 times', () => {
  // `1e20,` (5 characters) is written as 21 digits and a comma: a factor under 6 that a bound of 4 would miss.
  const line = `{"jsonrpc":"2.0","id":"scienceevolve-1","result":{"n":[${Array(2000).fill('1e20').join(',')}]}}`;
  const result = (JSON.parse(line) as { result: object }).result;
  noteParsedFrom(result, line.length);
  const bytes = Buffer.byteLength(JSON.stringify(result), 'utf8');
  assert.ok(bytes > 4 * line.length, `${bytes} bytes from a line of ${line.length}: the case is near the worst`);
  assert.ok(bytes <= (sizeBoundOf(result) ?? 0), `${bytes} bytes within the bound ${sizeBoundOf(result)}`);
});

test('a CallCancel runs every listener when one throws, as an AbortSignal does, and throws the first error after', () => {
  const cancel = new CallCancel();
  const heard: string[] = [];
  cancel.onAbort(() => {
    throw new Error('first listener failed');
  });
  cancel.onAbort(() => heard.push('second'));
  listenAbort(cancel, () => heard.push('third'));
  assert.throws(() => cancel.abort('why'), /first listener failed/);
  assert.deepEqual(heard, ['second', 'third']);
  assert.equal(cancel.aborted, true);
  assert.equal(cancel.signal.reason, 'why');
});
