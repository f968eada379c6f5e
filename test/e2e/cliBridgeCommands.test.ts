/**
 * The CLI's bridge commands where no service runs: usage errors (exit 2, `error [usage]` and a fix),
 * `harness-config` in every format and face, and `bridge http-to-stdio` against nothing (exit 1). The
 * in-process cases call the CLI's `run` with a capturing Io; the bridge runs as a real process, because it
 * takes over the process's stdout.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { run } from '../../packages/cli/src/main.js';
import { BIN, spawnNode, tempDir } from './helpers.js';

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

const USAGE_CASES: { argv: string[]; message: RegExp }[] = [
  { argv: ['bridge'], message: /bridge needs a subcommand/ },
  { argv: ['bridge', 'stdio-to-http'], message: /unknown subcommand "bridge stdio-to-http"/ },
  { argv: ['bridge', 'http-to-stdio'], message: /--url is required/ },
  { argv: ['bridge', 'http-to-stdio', '--url', 'ftp://x'], message: /--url takes an http\(s\) URL/ },
  {
    argv: ['bridge', 'http-to-stdio', '--url', 'http://me:s3cret@127.0.0.1:1/mcp'],
    message: /--url must not carry a user name or password \(user:password@\)\n/,
  },
  {
    argv: ['bridge', 'http-to-stdio', '--url', 'http://127.0.0.1:1/mcp', '--header', 'no colon'],
    message: /--header takes "Name: value"/,
  },
  { argv: ['gateway'], message: /--stdio is required/ },
  { argv: ['gateway', '--stdio', 'node s.js', 'extra'], message: /gateway takes no positional arguments/ },
  {
    argv: ['gateway', '--stdio', 'node s.js', '--port', '70000'],
    message: /--port takes a whole number from 0 to 65535, not 70000/,
  },
  { argv: ['gateway', '--stdio', 'node s.js', '--port', 'eight'], message: /--port takes a whole number/ },
  // Numbers are decimal digits in range: Number() would read 0x50 as 80 and 1e3 as 1000.
  { argv: ['gateway', '--stdio', 'node s.js', '--port', '0x50'], message: /--port takes a whole number in decimal/ },
  { argv: ['gateway', '--stdio', 'node s.js', '--grace-ms', '1e3'], message: /--grace-ms takes a whole number in/ },
  { argv: ['gateway', '--stdio', 'node s.js', '--grace-ms', ''], message: /--grace-ms takes a whole number in/ },
  {
    argv: ['gateway', '--stdio', 'node s.js', '--ready-timeout-ms', '3000000000'],
    message: /--ready-timeout-ms takes a whole number from 1 to 2147483647, not 3000000000/,
  },
  {
    argv: ['gateway', '--stdio', 'node s.js', '--log-level', 'loud'],
    message: /--log-level takes info, debug or none/,
  },
  { argv: ['gateway', '--stdio', 'node s.js', '--sse'], message: /Unknown option '--sse'/ },
  { argv: ['harness-config'], message: /--format is required/ },
  { argv: ['harness-config', '--format', 'cursor'], message: /--format takes one of claude, codex, gemini, opencode/ },
  {
    argv: ['harness-config', '--format', 'codex', '--workspace', 'w', '--agent', 'a'],
    message: /--data-dir is required/,
  },
  {
    argv: ['harness-config', '--format', 'codex', '--http', '--url', 'http://127.0.0.1:1/mcp'],
    message: /--token-env is required/,
  },
  {
    argv: [
      'harness-config',
      '--format',
      'codex',
      '--data-dir',
      'd',
      '--workspace',
      'w',
      '--agent',
      'a',
      '--url',
      'http://x',
    ],
    message: /--url and --token-env go with --http/,
  },
  {
    argv: [
      'harness-config',
      '--format',
      'claude',
      '--http',
      '--url',
      'http://127.0.0.1:1/mcp',
      '--token-env',
      'not a var',
    ],
    message: /is not an environment variable name/,
  },
  {
    argv: [
      'harness-config',
      '--format',
      'claude',
      '--name',
      'a b',
      '--data-dir',
      'd',
      '--workspace',
      'w',
      '--agent',
      'a',
    ],
    message: /server name "a b"/,
  },
  {
    argv: [
      'harness-config',
      '--format',
      'opencode',
      '--opencode-layout',
      'v3',
      '--data-dir',
      'd',
      '--workspace',
      'w',
      '--agent',
      'a',
    ],
    message: /--opencode-layout takes v1 or v2/,
  },
];

test('usage errors of bridge, gateway and harness-config: exit 2, the message and a fix', async (t) => {
  for (const { argv, message } of USAGE_CASES) {
    await t.test(argv.join(' '), async () => {
      const { code, stdout, stderr } = await cli(argv);
      assert.equal(code, 2, stderr);
      assert.equal(stdout, '');
      assert.match(stderr, /^error \[usage\]: /);
      assert.match(stderr, message);
      assert.match(stderr, /\n {2}fix: /);
    });
  }
});

test('harness-config points every format at the stdio face: this node, this bin, absolute paths', async () => {
  const common = ['--data-dir', 'data', '--workspace', 'ws', '--agent', 'main', '--project', 'p1'];
  const claude = JSON.parse((await cli(['harness-config', '--format', 'claude', ...common])).stdout);
  const args = [
    BIN,
    'services',
    'serve',
    '--data-dir',
    `${process.cwd()}/data`,
    '--workspace',
    `${process.cwd()}/ws`,
    '--agent',
    'main',
    '--project',
    'p1',
  ];
  assert.deepEqual(claude, { mcpServers: { scienceevolve: { type: 'stdio', command: process.execPath, args } } });

  const gemini = JSON.parse((await cli(['harness-config', '--format', 'gemini', '--name', 'lab', ...common])).stdout);
  assert.deepEqual(gemini.mcpServers.lab.args, args);

  const opencode = JSON.parse(
    (await cli(['harness-config', '--format', 'opencode', ...common, '--passthrough'])).stdout,
  );
  assert.deepEqual(opencode.mcp.scienceevolve.command, [process.execPath, ...args, '--passthrough']);

  const codex = await cli(['harness-config', '--format', 'codex', ...common, '--tool-timeout-sec', '600']);
  assert.equal(codex.code, 0);
  assert.match(codex.stdout, /^\[mcp_servers\.scienceevolve\]\n/);
  assert.ok(codex.stdout.includes(`command = ${JSON.stringify(process.execPath)}\n`));
  assert.match(codex.stdout, /\ntool_timeout_sec = 600\n/);

  const doc = JSON.parse(
    (await cli(['harness-config', '--format', 'codex', ...common, '--tool-timeout-sec', '600', '--json'])).stdout,
  );
  assert.deepEqual(Object.keys(doc), ['format', 'name', 'face', 'text']);
  assert.equal(doc.face, 'stdio');
  assert.equal(doc.text, codex.stdout);
});

test('harness-config points at the HTTP face with the token from a variable, never inline', async () => {
  const http = ['--http', '--url', 'http://127.0.0.1:4100/mcp', '--token-env', 'LAB_TOKEN'];
  const claude = JSON.parse((await cli(['harness-config', '--format', 'claude', ...http])).stdout);
  assert.deepEqual(claude.mcpServers.scienceevolve, {
    type: 'http',
    url: 'http://127.0.0.1:4100/mcp',
    // Claude Code expands `${VAR}` itself: the literal text, not a value, is in the file.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config holds the variable reference verbatim
    headers: { Authorization: 'Bearer ${LAB_TOKEN}' },
  });
  const codex = (await cli(['harness-config', '--format', 'codex', ...http])).stdout;
  assert.match(codex, /\nbearer_token_env_var = "LAB_TOKEN"\n/);
  const doc = JSON.parse((await cli(['harness-config', '--format', 'gemini', ...http, '--json'])).stdout);
  assert.equal(doc.face, 'http');
});

test('bridge http-to-stdio fails with remote_unreachable (exit 1) when nothing listens', async (t) => {
  // A port that was free a moment ago: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 1));
    });
  });
  const dir = tempDir(t);
  const bridge = spawnNode(t, [BIN, 'bridge', 'http-to-stdio', '--url', `http://127.0.0.1:${port}/mcp`], { cwd: dir });
  const { code } = await bridge.exited;
  assert.equal(code, 1);
  assert.equal(bridge.stdout(), '', 'stdout carries protocol only: the error goes to stderr');
  assert.match(
    bridge.stderr(),
    /^error \[remote_unreachable\]: could not connect to the MCP server at http:\/\/127\.0\.0\.1:\d+\/mcp/m,
  );
});
