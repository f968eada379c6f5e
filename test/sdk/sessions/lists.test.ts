/**
 * Lists as the protocol means them (SPEC §7): every page followed, bounds and repeated cursors as coded
 * errors, a declared list answered "method not found" counted empty and noted; roots answered with the
 * workspace; JSON-RPC errors counted towards a rest. Through real service starts and the HTTP face.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { type TestContext, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListResourcesRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createBridgeToken, serveHttp } from '../../../packages/sdk/src/faces/httpFace.js';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { ERROR_META_KEY } from '../../../packages/sdk/src/surface/surfaceDispatch.js';
import type { ServiceSession } from '../../../packages/sdk/src/sessions/serviceSession.js';
import { connectRemoteService } from '../../../packages/sdk/src/sessions/remoteService.js';
import { serveStatelessMcp } from '../../fixtures/remote/statelessServer.js';
import { assertAllGone, fixtureSpec, startMustFail, startService } from './helpers.js';

/** Serves `session` through the HTTP face and connects a v2 client to it. */
async function throughHttpFace(t: TestContext, session: ServiceSession): Promise<Client> {
  const token = createBridgeToken();
  const face = await serveHttp(createSurface([session]), { token, port: 0 });
  t.after(() => face.close());
  const client = new Client({ name: 'lists-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(face.url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  t.after(() => client.close());
  return client;
}

function textOf(result: { content?: unknown }): string {
  const block = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return block?.type === 'text' ? (block.text ?? '') : '';
}

test('a service that pages its tools offers every page, at start and through the HTTP face', async (t) => {
  const { session } = await startService(t, fixtureSpec(t, 'pagesItsTools.cjs', { serviceName: 'pages' }));
  assert.deepEqual(
    session.catalog.tools.map((tool) => tool.name),
    ['tool1', 'tool2', 'tool3', 'tool4', 'tool5', 'tool6'],
  );
  assert.deepEqual(session.catalog.missingLists, []);

  const client = await throughHttpFace(t, session);
  const { tools } = await client.listTools();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    ['pages__tool1', 'pages__tool2', 'pages__tool3', 'pages__tool4', 'pages__tool5', 'pages__tool6'],
  );
  assert.equal(textOf(await client.callTool({ name: 'pages__tool6', arguments: {} })), 'called tool6');

  await session.close();
  await assertAllGone([session.pid]);
});

test('a declared resources capability without templates/list starts, counts templates empty and notes it', async (t) => {
  const { session, events } = await startService(t, fixtureSpec(t, 'noTemplatesList.cjs', { serviceName: 'notes' }));
  assert.equal(session.state, 'ready');
  assert.deepEqual(session.catalog.resourceTemplates, []);
  assert.deepEqual(
    session.catalog.resources.map((r) => r.uri),
    ['fixture://note'],
  );
  assert.deepEqual(session.catalog.missingLists, ['resources/templates/list']);
  assert.ok(events.some((e) => e.type === 'service.ready'));

  const client = await throughHttpFace(t, session);
  assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
  assert.deepEqual(
    (await client.listResources()).resources.map((r) => r.uri),
    ['fixture://note'],
  );
  const read = await client.readResource({ uri: 'fixture://note' });
  assert.equal((read.contents[0] as { text: string }).text, 'a note');
  assert.equal(textOf(await client.callTool({ name: 'notes__hello', arguments: {} })), 'hello');

  await session.close();
  await assertAllGone([session.pid]);
});

test('a cursor that repeats fails the start with list_cursor_repeated, naming service and list', async (t) => {
  const spec = fixtureSpec(t, 'repeatsCursor.cjs', { serviceName: 'loops' });
  const { error, events } = await startMustFail(spec);
  assert.equal(error.code, 'list_cursor_repeated');
  assert.match(
    error.message,
    /service "loops" failed to list what it offers: tools\/list gave the cursor "again" a second time/,
  );
  assert.equal(error.data?.list, 'tools/list');
  assert.equal(error.data?.service, 'loops');
  assert.ok(error.remedy);
  const pid = events.find((e) => e.type === 'service.exited')?.pid;
  assert.ok(typeof pid === 'number');
  await assertAllGone([pid]);
});

for (const [mode, args, bound] of [
  ['pages', [], /tools\/list went past 100 pages \(100 entries in 100 pages\)/],
  ['entries', ['wide'], /tools\/list went past 10000 entries \(12000 entries in 6 pages\)/],
] as const) {
  test(`a list that never ends fails the start with list_too_long (${mode})`, async (t) => {
    const spec = fixtureSpec(t, 'neverEndsItsTools.cjs', { serviceName: 'endless', args: [...args] });
    const { error, events } = await startMustFail(spec);
    assert.equal(error.code, 'list_too_long');
    assert.match(error.message, /^service "endless" failed to list what it offers: /);
    assert.match(error.message, bound);
    assert.equal(error.data?.list, 'tools/list');
    const pid = events.find((e) => e.type === 'service.exited')?.pid;
    assert.ok(typeof pid === 'number');
    await assertAllGone([pid]);
  });
}

test("roots/list is answered with the workspace, the service's cwd, as one file:// root", async (t) => {
  const spec = fixtureSpec(t, 'asksForRoots.cjs', { serviceName: 'roots' });
  const { session } = await startService(t, spec);
  const direct = JSON.parse(textOf(await session.callTool('roots', {})));
  const expected = { declared: true, roots: [{ uri: pathToFileURL(spec.cwd).href, name: 'workspace' }] };
  assert.deepEqual(direct, expected);

  const client = await throughHttpFace(t, session);
  assert.deepEqual(JSON.parse(textOf(await client.callTool({ name: 'roots__roots', arguments: {} }))), expected);

  await session.close();
  await assertAllGone([session.pid]);
});

test('a handler that throws fails its call and three in a row rest the service; isError results do not count', async (t) => {
  const { session } = await startService(t, fixtureSpec(t, 'failsItsCalls.cjs', { serviceName: 'fails' }));
  const surface = createSurface([session], { restMs: 60_000 });
  for (let i = 0; i < 4; i++) assert.equal((await surface.callTool('fails__soft', {})).isError, true);
  assert.equal(surface.gateState('fails'), 'open');
  for (let i = 0; i < 2; i++) await assert.rejects(surface.callTool('fails__boom', {}), /boom on purpose/);
  assert.equal(surface.gateState('fails'), 'open');
  // An answer resets the count.
  assert.equal(textOf(await surface.callTool('fails__ok', {})), 'ok');
  for (let i = 0; i < 3; i++) await assert.rejects(surface.callTool('fails__boom', {}), /boom on purpose/);
  assert.equal(surface.gateState('fails'), 'resting');
  const resting = await surface.callTool('fails__ok', {});
  assert.equal((resting._meta?.[ERROR_META_KEY] as { code?: string } | undefined)?.code, 'service_resting');

  await session.close();
  await assertAllGone([session.pid]);
});

/** A remote (stateless Streamable HTTP) low-level server: 3 pages of tools, resources without templates/list. */
async function startPagingRemote(t: TestContext): Promise<string> {
  return serveStatelessMcp(t, () => {
    const server = new Server(
      { name: 'remote-pages', version: '1.0.0' },
      { capabilities: { tools: {}, resources: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const page = Number(request.params?.cursor ?? '1');
      const tools = [`r${page}a`, `r${page}b`].map((name) => ({ name, inputSchema: { type: 'object' as const } }));
      return { tools, ...(page < 3 ? { nextCursor: String(page + 1) } : {}) };
    });
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [] }));
    return server;
  });
}

test('a remote service is listed page by page, and its missing templates/list is counted empty', async (t) => {
  const url = await startPagingRemote(t);
  // With a workspace the client declares `roots`; connecting and listing are unchanged by it.
  const session = await connectRemoteService(
    { name: 'far', url, workspace: tmpdir() },
    { deadline: Date.now() + 10_000 },
  );
  t.after(() => session.close());
  assert.deepEqual(
    session.catalog.tools.map((tool) => tool.name),
    ['r1a', 'r1b', 'r2a', 'r2b', 'r3a', 'r3b'],
  );
  assert.deepEqual(session.catalog.missingLists, ['resources/templates/list']);
  const client = await throughHttpFace(t, session);
  assert.equal((await client.listTools()).tools.length, 6);
});

test('tool results are still checked against the listed output schema', async (t) => {
  const { session } = await startService(t, fixtureSpec(t, 'checksOutputSchema.cjs', { serviceName: 'schema' }));
  const good = await session.callTool('good', {});
  assert.deepEqual(good.structuredContent, { n: 1 });
  await assert.rejects(session.callTool('bad', {}), /Structured content does not match the tool's output schema/i);
  await session.close();
  await assertAllGone([session.pid]);
});
