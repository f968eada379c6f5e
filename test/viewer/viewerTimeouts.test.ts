/**
 * The run viewer's request timeouts against slow clients on real sockets (127.0.0.1), the viewer started in
 * this process with short, test-set timeouts over a data dir holding a real scripted run: a client sending
 * its headers a byte at a time is cut; a normal page load works; the run's event stream stays open past
 * the timeouts. Node's defaults (60 s of headers) would let the slow client through the 20 s it trickles.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startViewer } from '../../packages/cli/src/ui/viewerServer.js';
import { runWorkflow } from '../../packages/sdk/src/engine/runs.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { readStreamFor, slowClient } from '../fixtures/bridge/slowClient.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';

test('the viewer cuts a slow-loris client after headersTimeoutMs, serves a normal request, and keeps an event stream open past the timeouts', {
  timeout: 120_000,
}, async (t) => {
  const box = await sandbox(t);
  const result = await runWorkflow({
    ...box,
    workflow: {
      agents: { main: agent([['notes', 'notes']]) },
      mcpDefinitions: { notes: fixtureDefinition('notesService.cjs') },
    },
    script: {
      agents: { main: [{ call: 'notes__write', arguments: { name: 'a.txt', text: 'hi' } }, { final: 'done' }] },
    },
    requirement: 'write a note',
    graceMs: 500,
  });
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  await assertNothingLeft(box.project, result.events);

  const viewer = await startViewer({
    dataDir: box.dataDir,
    headersTimeoutMs: 400,
    requestTimeoutMs: 800,
    keepAliveTimeoutMs: 500,
    keepAliveMs: 300,
  });
  t.after(() => viewer.close());
  const token = new URL(viewer.url).searchParams.get('token')!;

  const slow = await slowClient(t, viewer.port, {
    trickle: `GET /?token=${token} HTTP/1.1\r\nHost: 127.0.0.1:${viewer.port}\r\nX-Slow: ${'a'.repeat(120)}`,
    everyMs: 100,
  });
  assert.equal(slow.cut, true, `the connection stayed open for all ${slow.elapsedMs} ms of trickling`);
  assert.match(slow.received, /^HTTP\/1\.1 408 /);

  const page = await fetch(viewer.url);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<html/i);

  const events = await fetch(
    `http://127.0.0.1:${viewer.port}/api/events?token=${token}&project=${box.project}&run=${result.run}`,
  );
  assert.equal(events.status, 200);
  const { text, endedEarly } = await readStreamFor(events, 3000);
  assert.equal(endedEarly, false, 'the viewer ended the event stream');
  assert.match(text, /event: journal/);
  // Keep-alives kept coming after the request timeout (one each 300 ms over 3 s).
  assert.ok((text.match(/: keep-alive/g) ?? []).length >= 5, text.slice(-500));
});
