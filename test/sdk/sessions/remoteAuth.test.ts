/**
 * A remote that refuses us: HTTP 401 is `remote_auth_required` (never `remote_unreachable`) whose fix is the
 * exact `auth login` command; a header from a host variable is read when connecting (`missing_env` names the
 * variable) and a refusal names the variable, never its value; a workflow may not carry a literal header value.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { PassThrough } from 'node:stream';
import { httpToStdio } from '../../../packages/sdk/src/gateway/httpToStdio.js';
import { remoteCredentials, storedSignIn } from '../../../packages/sdk/src/invocation/remoteCredentials.js';
import { connectRemoteService } from '../../../packages/sdk/src/sessions/remoteService.js';
import { validateWorkflow } from '../../../packages/sdk/src/workflow/validate.js';

/** `${name}` as a header template writes it (built, so no string here looks like a JS template). */
const ref = (name: string) => ['$', '{', name, '}'].join('');

/** A server that answers every request 401 with a Bearer challenge, recording the headers it saw. */
async function refusingServer(t: import('node:test').TestContext) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'text/plain' });
    res.end('no');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

function scratch(t: import('node:test').TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'se-remote-auth-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a 401 without a sign-in is remote_auth_required naming the exact auth login command', async (t) => {
  const { url } = await refusingServer(t);
  const dataDir = scratch(t);
  const credentials = remoteCredentials({ name: 'papers', url }, { dataDir, projectId: 'demo', hostEnv: {} });
  const error = await connectRemoteService({ name: 'papers', url, ...credentials }).then(
    () => assert.fail('connected'),
    (e: unknown) => e as { code: string; message: string; remedy: string },
  );
  assert.equal(error.code, 'remote_auth_required', error.message);
  assert.equal(error.remedy, `sign in: scienceevolve auth login --data-dir ${dataDir} --project demo --service papers`);
});

test('a header from a host variable: missing is missing_env; refused is remote_auth_required naming the variable only', async (t) => {
  const { url, seen } = await refusingServer(t);
  const dataDir = scratch(t);
  const entry = { name: 'hub', url, headers: { Authorization: `Bearer ${ref('HUB_TOKEN')}` } };
  assert.throws(
    () => remoteCredentials(entry, { dataDir, projectId: 'demo', hostEnv: {} }),
    (e: { code?: string; message?: string }) => e.code === 'missing_env' && /HUB_TOKEN/.test(e.message ?? ''),
  );
  const secret = 'hub-secret-value-0123456789';
  const credentials = remoteCredentials(entry, { dataDir, projectId: 'demo', hostEnv: { HUB_TOKEN: secret } });
  const error = await connectRemoteService({ name: 'hub', url, ...credentials }).then(
    () => assert.fail('connected'),
    (e: { code: string; message: string; remedy: string; data: unknown }) => e,
  );
  assert.equal(error.code, 'remote_auth_required', error.message);
  assert.match(error.message, /HUB_TOKEN/);
  assert.ok(
    seen.some((h) => h.authorization === `Bearer ${secret}`),
    'the header reached the server',
  );
  const shown = JSON.stringify({ message: error.message, remedy: error.remedy, data: error.data });
  assert.ok(!shown.includes(secret), shown);
  // Nothing was written to the data dir: static headers are never stored.
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.push(path);
    }
  };
  walk(dataDir);
  for (const file of files) assert.ok(!readFileSync(file, 'utf8').includes(secret), file);
});

test('a workflow header value must name a host variable; literal values and transport headers are refused', () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ Authorization: 'Bearer abc123' }, /must name a host variable/],
    [{ Authorization: `Bearer ${ref('A')} ${ref('B')}` }, /must name a host variable/],
    [{ 'Mcp-Session-Id': ref('X') }, /set by the MCP transport/],
    [{ 'Bad Header': ref('X') }, /HTTP header name/],
  ];
  for (const [headers, message] of cases) {
    const result = validateWorkflow({
      agents: { main: { mcpServers: [{ name: 'hub', url: 'https://hub.example/mcp', headers }] } },
      mcpDefinitions: {},
    });
    assert.equal(result.ok, false, JSON.stringify(headers));
    assert.ok(!result.ok && result.errors.some((e) => message.test(e.message)), JSON.stringify(result));
  }
  const ok = validateWorkflow({
    agents: {
      main: {
        mcpServers: [
          { name: 'hub', url: 'https://hub.example/mcp', headers: { Authorization: `Bearer ${ref('HUB_TOKEN')}` } },
        ],
      },
    },
    mcpDefinitions: {},
  });
  assert.equal(ok.ok, true, JSON.stringify(ok));
});

test('bridge http-to-stdio: a 401 is remote_auth_required, with or without a stored sign-in', async (t) => {
  const { url } = await refusingServer(t);
  const dataDir = scratch(t);
  for (const signIn of [undefined, storedSignIn({ dataDir, project: 'demo', url })]) {
    const error = await httpToStdio({
      url,
      input: new PassThrough(),
      output: new PassThrough(),
      connectTimeoutMs: 10_000,
      ...(signIn === undefined ? {} : { signIn }),
    }).then(
      async (bridge) => {
        await bridge.close();
        return assert.fail('connected');
      },
      (e: { code: string; message: string }) => e,
    );
    assert.equal(error.code, 'remote_auth_required', error.message);
    assert.match(error.message, /auth login/);
  }
});

test('a stored token that cannot be renewed is used until it expires, not refused in its last minute', async () => {
  const { RemoteSignIn, REFRESH_AHEAD_MS } = await import('../../../packages/sdk/src/sessions/remoteAuth.js');
  let record: unknown = {
    resource: 'https://hub.example/mcp',
    tokens: { access_token: 'tok-short', token_type: 'Bearer' },
    expiresAt: Date.now() + REFRESH_AHEAD_MS / 2,
  };
  const store = {
    path: '/nowhere/sign-in.json',
    read: async () => record,
    write: async (next: unknown) => {
      record = next;
    },
    remove: async () => {
      record = undefined;
    },
    withLock: <T>(fn: () => Promise<T>) => fn(),
  };
  const signIn = new RemoteSignIn({
    url: 'https://hub.example/mcp',
    service: 'hub',
    store,
    loginCommand: 'scienceevolve auth login --data-dir D --project P --service hub',
  });
  // No refresh token, no client credentials, no person: nothing could renew it, so it is sent as it is.
  assert.equal(await signIn.token(), 'tok-short');
});
