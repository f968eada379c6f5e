/**
 * A remote service behind a real OAuth 2.1 authorization server (the v1 SDK's `mcpAuthRouter`, in
 * test/fixtures/e2e/oauthRemote.cjs): a full `auth login` whose browser is a script that follows the
 * redirect to the loopback port; a probe and a run that use the token; an expired token refreshed, by two
 * processes at once, with one refresh and no new login; a revoked sign-in (`remote_auth_failed`); logout
 * revoking at the server. Afterwards a header secret and the access token are found in no data-dir file but
 * the token store, in no event, log, error, `--json` output, and on no process's command line.
 * Slow (several CLI processes, seconds each): 120 s.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { BIN, ROOT, type Spawned, spawnNode, tempDir } from './helpers.js';

const FIXTURE = join(ROOT, 'test/fixtures/e2e/oauthRemote.cjs');
const BROWSER = join(ROOT, 'scripts/conformance-browser.mjs');
const HEADER_SECRET = 'papers-key-7f3a9c21e5d84b06';
const CLIENT_SECRET = 'client-secret-0b5e61c9a2d7443f';

/** Runs the CLI to its end with `env`; resolves with exit code, output and parsed JSON. */
async function cli(t: TestContext, args: string[], env: NodeJS.ProcessEnv, outputs: string[]) {
  const run = spawnNode(t, [BIN, ...args], { env });
  const { code } = await run.exited;
  outputs.push(run.stdout(), run.stderr());
  let json: unknown;
  try {
    json = JSON.parse(run.stdout());
  } catch {
    json = undefined;
  }
  return { code, stdout: run.stdout(), stderr: run.stderr(), json: json as Record<string, unknown> };
}

/** Every file under `dir`. */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const info = statSync(path);
    if (info.isDirectory()) found.push(...filesUnder(path));
    else if (info.isFile()) found.push(path);
  }
  return found;
}

/** The command lines of every process now (those we may read). */
function allCommandLines(): string[] {
  const lines: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      lines.push(readFileSync(`/proc/${entry}/cmdline`, 'utf8'));
    } catch {
      // gone meanwhile
    }
  }
  return lines;
}

/** A loopback port free just now (for a pre-registered client's fixed redirect). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function stats(base: string): Promise<Record<string, number>> {
  return (await (await fetch(`${base}/control/stats`)).json()) as Record<string, number>;
}

test('auth login, a probe and a run with the token, refresh under a lock, revocation, no secret anywhere', {
  timeout: 120_000,
}, async (t) => {
  const box = tempDir(t, 'se-remote-auth-');
  const dataDir = join(box, 'data');
  const workspace = join(box, 'ws');
  const outputs: string[] = [];
  const ciPort = await freePort();
  const server: Spawned = spawnNode(t, [FIXTURE], {
    env: {
      ...process.env,
      X_HEADERS: 'x-api-key',
      PREREGISTERED_ID: 'lab-ci',
      PREREGISTERED_SECRET: CLIENT_SECRET,
      PREREGISTERED_REDIRECT: `http://127.0.0.1:${ciPort}/callback`,
    },
  });
  t.after(() => {
    server.child.kill('SIGTERM');
  });
  const { url, base } = await server.json<{ url: string; base: string }>();
  const workflow = join(box, 'workflow.json');
  writeFileSync(
    workflow,
    JSON.stringify({
      agents: {
        main: {
          mcpServers: [{ name: 'papers', url, headers: { 'X-Api-Key': ['$', '{PAPERS_KEY}'].join('') } }],
        },
        ci: {
          mcpServers: [
            {
              name: 'papers-ci',
              url: `${url}?via=ci`,
              oauth: { clientId: 'lab-ci', clientSecretEnv: 'PAPERS_CLIENT_SECRET' },
            },
          ],
        },
      },
      mcpDefinitions: {},
    }),
  );
  const env = { ...process.env, PAPERS_KEY: HEADER_SECRET, PAPERS_CLIENT_SECRET: CLIENT_SECRET, BROWSER };
  const place = ['--data-dir', dataDir, '--project', 'p1'];
  assert.equal((await cli(t, ['workflow', 'load', workflow, ...place, '--json'], env, outputs)).code, 0);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(workspace);
  const probe = ['services', 'probe', ...place, '--workspace', workspace, '--agent', 'main', '--json'];

  // Before a sign-in: remote_auth_required, its fix the exact command.
  const before = await cli(t, probe, env, outputs);
  assert.equal(before.code, 1);
  const beforeError = (before.json.services as Array<{ error: { code: string; message: string } }>)[0]!.error;
  assert.equal(beforeError.code, 'remote_auth_required', beforeError.message);
  assert.match(
    before.stdout + before.stderr,
    new RegExp(`auth login --data-dir ${dataDir} --project p1 --service papers`),
  );

  // auth login: the scripted browser follows the redirect to the loopback port.
  const login = await cli(t, ['auth', 'login', ...place, '--service', 'papers', '--json'], env, outputs);
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stderr, /Open this URL to sign in: http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
  assert.equal(login.json.signedIn, true);
  assert.equal(login.json.refreshable, true);
  const storePath = login.json.path as string;
  assert.equal(statSync(storePath).mode & 0o777, 0o600);
  const accessToken = (JSON.parse(readFileSync(storePath, 'utf8')) as { tokens: { access_token: string } }).tokens
    .access_token;
  assert.ok(accessToken.length > 10);

  // A probe uses the token (and sends the header).
  const ready = await cli(t, probe, env, outputs);
  assert.equal(ready.code, 0, ready.stderr);
  assert.deepEqual((ready.json.services as Array<{ tools: unknown[] }>)[0]!.tools, ['whoami']);
  assert.ok(((await stats(base)).headerSeen ?? 0) > 0, 'the X-Api-Key header reached the service');

  // A login that does not complete (the browser never follows the redirect) keeps the held sign-in.
  const heldRecord = readFileSync(storePath, 'utf8');
  const stalled = await cli(
    t,
    ['auth', 'login', ...place, '--service', 'papers', '--timeout-ms', '1500'],
    { ...env, BROWSER: '/bin/true' },
    outputs,
  );
  assert.equal(stalled.code, 1, stalled.stdout + stalled.stderr);
  assert.match(stalled.stderr, /remote_auth_required/);
  assert.equal(readFileSync(storePath, 'utf8'), heldRecord, 'the held sign-in is as it was');
  assert.equal((await cli(t, probe, env, outputs)).code, 0, 'and still works');
  // A login that does not complete while another one completes (here: a newer record stored while this one
  // waits for its redirect) leaves the newer sign-in, never puts the older one back over it.
  const newer = heldRecord.replace(accessToken, `${accessToken}-newer`);
  const newerFile = join(box, 'newer.json');
  writeFileSync(newerFile, newer, { mode: 0o600 });
  const storeNewer = join(box, 'store-newer.sh');
  writeFileSync(
    storeNewer,
    `#!/bin/sh\numask 077\ncp '${newerFile}' '${storePath}.newer' && mv '${storePath}.newer' '${storePath}'\n`,
    { mode: 0o700 },
  );
  const overtaken = await cli(
    t,
    ['auth', 'login', ...place, '--service', 'papers', '--timeout-ms', '1500'],
    { ...env, BROWSER: storeNewer },
    outputs,
  );
  assert.equal(overtaken.code, 1, overtaken.stdout + overtaken.stderr);
  assert.equal(readFileSync(storePath, 'utf8'), newer, 'the sign-in stored meanwhile is kept');
  writeFileSync(storePath, heldRecord, { mode: 0o600 });

  // A run whose scripted Main calls the remote tool.
  const script = join(box, 'script.json');
  writeFileSync(
    script,
    JSON.stringify({ agents: { main: [{ call: 'papers__whoami', arguments: {} }, { final: '{{0}}' }] } }),
  );
  const run = await cli(
    t,
    ['run', ...place, '--workflow', workflow, '--workspace', workspace, '--script', script, '--json', 'who am i'],
    env,
    outputs,
  );
  assert.equal(run.code, 0, run.stderr);
  assert.match(String(run.json.output), /^client /);

  // Expired on the server: two processes at once; one refresh, both ready, no new login.
  await fetch(`${base}/control/expire`, { method: 'POST' });
  const granted = (await stats(base)).codeGrants;
  const both = await Promise.all([cli(t, probe, env, outputs), cli(t, probe, env, outputs)]);
  for (const one of both) assert.equal(one.code, 0, one.stdout + one.stderr);
  const afterRefresh = await stats(base);
  assert.equal(afterRefresh.refreshGrants, 1, JSON.stringify(afterRefresh));
  assert.equal(afterRefresh.refusedRefreshes, 0);
  assert.equal(afterRefresh.codeGrants, granted, 'no new login');

  // While a probe holds its services: no secret on any command line.
  const refreshed = (JSON.parse(readFileSync(storePath, 'utf8')) as { tokens: { access_token: string } }).tokens
    .access_token;
  const holding = spawnNode(t, [BIN, ...probe, '--hold-ms', '5000'], { env });
  await holding.json(60_000);
  for (const line of allCommandLines()) {
    for (const secret of [HEADER_SECRET, accessToken, refreshed]) assert.ok(!line.includes(secret), line);
  }
  holding.child.kill('SIGTERM');
  await holding.exited;
  outputs.push(holding.stdout(), holding.stderr());

  // Revoked at the server: the refresh is refused, remote_auth_failed naming the login.
  await fetch(`${base}/control/revoke`, { method: 'POST' });
  const refused = await cli(t, probe, env, outputs);
  assert.equal(refused.code, 1);
  const refusedError = (refused.json.services as Array<{ error: { code: string; message: string } }>)[0]!.error;
  assert.equal(refusedError.code, 'remote_auth_failed', refusedError.message);

  // A pre-registered confidential client (its secret from a host variable): login and a probe.
  const ciLogin = await cli(
    t,
    ['auth', 'login', ...place, '--service', 'papers-ci', '--port', String(ciPort), '--json'],
    env,
    outputs,
  );
  assert.equal(ciLogin.code, 0, ciLogin.stderr);
  const ciProbe = await cli(t, [...probe.slice(0, -3), '--agent', 'ci', '--json'], env, outputs);
  assert.equal(ciProbe.code, 0, ciProbe.stdout + ciProbe.stderr);
  const ciStore = ciLogin.json.path as string;
  const ciToken = (JSON.parse(readFileSync(ciStore, 'utf8')) as { tokens: { access_token: string } }).tokens
    .access_token;
  assert.ok(!readFileSync(ciStore, 'utf8').includes(CLIENT_SECRET), 'a configured client secret is never stored');

  // Sign in again, then log out: revoked at the server, removed here.
  assert.equal((await cli(t, ['auth', 'login', ...place, '--service', 'papers'], env, outputs)).code, 0);
  const status = await cli(t, ['auth', 'status', ...place, '--json'], env, outputs);
  const held = status.json.signIns as Array<{ services: string[]; signedIn: boolean }>;
  assert.deepEqual(held.map((s) => [s.services, s.signedIn]).sort(), [
    [['papers'], true],
    [['papers-ci'], true],
  ]);
  const latest = (JSON.parse(readFileSync(storePath, 'utf8')) as { tokens: { access_token: string } }).tokens
    .access_token;
  const logout = await cli(t, ['auth', 'logout', ...place, '--service', 'papers', '--json'], env, outputs);
  assert.deepEqual(logout.json, { service: 'papers', removed: true, revoked: true });
  assert.ok(((await stats(base)).revoked ?? 0) >= 1);

  // The grep: no secret in any data-dir file but the token store, in any output, event or log.
  const secrets = [HEADER_SECRET, CLIENT_SECRET, accessToken, refreshed, latest, ciToken];
  for (const file of filesUnder(dataDir)) {
    if (file === ciStore) continue;
    const text = readFileSync(file, 'latin1');
    for (const secret of secrets) assert.ok(!text.includes(secret), `${file} holds a secret`);
  }
  for (const output of outputs) {
    for (const secret of secrets) assert.ok(!output.includes(secret), `an output holds a secret:\n${output}`);
  }
});
