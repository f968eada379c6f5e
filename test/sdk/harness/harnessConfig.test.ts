import assert from 'node:assert/strict';
import { test } from 'node:test';
import { harnessConfig } from '../../../packages/sdk/src/harness/harnessConfig.js';

/** A TOML reader for the subset harnessConfig writes: [dotted.tables] and key = string | number | [strings]. */
function parseTomlSubset(text: string): Record<string, Record<string, unknown>> {
  const tables: Record<string, Record<string, unknown>> = {};
  let current: Record<string, unknown> | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const header = /^\[([A-Za-z0-9_.-]+)\]$/.exec(line);
    if (header) {
      current = {};
      tables[header[1]!] = current;
      continue;
    }
    const pair = /^([A-Za-z0-9_-]+) = (.+)$/.exec(line);
    assert.ok(pair && current, `not TOML of the expected shape: ${line}`);
    current[pair[1]!] = JSON.parse(pair[2]!);
  }
  return tables;
}

const stdio = {
  command: '/usr/bin/scienceevolve',
  args: ['services', 'serve', '--agent', 'main', 'a "quoted" arg'],
  env: { SE_DATA: '/d' },
};
/** Claude Code and Gemini CLI expand `${VAR}` in headers; the literal is what must be written. */
const bearerRef = 'Bearer $' + '{SE_BRIDGE_TOKEN}';
const http = { url: 'http://127.0.0.1:4321/mcp', tokenEnv: 'SE_BRIDGE_TOKEN' };

test('claude: --mcp-config JSON', () => {
  assert.deepEqual(JSON.parse(harnessConfig({ format: 'claude', serverName: 'se', stdio })), {
    mcpServers: { se: { type: 'stdio', command: stdio.command, args: stdio.args, env: stdio.env } },
  });
  assert.deepEqual(JSON.parse(harnessConfig({ format: 'claude', serverName: 'se', http })), {
    mcpServers: { se: { type: 'http', url: http.url, headers: { Authorization: bearerRef } } },
  });
});

test('codex: config.toml [mcp_servers.<name>] with startup and tool timeouts', () => {
  assert.deepEqual(parseTomlSubset(harnessConfig({ format: 'codex', serverName: 'se', stdio })), {
    'mcp_servers.se': {
      command: stdio.command,
      args: stdio.args,
      startup_timeout_sec: 120,
      tool_timeout_sec: 3600,
      default_tools_approval_mode: 'approve',
    },
    'mcp_servers.se.env': { SE_DATA: '/d' },
  });
  assert.deepEqual(
    parseTomlSubset(
      harnessConfig({ format: 'codex', serverName: 'se', http, toolTimeoutSec: 90, startupTimeoutSec: 30 }),
    ),
    {
      'mcp_servers.se': {
        url: http.url,
        bearer_token_env_var: 'SE_BRIDGE_TOKEN',
        startup_timeout_sec: 30,
        tool_timeout_sec: 90,
        default_tools_approval_mode: 'approve',
      },
    },
  );
});

test('gemini: settings.json mcpServers', () => {
  assert.deepEqual(JSON.parse(harnessConfig({ format: 'gemini', serverName: 'se', stdio })), {
    mcpServers: { se: { command: stdio.command, args: stdio.args, env: stdio.env, timeout: 3_600_000, trust: true } },
  });
  assert.deepEqual(JSON.parse(harnessConfig({ format: 'gemini', serverName: 'se', http })), {
    mcpServers: {
      se: { httpUrl: http.url, headers: { Authorization: bearerRef }, timeout: 3_600_000, trust: true },
    },
  });
});

test('opencode: config JSON for OPENCODE_CONFIG_CONTENT (1.x and 2.x layouts)', () => {
  assert.deepEqual(JSON.parse(harnessConfig({ format: 'opencode', serverName: 'se', stdio })), {
    $schema: 'https://opencode.ai/config.json',
    mcp: {
      se: {
        type: 'local',
        command: [stdio.command, ...stdio.args],
        environment: stdio.env,
        enabled: true,
        timeout: 120_000,
      },
    },
  });
  assert.deepEqual(JSON.parse(harnessConfig({ format: 'opencode', serverName: 'se', http, opencodeLayout: 'v2' })), {
    $schema: 'https://opencode.ai/config.json',
    mcp: {
      servers: { se: { type: 'remote', url: http.url, headers: { Authorization: 'Bearer {env:SE_BRIDGE_TOKEN}' } } },
    },
  });
});

test('pi: the pi-mcp-adapter mcp.json, tools offered directly', () => {
  assert.deepEqual(JSON.parse(harnessConfig({ format: 'pi', serverName: 'se', stdio })), {
    mcpServers: { se: { command: stdio.command, args: stdio.args, env: stdio.env, directTools: true } },
  });
  assert.deepEqual(JSON.parse(harnessConfig({ format: 'pi', serverName: 'se', http })), {
    mcpServers: { se: { url: http.url, headers: { Authorization: bearerRef }, directTools: true } },
  });
});

test('a server named like an Object.prototype property is written as data', () => {
  const text = harnessConfig({ format: 'claude', serverName: '__proto__', stdio });
  assert.ok(text.includes('"__proto__": {'), text);
  assert.equal(Object.keys(JSON.parse(text).mcpServers).length, 1);
});

test('the HTTP token is only ever a variable reference, and bad input is refused', () => {
  for (const format of ['claude', 'codex', 'gemini', 'opencode', 'pi'] as const) {
    const text = harnessConfig({ format, serverName: 'se', http });
    assert.ok(text.includes('SE_BRIDGE_TOKEN'), format);
    assert.ok(!/Bearer [A-Za-z0-9_-]{16}/.test(text), `${format}: no literal token`);
  }
  const bad: { why: string; options: Parameters<typeof harnessConfig>[0] }[] = [
    {
      why: 'a token instead of a variable name',
      options: { format: 'claude', serverName: 'se', http: { url: http.url, tokenEnv: 'Bearer abc' } },
    },
    { why: 'both faces', options: { format: 'claude', serverName: 'se', stdio, http } },
    { why: 'no face', options: { format: 'codex', serverName: 'se' } },
    { why: 'a server name with a dot', options: { format: 'codex', serverName: 'a.b', stdio } },
    { why: 'an unknown format', options: { format: 'cursor' as 'claude', serverName: 'se', stdio } },
  ];
  for (const b of bad) assert.throws(() => harnessConfig(b.options), { code: 'usage' }, b.why);
});
