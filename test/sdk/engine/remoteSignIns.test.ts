/**
 * `auth status` over what the token store holds: a sign-in whose expiry is outside the Date range (a
 * server's huge `expires_in`, an edited file) is shown without an expiry, never an `internal` RangeError.
 * `auth logout` against a revocation endpoint that never answers ends within the revocation bound; tokens
 * are posted only to an https (or loopback http) revocation endpoint.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  authLogout,
  authStatus,
  REVOKE_TIMEOUT_MS,
  revocationEndpointAllowed,
} from '../../../packages/sdk/src/engine/remoteSignIns.js';
import { tokenStoreFile } from '../../../packages/sdk/src/store/tokenStore.js';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.js';

const URL_OF_HUB = 'https://hub.example/mcp';

async function projectWithRemote(t: import('node:test').TestContext): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'se-sign-ins-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  await loadWorkflow({
    dataDir,
    project: 'demo',
    workflow: { agents: { main: { mcpServers: [{ name: 'hub', url: URL_OF_HUB }] } }, mcpDefinitions: {} },
  } as Parameters<typeof loadWorkflow>[0]);
  return dataDir;
}

test('auth status shows a sign-in whose expiry is outside the Date range without an expiry', async (t) => {
  const dataDir = await projectWithRemote(t);
  const store = tokenStoreFile(dataDir, 'demo', URL_OF_HUB);
  for (const expiresAt of [1e300, -1e300, 8.64e15 + 1]) {
    await store.withLock(() =>
      store.write({
        resource: URL_OF_HUB,
        tokens: { access_token: 'tok-1', token_type: 'Bearer' },
        expiresAt,
      }),
    );
    const [status, ...rest] = await authStatus({ dataDir, project: 'demo' });
    assert.equal(rest.length, 0);
    assert.ok(status !== undefined);
    assert.deepEqual(status.services, ['hub']);
    assert.equal(status.signedIn, true);
    assert.equal(status.expiresAt, undefined, String(expiresAt));
  }
  await store.withLock(() =>
    store.write({ resource: URL_OF_HUB, tokens: { access_token: 'tok-1', token_type: 'Bearer' }, expiresAt: 0 }),
  );
  assert.equal((await authStatus({ dataDir, project: 'demo' }))[0]?.expiresAt, '1970-01-01T00:00:00.000Z');
});

// Slow by design: it waits out the revocation bound (10 s) once, for both tokens together.
test('auth logout against a revocation endpoint that never answers ends within the bound and removes the tokens', {
  timeout: REVOKE_TIMEOUT_MS + 20_000,
}, async (t) => {
  const dataDir = await projectWithRemote(t);
  let posts = 0;
  const silent = createServer((req) => {
    posts += 1;
    req.resume(); // never answered
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        silent.closeAllConnections();
        silent.close(() => resolve());
      }),
  );
  const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/revoke`;
  const store = tokenStoreFile(dataDir, 'demo', URL_OF_HUB);
  await store.withLock(() =>
    store.write({
      resource: URL_OF_HUB,
      tokens: { access_token: 'tok-1', token_type: 'Bearer', refresh_token: 'ref-1' },
      discovery: {
        authorizationServerUrl: 'https://auth.example',
        authorizationServerMetadata: { revocation_endpoint: endpoint },
      },
    }),
  );
  const started = Date.now();
  const result = await authLogout({ dataDir, project: 'demo', service: 'hub' });
  const took = Date.now() - started;
  assert.deepEqual(result, { service: 'hub', removed: true, revoked: false });
  assert.ok(posts >= 1, 'the revocation endpoint was asked');
  assert.ok(took < REVOKE_TIMEOUT_MS + 5_000, `took ${took} ms`);
  assert.equal(await store.read(), undefined);
});

test('tokens are posted for revocation only to https, or http on a loopback host, without user information', () => {
  const table: Array<[string, boolean]> = [
    ['https://auth.example/revoke', true],
    ['https://auth.example:8443/oauth/revoke?x=1', true],
    ['http://127.0.0.1:9000/revoke', true],
    ['http://127.1.2.3/revoke', true],
    ['http://localhost:9000/revoke', true],
    ['http://[::1]:9000/revoke', true],
    ['http://auth.example/revoke', false],
    ['http://192.0.2.1/revoke', false],
    ['http://127.0.0.1.evil.example/revoke', false],
    ['https://user:pw@auth.example/revoke', false],
    ['ftp://auth.example/revoke', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
    ['', false],
  ];
  for (const [endpoint, allowed] of table) assert.equal(revocationEndpointAllowed(endpoint), allowed, endpoint);
});

test('auth logout does not post the tokens to a revocation endpoint over plain http off this machine', async (t) => {
  const dataDir = await projectWithRemote(t);
  const store = tokenStoreFile(dataDir, 'demo', URL_OF_HUB);
  await store.withLock(() =>
    store.write({
      resource: URL_OF_HUB,
      tokens: { access_token: 'tok-1', token_type: 'Bearer', refresh_token: 'ref-1' },
      discovery: {
        authorizationServerUrl: 'https://auth.example',
        // TEST-NET-1 (RFC 5737): nothing answers, so a post would wait out the whole revocation bound.
        authorizationServerMetadata: { revocation_endpoint: 'http://192.0.2.1/revoke' },
      },
    }),
  );
  const started = Date.now();
  const result = await authLogout({ dataDir, project: 'demo', service: 'hub' });
  const took = Date.now() - started;
  assert.deepEqual(result, { service: 'hub', removed: true, revoked: false });
  assert.ok(took < 2_000, `took ${took} ms: the tokens were sent`);
  assert.equal(await store.read(), undefined);
});
