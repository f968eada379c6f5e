/**
 * Remote services against a real Streamable HTTP MCP server (SDK v1, stateless) started here on
 * 127.0.0.1: connected and listed like a project service, calls with headers and timeouts, close that only
 * closes our client, and `remote_unreachable` for a URL nobody answers.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type TestContext, test } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { isSdkError } from '../../../packages/sdk/src/errors.js';
import { connectRemoteService } from '../../../packages/sdk/src/sessions/remoteService.js';
import type { ServiceEvent } from '../../../packages/sdk/src/sessions/serviceEvents.js';
import { serveStatelessMcp } from '../../fixtures/remote/statelessServer.js';
import { eventTypes, states } from './helpers.js';

/** A stateless MCP server on 127.0.0.1:<random>/mcp; `seen` collects the Authorization headers. */
async function startHttpServer(t: TestContext): Promise<{ url: string; seen: (string | undefined)[] }> {
  const seen: (string | undefined)[] = [];
  const admit = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') {
      res.writeHead(404).end('not here');
      return false;
    }
    seen.push(req.headers.authorization);
    return true;
  };
  const url = await serveStatelessMcp(
    t,
    () => {
      const server = new McpServer({ name: 'remote-fixture', version: '1.0.0' });
      server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
        content: [{ type: 'text', text }],
      }));
      server.registerTool('sleep', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
        await new Promise((r) => setTimeout(r, ms));
        return { content: [{ type: 'text', text: 'slept' }] };
      });
      server.registerPrompt('greet', { argsSchema: { who: z.string() } }, ({ who }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Hello ${who}` } }],
      }));
      return server;
    },
    admit,
  );
  return { url, seen };
}

test('a remote service is connected, listed, called with its headers, and close only closes the client', async (t) => {
  const { url, seen } = await startHttpServer(t);
  const events: ServiceEvent[] = [];
  const session = await connectRemoteService(
    {
      name: 'materials',
      aliases: ['materials', 'mats'],
      url: `${url}?token=q`,
      headers: { Authorization: 'Bearer abc' },
    },
    { deadline: Date.now() + 10_000, onEvent: (e) => events.push(e) },
  );
  t.after(() => session.close());
  assert.equal(session.kind, 'remote');
  assert.equal(session.state, 'ready');
  assert.deepEqual(session.aliases, ['materials', 'mats']);
  assert.equal(session.url, `${url}?token=REDACTED`, 'query values (credentials) are not kept for reporting');
  assert.deepEqual(session.catalog.tools.map((x) => x.name).sort(), ['echo', 'sleep']);
  assert.deepEqual(
    session.catalog.prompts.map((p) => p.name),
    ['greet'],
  );
  assert.deepEqual(session.catalog.resources, []);
  assert.ok(session.catalog.protocolVersion);

  const echo = await session.callTool('echo', { text: 'over http' });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'over http' }]);
  const prompt = await session.getPrompt('greet', { who: 'Grace' });
  assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'Hello Grace' });
  assert.ok(seen.length > 0 && seen.every((h) => h === 'Bearer abc'), 'every request carried the header');

  await assert.rejects(session.callTool('sleep', { ms: 2000 }, { timeoutMs: 150 }), (error) => {
    assert.ok(isSdkError(error));
    assert.equal(error.code, 'forward_timeout');
    return true;
  });

  await session.close();
  assert.equal(session.state, 'exited');
  assert.deepEqual(states(events), ['initializing', 'listing', 'ready', 'stopping', 'exited']);
  assert.deepEqual(eventTypes(events), ['service.ready', 'service.exited']);
  assert.ok(!JSON.stringify(events).includes('Bearer'), 'events never carry header values');
  assert.ok(!JSON.stringify(events).includes('token=q'));
});

test('a URL with a password or a query token: neither appears in the error or the failed event', async (t) => {
  const { url } = await startHttpServer(t);
  const closed = url.replace(/:\d+\//, ':1/');
  const events: ServiceEvent[] = [];
  const withPassword = closed.replace('http://', 'http://me:pw-s3cret@');
  const withToken = `${closed}?token=tok-s3cret`;
  for (const [given, code] of [
    [withPassword, 'invalid_workflow'],
    [withToken, 'remote_unreachable'],
  ] as const) {
    await assert.rejects(
      connectRemoteService({ name: 'r', url: given }, { deadline: Date.now() + 5000, onEvent: (e) => events.push(e) }),
      (error) => {
        assert.ok(isSdkError(error));
        assert.equal(error.code, code);
        assert.doesNotMatch(JSON.stringify({ message: error.message, data: error.data }), /s3cret/);
        return true;
      },
    );
  }
  assert.equal(events.filter((e) => e.type === 'service.failed').length, 2);
  assert.doesNotMatch(JSON.stringify(events), /s3cret/);
});

test('an unreachable URL fails with remote_unreachable', async (t) => {
  const { url } = await startHttpServer(t);
  const closed = url.replace(/:\d+\//, ':1/');
  await assert.rejects(
    connectRemoteService({ name: 'gone', url: closed }, { deadline: Date.now() + 5000 }),
    (error) => {
      assert.ok(isSdkError(error));
      assert.equal(error.code, 'remote_unreachable');
      assert.match(error.message, /remote service "gone" could not be reached/);
      assert.equal(error.data.url, closed);
      return true;
    },
  );
  const wrongPath = url.replace(/\/mcp$/, '/sse');
  await assert.rejects(
    connectRemoteService({ name: 'wrong', url: wrongPath }, { deadline: Date.now() + 5000 }),
    (error) => {
      assert.ok(isSdkError(error));
      assert.equal(error.code, 'remote_unreachable');
      return true;
    },
  );
});
