import { request as httpRequest } from 'node:http';
/**
 * `scienceevolve gateway` end to end: supergateway in front of the lab service, checked by the CLI, used
 * with the official client; then stopped three ways — SIGTERM (orderly), SIGKILL of the gateway (its
 * supervisor collects), SIGKILL of supergateway itself (the gateway sweeps the orphaned service and exits
 * 1) — and each time nothing it started is left. Also: a launch command that is not an MCP server is
 * refused (an open port alone proves nothing).
 *
 * Slow (about 5 s a test on 2 cores): every test starts the CLI, a supervisor, supergateway and the service.
 */
import assert from 'node:assert/strict';
import { lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { parseMarker } from '@scienceevolve/supervisor/protocol';
import { assertGone, assertNothingLeft, BIN, LAB_SERVICE, spawnNode, type Spawned, tempDir } from './helpers.js';

interface Started {
  gateway: Spawned;
  doc: { url: string; pid: number; pgid: number; tools: string[] };
  logDir: string;
}

async function startLabGateway(t: TestContext): Promise<Started> {
  const logDir = tempDir(t, 'se-gateway-');
  const gateway = spawnNode(t, [
    BIN,
    'gateway',
    '--stdio',
    `${JSON.stringify(process.execPath)} ${JSON.stringify(LAB_SERVICE)}`,
    '--port',
    '0',
    '--log-dir',
    logDir,
    '--grace-ms',
    '300',
    '--json',
  ]);
  const doc = await gateway.json<Started['doc']>(60_000);
  // The safety net for supergateway (its own group) and its servers, should the test fail before its proofs.
  t.after(() => {
    try {
      process.kill(-doc.pgid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  return { gateway, doc, logDir };
}

/** Connects the official client and calls `whoami`: the service process behind the gateway. */
async function whoami(t: TestContext, url: string): Promise<{ client: Client; pid: number; marker: string }> {
  const client = new Client({ name: 'gateway-e2e', version: '1.0.0' }, { capabilities: {} });
  client.onerror = () => {};
  t.after(() => client.close().catch(() => {}));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  const text = (result.content as { type: string; text: string }[])[0]?.text ?? '{}';
  const who = JSON.parse(text) as { pid: number; marker: string };
  return { client, ...who };
}

test('gateway prints a checked endpoint; SIGTERM collects supergateway and its server', async (t) => {
  const { gateway, doc } = await startLabGateway(t);
  assert.match(doc.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  assert.equal(doc.pgid, doc.pid);
  assert.deepEqual([...doc.tools].sort(), ['echo', 'whoami']);
  // stderr is another pipe than the JSON's stdout: its line may arrive a moment later.
  const stderrDeadline = Date.now() + 10_000;
  while (!/called whoami/.test(gateway.stderr()) && Date.now() < stderrDeadline) await sleep(10);
  assert.match(gateway.stderr(), /called whoami/);

  const { client, pid, marker } = await whoami(t, doc.url);
  assert.equal(parseMarker(marker)?.projectId, 'gateway');
  assert.equal(parseMarker(marker)?.hostPid, gateway.pid);
  const echoed = await client.callTool({ name: 'echo', arguments: { text: 'through supergateway' } });
  assert.deepEqual(echoed.content, [{ type: 'text', text: 'echo: through supergateway' }]);

  // The loopback guard: a foreign Host or Origin is refused before supergateway sees the request, and it
  // listens on 127.0.0.1 only (no other address of this machine answers).
  const port = new URL(doc.url).port;
  for (const headers of [{ host: `evil.example:${port}` }, { origin: 'http://evil.example' }]) {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    assert.equal(status, 403, JSON.stringify(headers));
  }
  const listening = readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .filter(
      (line) => line.includes(`:${Number(port).toString(16).toUpperCase().padStart(4, '0')} `) && line.includes(' 0A '),
    );
  assert.ok(
    listening.length > 0 && listening.every((line) => line.trim().split(/\s+/)[1]?.startsWith('0100007F:')),
    listening.join('\n'),
  );

  gateway.child.kill('SIGTERM');
  assert.deepEqual(await gateway.exited, { code: 0, signal: null });
  await assertGone(doc.pid);
  await assertGone(pid);
  await assertNothingLeft({ marker });
});

test('a SIGKILLed gateway leaves nothing: its supervisor collects supergateway and its server', async (t) => {
  const { gateway, doc, logDir } = await startLabGateway(t);
  const { pid, marker } = await whoami(t, doc.url);

  gateway.child.kill('SIGKILL');
  assert.equal((await gateway.exited).signal, 'SIGKILL');
  await assertGone(doc.pid);
  await assertGone(pid);
  await assertNothingLeft({ marker });
  const port = new URL(doc.url).port;
  const log = readFileSync(join(logDir, `gateway-${port}.supervisor.log`), 'utf8');
  assert.match(log, new RegExp(`host ${gateway.pid} channel closed; 1 group\\(s\\), 1 marker\\(s\\)`));
});

test('a SIGKILLed supergateway: the gateway sweeps its orphaned server and exits 1', async (t) => {
  const { gateway, doc } = await startLabGateway(t);
  const { pid, marker } = await whoami(t, doc.url);

  // supergateway alone would orphan its server here: the server runs in a process group of its own.
  process.kill(doc.pid, 'SIGKILL');
  const { code } = await gateway.exited;
  assert.equal(code, 1);
  assert.match(gateway.stderr(), /error \[service_exited\]: supergateway exited on its own/);
  await assertGone(pid);
  await assertNothingLeft({ marker });
});

test('gateway refuses a launch command that is not an MCP server, and leaves nothing', async (t) => {
  const logDir = tempDir(t, 'se-gateway-');
  const gateway = spawnNode(t, [
    BIN,
    'gateway',
    '--stdio',
    // Prints a line that is not JSON-RPC and exits: supergateway still listens, and still answers HTTP.
    `${JSON.stringify(process.execPath)} -e "console.log('hello, I am not an MCP server')"`,
    '--port',
    '0',
    '--log-dir',
    logDir,
    '--grace-ms',
    '300',
  ]);
  const { code } = await gateway.exited;
  assert.equal(code, 1, gateway.stderr());
  assert.equal(gateway.stdout(), '', 'no endpoint is printed');
  assert.match(
    gateway.stderr(),
    /error \[initialize_failed\]: the gateway at http:\/\/127\.0\.0\.1:\d+\/mcp failed the initialize check/,
  );
  assert.match(gateway.stderr(), /fix: /);
  await assertNothingLeft({ dir: logDir });
});

test('a symlink planted at the gateway log path is replaced, never followed: its target is untouched', async (t) => {
  const logDir = tempDir(t, 'se-gateway-');
  const elsewhere = tempDir(t, 'se-gateway-target-');
  const target = join(elsewhere, 'precious.txt');
  writeFileSync(target, 'the user file\n');
  // A free port, known before the gateway starts, so the link can be planted at its log path.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = server.address() as AddressInfo;
      server.close(() => resolve(p));
    });
  });
  const logPath = join(logDir, `gateway-${port}.log`);
  symlinkSync(target, logPath);
  const gateway = spawnNode(t, [
    BIN,
    'gateway',
    '--stdio',
    `${JSON.stringify(process.execPath)} ${JSON.stringify(LAB_SERVICE)}`,
    '--port',
    String(port),
    '--log-dir',
    logDir,
    '--grace-ms',
    '300',
    '--json',
  ]);
  const doc = await gateway.json<Started['doc']>(60_000);
  t.after(() => {
    try {
      process.kill(-doc.pgid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  assert.equal(readFileSync(target, 'utf8'), 'the user file\n', 'the target was neither truncated nor written');
  const log = lstatSync(logPath);
  assert.ok(log.isFile(), 'the log is a regular file of its own');
  assert.equal(log.mode & 0o777, 0o600);
  gateway.child.kill('SIGTERM');
  assert.deepEqual(await gateway.exited, { code: 0, signal: null });
  await assertGone(doc.pid);
  await assertNothingLeft({ dir: logDir });
  assert.equal(readFileSync(target, 'utf8'), 'the user file\n');
});
