// A real service (addsToolsLater.cjs) adds and removes tools and prompts while it serves: the session
// lists it again, reports `service.catalog_changed`, the surface swaps its catalog, and every face tells
// its client (stdio in both eras, HTTP on the 2026-07-28 listen stream, the socket face). A tool that was
// taken away answers `tool_removed`. Each test proves the service process gone afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Tool } from '@modelcontextprotocol/client';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import type { ServiceEvent } from '../../../packages/sdk/src/sessions/serviceEvents.js';
import { assertAllGone, fixtureSpec, startService, waitFor } from '../sessions/helpers.js';
import { FACE_KINDS, type FaceKind, faceClient } from '../faces/faceClients.js';

type CatalogChanged = Extract<ServiceEvent, { type: 'service.catalog_changed' }>;

function catalogChanges(events: ServiceEvent[]): CatalogChanged[] {
  return events.filter((e): e is CatalogChanged => e.type === 'service.catalog_changed');
}

test('a tool added and removed later reaches the surface, the events and every face client', {
  timeout: 20_000,
}, async (t) => {
  const spec = fixtureSpec(t, 'addsToolsLater.cjs');
  const { session, events } = await startService(t, spec, { listChangeDebounceMs: 10 });
  const pid = session.pid;
  const surface = createSurface([session]);
  t.after(() => surface.close());
  const announced: string[] = [];
  surface.onListChanged((change) => announced.push(`${change.service}:${change.tools}:${change.prompts}`));

  // What each face client saw last in a list_changed refresh of tools.
  const seen = new Map<FaceKind, string[]>();
  const clients = new Map<FaceKind, Awaited<ReturnType<typeof faceClient>>>();
  for (const kind of FACE_KINDS) {
    const client = await faceClient(t, surface, kind, {
      listChanged: {
        tools: {
          debounceMs: 0,
          onChanged: (error, tools) => {
            if (error === null && tools !== null)
              seen.set(
                kind,
                (tools as Tool[]).map((tool) => tool.name),
              );
          },
        },
      },
    });
    assert.equal(client.getServerCapabilities()?.tools?.listChanged, true, `${kind} declares tools.listChanged`);
    assert.ok(!(await client.listTools()).tools.some((tool) => tool.name === 'addsToolsLater__late'));
    clients.set(kind, client);
  }

  const stdio = clients.get('stdio 2025-11-25')!;
  const added = await stdio.callTool({ name: 'addsToolsLater__add_tool', arguments: { name: 'late' } });
  assert.deepEqual(added.content, [{ type: 'text', text: 'added late' }]);

  const change = await waitFor(() => catalogChanges(events)[0]);
  assert.deepEqual(change.lists, ['tools']);
  assert.deepEqual(change.added, { tools: ['late'], resources: [], resourceTemplates: [], prompts: [] });
  assert.deepEqual(change.removed, { tools: [], resources: [], resourceTemplates: [], prompts: [] });
  assert.equal(change.service, 'addsToolsLater');
  assert.ok(session.catalog.tools.some((tool) => tool.name === 'late'));
  assert.ok(surface.tools.some((tool) => tool.name === 'addsToolsLater__late'));
  assert.deepEqual(announced, ['addsToolsLater:true:false']);
  for (const kind of FACE_KINDS) {
    const names = await waitFor(
      () => (seen.get(kind)?.includes('addsToolsLater__late') ? seen.get(kind) : undefined),
      5000,
    );
    assert.ok(names.includes('addsToolsLater__echo'), `${kind} got the whole new list`);
  }
  const http = clients.get('http 2026-07-28')!;
  assert.deepEqual((await http.callTool({ name: 'addsToolsLater__late', arguments: {} })).content, [
    { type: 'text', text: 'I am late' },
  ]);

  // Taken away again: every face hears it, and a call by the old name says what happened.
  await surface.callTool('addsToolsLater__remove_tool', { name: 'late' });
  const removal = await waitFor(() => catalogChanges(events)[1]);
  assert.deepEqual(removal.removed.tools, ['late']);
  assert.deepEqual(removal.added.tools, []);
  assert.ok(!surface.tools.some((tool) => tool.name === 'addsToolsLater__late'));
  for (const kind of FACE_KINDS) {
    await waitFor(() => seen.get(kind) !== undefined && !seen.get(kind)!.includes('addsToolsLater__late'), 5000);
  }
  await assert.rejects(surface.callTool('addsToolsLater__late', {}), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'tool_removed');
    assert.match(
      error.message,
      /tool "addsToolsLater__late" was removed at .*service "addsToolsLater" no longer lists tool "late"/,
    );
    return true;
  });
  for (const kind of FACE_KINDS) {
    await assert.rejects(
      clients.get(kind)!.callTool({ name: 'addsToolsLater__late', arguments: {} }),
      (error: Error & { code?: unknown; data?: { code?: string } }) => {
        assert.equal(error.data?.code, 'tool_removed', kind);
        assert.equal(error.code, -32602, `${kind}: answered as invalid params`);
        assert.match(error.message, /was removed at/);
        return true;
      },
    );
  }
  // A name that never was stays unknown_tool.
  await assert.rejects(surface.callTool('addsToolsLater__never', {}), { code: 'unknown_tool' });

  await session.close();
  await assertAllGone([pid]);
});

test('a prompt added later is listed again and announced as a prompts change only', {
  timeout: 20_000,
}, async (t) => {
  const spec = fixtureSpec(t, 'addsToolsLater.cjs');
  const { session, events } = await startService(t, spec, { listChangeDebounceMs: 10 });
  const pid = session.pid;
  const surface = createSurface([session]);
  t.after(() => surface.close());
  let promptsChanged = 0;
  let toolsChanged = 0;
  const client = await faceClient(t, surface, 'stdio 2025-11-25');
  client.setNotificationHandler('notifications/prompts/list_changed', () => {
    promptsChanged++;
  });
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    toolsChanged++;
  });

  await client.callTool({ name: 'addsToolsLater__add_prompt', arguments: { name: 'later' } });
  const change = await waitFor(() => catalogChanges(events)[0]);
  assert.deepEqual(change.lists, ['prompts']);
  assert.deepEqual(change.added.prompts, ['later']);
  await waitFor(() => promptsChanged > 0);
  assert.equal(toolsChanged, 0, 'only the list that changed is announced');
  const { prompts } = await client.listPrompts();
  assert.deepEqual(prompts.map((p) => p.name).sort(), ['addsToolsLater__greet', 'addsToolsLater__later']);
  assert.deepEqual((await client.getPrompt({ name: 'addsToolsLater__later' })).messages[0]?.content, {
    type: 'text',
    text: 'later',
  });

  await session.close();
  await assertAllGone([pid]);
});

test('a call in flight when its tool goes away finishes; the next call by its name is refused', {
  timeout: 20_000,
}, async (t) => {
  const spec = fixtureSpec(t, 'addsToolsLater.cjs');
  const { session, events } = await startService(t, spec, { listChangeDebounceMs: 10 });
  const pid = session.pid;
  const surface = createSurface([session]);
  t.after(() => surface.close());
  const client = await faceClient(t, surface, 'http 2026-07-28');
  const digestBefore = surface.digest;

  // `vanish` removes itself at once and answers 1.5 s later: the catalog is swapped while it runs.
  const inFlight = client.callTool({ name: 'addsToolsLater__vanish', arguments: { ms: 1500 } });
  const change = await waitFor(() => catalogChanges(events)[0]);
  assert.deepEqual(change.removed.tools, ['vanish']);
  assert.notEqual(surface.digest, digestBefore, 'the catalog was swapped while the call ran');
  assert.deepEqual((await inFlight).content, [{ type: 'text', text: 'vanished' }]);
  await assert.rejects(client.callTool({ name: 'addsToolsLater__vanish', arguments: { ms: 0 } }), /was removed at/);

  await session.close();
  await assertAllGone([pid]);
});

test('a closed surface and a closed session stop following list changes', { timeout: 20_000 }, async (t) => {
  const spec = fixtureSpec(t, 'addsToolsLater.cjs');
  const { session, events } = await startService(t, spec, { listChangeDebounceMs: 10 });
  const pid = session.pid;
  const surface = createSurface([session]);
  const announced: unknown[] = [];
  surface.onListChanged((change) => announced.push(change));
  surface.close();
  await surface.callTool('addsToolsLater__add_tool', { name: 'unheard' });
  await waitFor(() => catalogChanges(events)[0]);
  assert.deepEqual(announced, [], 'a closed surface announces nothing');
  assert.ok(!surface.tools.some((tool) => tool.name === 'addsToolsLater__unheard'), 'and keeps its listing');

  await session.close();
  await assertAllGone([pid]);
});
