/**
 * `bridge http-to-stdio` and the command line (security finding 3's audit): `--header "Authorization: …"`
 * put a bearer token where every user of the machine reads it (`/proc/<pid>/cmdline`). Credentials now come
 * from variables (`--header-env Name=VAR`, `--url-env VAR`) and reach the remote server, while no process of
 * the bridge's tree shows them; a credential given in `--header` or in `--url`'s query is a usage error.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { secretsInTrees } from '../fixtures/cmdlines.js';
import { createLabServer } from '../fixtures/bridge/labService.js';
import { killIfAlive, waitUntilGone } from '../fixtures/bridge/processGone.js';
import { serveStatelessMcp } from '../fixtures/remote/statelessServer.js';
import { runCli } from './runCli.js';

const BIN = fileURLToPath(new URL('../../packages/cli/bin/scienceevolve.js', import.meta.url));
const TOKEN = 'BridgeBearerT0ken';
const API_KEY = 'BridgeApiK3y';
const QUERY_KEY = 'BridgeQueryK3y';

test('a credential in --header or in --url is refused, naming --header-env / --url-env; the value is never shown', async () => {
  const url = 'http://127.0.0.1:1/mcp';
  const cases: Array<{ args: string[]; message: RegExp; remedy: RegExp }> = [
    {
      args: ['--url', url, '--header', `Authorization: Bearer ${TOKEN}`],
      message: /--header "Authorization: …" carries a credential, and a command line is readable by every user/,
      remedy: /--header-env Authorization=VAR/,
    },
    {
      args: ['--url', url, '--header', `proxy-authorization: Basic ${TOKEN}`],
      message: /carries a credential/,
      remedy: /--header-env proxy-authorization=VAR/,
    },
    { args: ['--url', url, '--header', `Cookie: sid=${TOKEN}`], message: /"Cookie: …"/, remedy: /--header-env/ },
    { args: ['--url', url, '--header', `X-Api-Key: ${TOKEN}`], message: /"X-Api-Key: …"/, remedy: /--header-env/ },
    {
      args: ['--url', url, '--header', `X-Auth-Token: ${TOKEN}`],
      message: /carries a credential/,
      remedy: /--header-env/,
    },
    // A credential scheme under any name.
    {
      args: ['--url', url, '--header', `X-Upstream: Bearer ${TOKEN}`],
      message: /carries a credential/,
      remedy: /--header-env/,
    },
    {
      args: ['--url', `${url}?access_token=${TOKEN}`],
      message: /--url carries a credential in its query \(access_token=…\)/,
      remedy: /--url-env VAR/,
    },
    { args: ['--url', `${url}?v=2&key=${TOKEN}`], message: /in its query \(key=…\)/, remedy: /--url-env/ },
    { args: ['--url', `${url}?sig=${TOKEN}`], message: /in its query \(sig=…\)/, remedy: /--url-env/ },
    {
      args: ['--url', url, '--header-env', 'Authorization=SE_TEST_UNSET_TOKEN'],
      message: /--header-env Authorization=SE_TEST_UNSET_TOKEN: the variable SE_TEST_UNSET_TOKEN is not set/,
      remedy: /export SE_TEST_UNSET_TOKEN=/,
    },
    {
      args: ['--url', url, '--header-env', 'Authorization'],
      message: /--header-env takes Name=VAR/,
      remedy: /--header-env Authorization=MY_TOKEN/,
    },
    // A secret given where a variable's name belongs is refused without being quoted back.
    {
      args: ['--url', url, '--header-env', `Authorization: Bearer ${TOKEN}`],
      message: /--header-env takes Name=VAR/,
      remedy: /MY_TOKEN/,
    },
    {
      args: ['--url', url, '--header-env', `Authorization=Bearer ${TOKEN}`],
      message: /--header-env takes Name=VAR/,
      remedy: /MY_TOKEN/,
    },
    {
      args: ['--url-env', `http://127.0.0.1:1/mcp?key=${TOKEN}`],
      message: /--url-env takes the name of an environment variable/,
      remedy: /--url-env MCP_URL/,
    },
    {
      args: ['--url-env', 'SE_TEST_UNSET_URL'],
      message: /--url-env SE_TEST_UNSET_URL: the variable SE_TEST_UNSET_URL is not set/,
      remedy: /export SE_TEST_UNSET_URL=/,
    },
    {
      args: ['--url', url, '--url-env', 'X'],
      message: /--url and --url-env cannot be given together/,
      remedy: /--help/,
    },
    {
      args: ['--url', `http://me:${TOKEN}@127.0.0.1:1/mcp`],
      message: /--url must not carry a user name or password/,
      remedy: /--header-env Authorization=VAR/,
    },
  ];
  for (const c of cases) {
    const result = await runCli(['bridge', 'http-to-stdio', ...c.args]);
    const shown = c.args.join(' ');
    assert.equal(result.code, 2, `${shown}: ${result.stderr}`);
    // The bridge's stdout is the protocol's from the start: the error is on stderr.
    const [, message, remedy] = /^error \[usage\]: (.*)\n {2}fix: (.*)\n/.exec(result.stderr) ?? [];
    assert.match(message ?? '', c.message, `${shown}: ${result.stderr}`);
    assert.match(remedy ?? '', c.remedy, shown);
    assert.equal(`${result.stdout}${result.stderr}`.includes(TOKEN), false, `${shown} printed the secret`);
  }
});

test('credentials given by --header-env and --url-env reach the remote server, and no command line shows them', {
  timeout: 60_000,
}, async (t) => {
  const seen: Array<Record<string, string | string[] | undefined>> = [];
  const endpoint = await serveStatelessMcp(
    t,
    () => createLabServer('remote'),
    (req, res) => {
      seen.push({ ...req.headers });
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      if (
        req.headers.authorization === `Bearer ${TOKEN}` &&
        req.headers['x-api-key'] === API_KEY &&
        query.get('key') === QUERY_KEY
      ) {
        return true;
      }
      res.writeHead(401).end();
      return false;
    },
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      BIN,
      'bridge',
      'http-to-stdio',
      '--url-env',
      'SE_BRIDGE_URL',
      '--header-env',
      'Authorization=SE_BRIDGE_AUTH',
      '--header-env',
      'X-Api-Key=SE_BRIDGE_KEY',
      // A header that carries no credential may stay on the command line.
      '--header',
      'X-Trace-Tag: plain-1',
    ],
    env: {
      PATH: process.env.PATH ?? '',
      SE_BRIDGE_URL: `${endpoint}?key=${QUERY_KEY}`,
      SE_BRIDGE_AUTH: `Bearer ${TOKEN}`,
      SE_BRIDGE_KEY: API_KEY,
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'bridge-argv-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid!;
  t.after(() => killIfAlive(pid));

  const { tools } = await client.listTools();
  assert.ok(
    tools.some((tool) => tool.name === 'echo'),
    stderr,
  );
  assert.ok(seen.length > 0 && seen.every((h) => h['x-trace-tag'] === 'plain-1'), 'every request carried the headers');
  // While the bridge holds its session: its command line (and any child's) holds none of the three.
  assert.deepEqual(secretsInTrees([pid], [TOKEN, API_KEY, QUERY_KEY]), []);

  await client.close();
  await waitUntilGone(pid);
  for (const secret of [TOKEN, API_KEY, QUERY_KEY]) assert.equal(stderr.includes(secret), false, stderr);
});
