// ES-module project services find the SDK's MCP packages and zod wherever the data dir lives: a v2-SDK
// service (`@modelcontextprotocol/server`), a v1-SDK service imported as ESM, and a `"type": "module"`
// package, with the data dir under the system temp directory (no `node_modules` in any ancestor), sandboxed
// (where bubblewrap works) and not. Probed, then called through `services serve`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { sandboxAvailability } from '../../packages/sdk/src/processes/sandbox.ts';
import { assertNoMarkedProcess, killMarked, tempDir } from '../sdk/invocation/helpers.ts';

const BIN = new URL('../../packages/cli/bin/scienceevolve.js', import.meta.url).pathname;

/** A v2-SDK stdio service, ESM only (the v2 SDK ships no CommonJS entry for users to rely on). */
const V2_SERVICE = `import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';
const server = new McpServer({ name: 'v2-esm', version: '1.0.0' });
server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
  content: [{ type: 'text', text: 'v2:' + text }],
}));
await server.connect(new StdioServerTransport());
`;

/** The v1 SDK, imported as ES modules. */
const V1_SERVICE = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
const server = new McpServer({ name: 'v1-esm', version: '1.0.0' });
server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text: 'v1:' + text }],
}));
await server.connect(new StdioServerTransport());
`;

function workflow(sandbox: boolean | undefined) {
  const opt = sandbox === false ? { sandbox: false } : {};
  return {
    agents: {
      main: {
        mcpServers: [
          { name: 'v2', project: 'v2' },
          { name: 'v1', project: 'v1' },
          { name: 'typed', project: 'typed' },
        ],
      },
    },
    mcpDefinitions: {
      v2: { entrypoint: 'server.mjs', files: { 'server.mjs': V2_SERVICE }, ...opt },
      v1: { entrypoint: 'server.mjs', files: { 'server.mjs': V1_SERVICE }, ...opt },
      // A `.js` entrypoint that is ESM through its package.json.
      typed: {
        entrypoint: 'src/server.js',
        files: { 'package.json': '{ "type": "module" }', 'src/server.js': V1_SERVICE },
        ...opt,
      },
    },
  };
}

for (const sandbox of [undefined, false] as const) {
  const label = sandbox === false ? 'unsandboxed' : 'sandbox as configured (auto)';
  test(`ESM services (v2 SDK, v1 SDK, "type": "module") outside any node_modules, ${label}: probed and called`, {
    timeout: 120_000,
  }, async (t) => {
    const dir = tempDir(t, 'se-esm-');
    const project = `esm-${sandbox === false ? 'off' : 'auto'}-${process.pid}`;
    t.after(() => killMarked(project));
    const path = join(dir, 'workflow.json');
    writeFileSync(path, JSON.stringify(workflow(sandbox)));
    mkdirSync(join(dir, 'ws'));
    const common = ['--data-dir', join(dir, 'data'), '--project', project, '--workspace', join(dir, 'ws')];

    const probe = spawnSync(
      process.execPath,
      [BIN, 'services', 'probe', ...common, '--workflow', path, '--agent', 'main', '--json'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(probe.status, 0, probe.stderr);
    const report = JSON.parse(probe.stdout) as {
      services: { name: string; state: string; tools: string[]; sandbox: { sandboxed: boolean } | null }[];
    };
    // The case this test is for: where bubblewrap works, `auto` really sandboxes them (the data dir hidden).
    const sandboxed = sandbox === false ? false : (await sandboxAvailability(process.env)).ok;
    assert.deepEqual(
      report.services.map((s) => s.sandbox?.sandboxed),
      [sandboxed, sandboxed, sandboxed],
    );
    assert.deepEqual(
      report.services.map((s) => [s.name, s.state, s.tools]),
      [
        ['v2', 'ready', ['echo']],
        ['v1', 'ready', ['echo']],
        ['typed', 'ready', ['echo']],
      ],
    );
    await assertNoMarkedProcess(project);

    const client = new Client({ name: 'esm-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'services', 'serve', ...common, '--agent', 'main'],
      stderr: 'pipe',
    });
    t.after(() => client.close());
    await client.connect(transport);
    for (const [tool, expected] of [
      ['v2__echo', 'v2:hi'],
      ['v1__echo', 'v1:hi'],
      ['typed__echo', 'v1:hi'],
    ] as const) {
      const result = (await client.callTool({ name: tool, arguments: { text: 'hi' } })) as {
        content: { type: string; text: string }[];
        isError?: boolean;
      };
      assert.equal(result.isError ?? false, false, JSON.stringify(result));
      assert.equal(result.content[0]?.text, expected);
    }
    await client.close();
    await assertNoMarkedProcess(project, 10_000);
  });
}
