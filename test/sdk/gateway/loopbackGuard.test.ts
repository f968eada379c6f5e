/**
 * Issue 13, item 8 (the gateway part): the gateway's guard (loopbackGuard.ts, loaded into supergateway's
 * process) and the HTTP face apply one Host/Origin rule (loopbackRule.ts). `Origin:
 * chrome-extension://localhost`, which the HTTP face refused and the gateway accepted, is refused by both.
 * The guard is tested in a real Node process that imports it as the gateway does, in front of a plain
 * http server that answers 200 to whatever reaches it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loopbackHostAllowed, loopbackOriginAllowed } from '../../../packages/sdk/src/faces/loopbackRule.ts';
import { assertGone } from '../../fixtures/store/children.js';

const GUARD = fileURLToPath(new URL('../../../packages/sdk/dist/gateway/loopbackGuard.js', import.meta.url));

/** Headers → whether the rule lets the request through, for an endpoint on `port`. */
function cases(port: number): Array<{ headers: Record<string, string>; allowed: boolean }> {
  return [
    { headers: { host: `127.0.0.1:${port}` }, allowed: true },
    { headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` }, allowed: true },
    { headers: { host: `127.0.0.1:${port}`, origin: 'https://127.0.0.1' }, allowed: true },
    { headers: { host: `[::1]:${port}`, origin: 'http://[::1]:3000' }, allowed: true },
    // The reproduction, and its relatives: a loopback host name under a scheme no browser page has.
    { headers: { host: `127.0.0.1:${port}`, origin: 'chrome-extension://localhost' }, allowed: false },
    { headers: { host: `127.0.0.1:${port}`, origin: 'moz-extension://127.0.0.1' }, allowed: false },
    { headers: { host: `127.0.0.1:${port}`, origin: 'file://localhost' }, allowed: false },
    { headers: { host: `127.0.0.1:${port}`, origin: 'null' }, allowed: false },
    { headers: { host: `127.0.0.1:${port}`, origin: 'http://localhost.evil.example' }, allowed: false },
    { headers: { host: `evil.example:${port}` }, allowed: false },
    { headers: { host: `localhost.evil.example:${port}` }, allowed: false },
    // Another port than the endpoint's: a rebinding page on another loopback service's origin.
    { headers: { host: `127.0.0.1:${port === 1 ? 2 : 1}` }, allowed: false },
    { headers: { host: `LOCALHOST.:${port}` }, allowed: false },
  ];
}

test('the rule: loopback Host with this port, and an http(s) loopback Origin or none', () => {
  for (const c of cases(8000)) {
    const allowed = loopbackHostAllowed(c.headers.host, 8000) && loopbackOriginAllowed(c.headers.origin);
    assert.equal(allowed, c.allowed, JSON.stringify(c.headers));
  }
});

test('the gateway guard refuses exactly what the HTTP face refuses (chrome-extension://localhost included)', async (t) => {
  const server = [
    "const http = require('node:http');",
    "const s = http.createServer((req, res) => res.end('reached'));",
    's.listen(0, () => console.log(s.address().port));',
    "process.stdin.on('end', () => process.exit(0)).resume();",
  ].join('\n');
  const child = spawn(process.execPath, ['--import', pathToFileURL(GUARD).href, '-e', server], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  assert.ok(child.pid !== undefined);
  const pid = child.pid;
  t.after(async () => {
    child.kill('SIGKILL');
    await assertGone(pid);
  });
  const lines = createInterface({ input: child.stdout });
  const port = Number(await new Promise<string>((resolve) => lines.once('line', resolve)));
  assert.ok(port > 0);
  for (const c of cases(port)) {
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: c.headers }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end('{}');
    });
    assert.equal(status, c.allowed ? 200 : 403, JSON.stringify(c.headers));
  }
  child.stdin?.end();
});
