/**
 * The attempt's tool journal (engine/toolJournal.ts) hands a call's options on as they are, getters
 * included: a face's `signal` is a getter that builds an AbortSignal only when read (sessions/callCancel.ts),
 * so the journal must not read it, and the surface below still gets a working signal and the cancellation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { observeSurface } from '../../../packages/sdk/src/engine/toolJournal.js';
import { CallCancel, callCancelOf, withCancel } from '../../../packages/sdk/src/sessions/callCancel.js';
import type { Surface, SurfaceRequestOptions } from '../../../packages/sdk/src/surface/surface.js';

test("a call's options reach the surface with its signal getter unread, and the journal's own fields added", async () => {
  let given: SurfaceRequestOptions | undefined;
  const surface = {
    serverInfo: { name: 'test', version: '0' },
    callTool: async (_name: string, _args: unknown, options?: SurfaceRequestOptions) => {
      given = options;
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  } as unknown as Surface;
  const events: unknown[] = [];
  const observed = observeSurface(surface, { invocation: 'inv-1', agent: 'main', emit: (e) => events.push(e) });
  const cancel = new CallCancel();
  let reads = 0;
  const options = withCancel<SurfaceRequestOptions>({}, cancel);
  const getter = Object.getOwnPropertyDescriptor(options, 'signal')?.get;
  Object.defineProperty(options, 'signal', {
    enumerable: true,
    configurable: true,
    get() {
      reads++;
      return getter?.call(options);
    },
  });
  await observed.callTool('lab__echo', { text: 'x' }, options);
  assert.equal(reads, 0, 'the journal did not read the signal');
  assert.ok(given !== undefined);
  assert.equal(callCancelOf(given), cancel, 'the cancellation travels on');
  assert.ok(given.task !== undefined && given.question !== undefined, "the journal's task and question options");
  cancel.abort('stop');
  assert.equal(given.signal?.reason, 'stop', 'the signal read below follows the cancellation');
  assert.equal(reads, 1);
  assert.ok(events.length >= 2, 'the call was journaled');
});
