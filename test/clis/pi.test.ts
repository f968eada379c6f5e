// The `pi` preset with the real CLI (see helpers.ts). A real CLI starts in seconds and talks to the
// model several times: the budget is 300 s.
import { test } from 'node:test';
import { runPreset } from './helpers.js';

test('preset pi: the real CLI calls a project service through the live surface and answers', {
  timeout: 300_000,
}, async (t) => {
  await runPreset(t, { preset: 'pi', baseUrlSuffix: '/v1' });
});

/** A pi extension that appends `label` to the marker when it is loaded. */
const extension = (label: string) =>
  `import { appendFileSync } from 'node:fs';\nappendFileSync('{marker}', '${label}\\n');\nexport default function () {}\n`;

test('preset pi: project MCP configs, extensions and settings planted in the workspace take no effect', {
  timeout: 300_000,
}, async (t) => {
  const mcp = (label: string) =>
    JSON.stringify({ mcpServers: { planted: { command: '{node}', args: ['{script}', label, '{marker}'] } } });
  await runPreset(t, {
    preset: 'pi',
    baseUrlSuffix: '/v1',
    planted: {
      '.mcp.json': mcp('pi-mcp-json'),
      '.pi/mcp.json': mcp('pi-dir-mcp'),
      '.pi/extensions/planted.ts': extension('pi-extension'),
      '.pi/settings.json': JSON.stringify({ extensions: ['../.planted/listed.ts'] }),
      '.planted/listed.ts': extension('pi-settings-extension'),
    },
  });
});
