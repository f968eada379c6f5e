/**
 * `gateway` and the command line (security finding 3's audit): the launch command is on the gateway's,
 * supergateway's and its shell's command lines, which every user of the machine can read. A secret the
 * server needs goes in the gateway's environment instead, which supergateway and the server inherit: here
 * a real gateway with a secret in its environment, and while it serves, no process of its tree (the CLI,
 * its supervisor, supergateway, the shell, the server) shows the secret on its command line, while the
 * server's own environment holds it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { processTree } from '../fixtures/cmdlines.js';
import { assertGone, assertNothingLeft, BIN, LAB_SERVICE, spawnNode, tempDir } from '../e2e/helpers.js';

const SECRET = 'GatewayEnvSecret-77';

test('a secret given to the gateway by its environment reaches the server and is on no command line', async (t) => {
  const logDir = tempDir(t, 'se-gateway-argv-');
  const gateway = spawnNode(
    t,
    [
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
    ],
    { env: { ...process.env, LAB_API_TOKEN: SECRET } },
  );
  const deadline = Date.now() + 60_000;
  while (!/gateway ready/.test(gateway.stderr()) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.match(gateway.stderr(), /gateway ready: /, gateway.stderr());
  const pid = Number(/supergateway pid (\d+)/.exec(gateway.stderr())?.[1]);
  t.after(() => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  // A session of our own: supergateway (stateful) keeps its server process while it is open.
  const url = gateway.stdout().trim();
  const client = new Client({ name: 'gateway-argv-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  t.after(() => client.close());
  assert.ok((await client.listTools()).tools.length > 0);
  const tree = processTree(gateway.pid);
  const server = tree.find((p) => p.cmdline.includes(LAB_SERVICE) && !p.cmdline.includes('supergateway'));
  assert.ok(
    tree.some((p) => p.pid === pid),
    'supergateway is in the tree',
  );
  for (const p of tree) assert.equal(p.cmdline.includes(SECRET), false, `pid ${p.pid} shows it: ${p.cmdline}`);
  if (server !== undefined) assert.ok(server.environ?.includes(`LAB_API_TOKEN=${SECRET}`), 'the server inherited it');
  else assert.fail(`no server process under the gateway: ${tree.map((p) => p.cmdline).join('\n')}`);

  await client.close();
  gateway.child.kill('SIGTERM');
  assert.deepEqual(await gateway.exited, { code: 0, signal: null });
  await assertGone(pid);
  await assertNothingLeft({ dir: logDir });
});
