/**
 * Two line transports back to back (as a face and a client over the same kind of transport): a line one
 * side refuses is answered once with a JSON-RPC error (id null), and that refusal, which the other side's
 * limits do not accept as JSON-RPC either, is reported there and never answered.
 */
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { test } from 'node:test';
import { LineTransport } from '../../../packages/sdk/src/faces/lineTransport.js';

test('a refusal is never answered with a refusal', async (t) => {
  const aToB = new PassThrough();
  const bToA = new PassThrough();
  const a = new LineTransport(bToA, aToB);
  const b = new LineTransport(aToB, bToA);
  t.after(async () => {
    await a.close();
    await b.close();
  });
  const linesA: string[] = [];
  const linesB: string[] = [];
  aToB.on('data', (chunk: Buffer) =>
    linesB.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ),
  );
  bToA.on('data', (chunk: Buffer) =>
    linesA.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''),
    ),
  );
  const errorsA: string[] = [];
  a.onerror = (error) => errorsA.push(error.message);
  b.onerror = () => {};
  await a.start();
  await b.start();
  // A notification without "jsonrpc": B refuses it once.
  aToB.write('{"method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(linesA.length, 1);
  const refusal = JSON.parse(linesA[0]!) as { id: unknown; error: { code: number } };
  assert.equal(refusal.id, null);
  assert.equal(refusal.error.code, -32600);
  // A received that refusal, reported it, and answered nothing: B got only the one line A wrote.
  assert.equal(linesB.length, 1);
  assert.match(errorsA.join('\n'), /error answer that is not valid JSON-RPC was dropped/);
});

test('messages are written in the order they were sent, also while the output is full', async (t) => {
  // An output that takes one line at a time, each when the test lets it: every write after the first waits
  // for a drain, and more messages are sent while earlier ones still wait (progress, then the answer).
  const written: number[] = [];
  let release: (() => void) | undefined;
  const output = new Writable({
    highWaterMark: 1,
    write(chunk, _encoding, done) {
      written.push((JSON.parse(String(chunk)) as { params: { n: number } }).params.n);
      release = done;
    },
  });
  const transport = new LineTransport(new PassThrough(), output);
  t.after(() => transport.close());
  const send = (n: number) => transport.send({ jsonrpc: '2.0', method: 'notifications/message', params: { n } });
  const sends = [1, 2, 3, 4, 5, 6].map(send);
  for (let turn = 0; turn < 60; turn++) {
    const next = release;
    release = undefined;
    next?.();
    await new Promise((resolve) => setImmediate(resolve));
    if (turn === 3) sends.push(send(7));
    if (turn === 5) sends.push(send(8), send(9));
  }
  await Promise.all(sends);
  assert.deepEqual(written, [1, 2, 3, 4, 5, 6, 7, 8, 9]);
});
