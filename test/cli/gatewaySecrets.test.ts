/**
 * `gateway --stdio` with secrets in its launch command — a token flag, a URL with user information and a
 * query, a secret-named variable, an Authorization header argument — shows none of them: not in the ready
 * line, not in an error, not in the gateway's log (supergateway writes the command there as given, and
 * the stdio server's stderr, which may repeat its arguments). The redacted forms are shown instead. Real
 * supergateway and a real service; a few seconds a test.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { assertGone, assertNothingLeft, BIN, LAB_SERVICE, spawnNode, tempDir } from '../e2e/helpers.js';

const SECRETS = ['s3cr3t-flag-value', 'userinfo-pw', 'query-secret', 'env-secret-value', 'header-secret-value'];
const ARGS =
  '--token s3cr3t-flag-value https://someone:userinfo-pw@example.invalid/mcp?key=query-secret ' +
  '-H "Authorization: Bearer header-secret-value"';

/** Every file of `dir` and the CLI's output, checked for each secret. */
function assertNoSecret(dir: string, outputs: string[]): void {
  const texts = [...outputs, ...readdirSync(dir).map((name) => readFileSync(join(dir, name), 'utf8'))];
  for (const text of texts)
    for (const secret of SECRETS) assert.ok(!text.includes(secret), `${secret} shown in:\n${text}`);
}

test('a ready gateway: the launch command is shown and logged with its secrets redacted', async (t) => {
  const logDir = tempDir(t, 'se-gateway-secrets-');
  const command = `API_TOKEN=env-secret-value ${JSON.stringify(process.execPath)} ${JSON.stringify(LAB_SERVICE)} ${ARGS}`;
  const gateway = spawnNode(t, [
    BIN,
    'gateway',
    '--stdio',
    command,
    '--port',
    '0',
    '--log-dir',
    logDir,
    '--grace-ms',
    '300',
  ]);
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
  assert.match(gateway.stderr(), /API_TOKEN=REDACTED /);
  assert.match(gateway.stderr(), /--token REDACTED https:\/\/example\.invalid\/mcp\?key=REDACTED/);
  gateway.child.kill('SIGTERM');
  assert.deepEqual(await gateway.exited, { code: 0, signal: null });
  await assertGone(pid);
  await assertNothingLeft({ dir: logDir });

  const log = readFileSync(join(logDir, readdirSync(logDir).find((n) => /^gateway-\d+\.log$/.test(n))!), 'utf8');
  // supergateway's own line naming the command is there, redacted.
  assert.match(log, /stdio: API_TOKEN=REDACTED .*--token REDACTED https:\/\/example\.invalid\/mcp\?key=REDACTED/);
  assertNoSecret(logDir, [gateway.stdout(), gateway.stderr()]);
});

/**
 * Runs `gateway --stdio <command>` for a server that never answers as MCP: the gateway fails (exit 1).
 * Resolves with the gateway's log, once nothing of it is left; every output is checked for each secret.
 */
async function failedGateway(t: TestContext, command: string): Promise<string> {
  const logDir = tempDir(t, 'se-gateway-secrets-');
  const gateway = spawnNode(t, [
    BIN,
    'gateway',
    '--stdio',
    command,
    '--port',
    '0',
    '--log-dir',
    logDir,
    '--grace-ms',
    '300',
    '--ready-timeout-ms',
    '15000',
    '--json',
  ]);
  const { code } = await gateway.exited;
  assert.equal(code, 1, gateway.stderr());
  await assertNothingLeft({ dir: logDir });
  assertNoSecret(logDir, [gateway.stdout(), gateway.stderr()]);
  return readFileSync(join(logDir, readdirSync(logDir).find((n) => /^gateway-\d+\.log$/.test(n))!), 'utf8');
}

test('a failed gateway: the error and the log show no secret of the launch command', async (t) => {
  // Not an MCP server: repeats its arguments on stderr (copied into the log) and prints a line that is not JSON-RPC.
  const script = "console.error('args: ' + process.argv.slice(1).join(' ')); console.log('not an MCP server')";
  const command = `API_TOKEN=env-secret-value ${JSON.stringify(process.execPath)} -e ${JSON.stringify(script)} -- ${ARGS}`;
  const log = await failedGateway(t, command);
  assert.match(log, /args: --token REDACTED https:\/\/example\.invalid\/mcp\?key=REDACTED/, log);
});

test('a line of output longer than 64 KiB is left out of the log whole (never cut around a secret, never held)', async (t) => {
  // A 200,000-character stdout line (supergateway logs a line that is not JSON-RPC whole) with a secret near
  // its end, where a cut line would keep it; then a short line that must still be copied.
  const script =
    "console.log('x'.repeat(199980) + ' --token s3cr3t-flag-value'); console.error('after the long line'); console.log('not an MCP server')";
  const command = `${JSON.stringify(process.execPath)} -e ${JSON.stringify(script)}`;
  const log = await failedGateway(t, command);
  assert.match(log, /\[a line of \d+ characters left out: longer than 65536\]/, log.slice(0, 2000));
  assert.match(log, /after the long line/);
  assert.ok(!log.includes('x'.repeat(1000)), 'no part of the long line is in the log');
});
