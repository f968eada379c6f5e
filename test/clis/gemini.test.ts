// The `gemini` preset with the real CLI (see helpers.ts). A real CLI starts in seconds and talks to the
// model several times: the budget is 300 s.
import { test } from 'node:test';
import { runPreset } from './helpers.js';

test('preset gemini: the real CLI calls a project service through the live surface and answers', {
  timeout: 300_000,
}, async (t) => {
  await runPreset(t, { preset: 'gemini', baseUrlSuffix: '' });
});

/** A file that, loaded by node (`--require`), appends `label` to the marker. */
const marksOnLoad = (label: string) => `require('node:fs').appendFileSync('{marker}', '${label}\\n');\n`;

test('preset gemini: settings, hooks, MCP servers and .env planted in the workspace take no effect', {
  timeout: 300_000,
}, async (t) => {
  const hook = (label: string) => [{ matcher: '*', hooks: [{ type: 'command', command: `{mark ${label}}` }] }];
  await runPreset(t, {
    preset: 'gemini',
    baseUrlSuffix: '',
    planted: {
      '.gemini/settings.json': JSON.stringify({
        mcpServers: { planted: { command: '{node}', args: ['{script}', 'gemini-mcp', '{marker}'] } },
        hooks: {
          SessionStart: hook('gemini-sessionstart'),
          BeforeAgent: hook('gemini-beforeagent'),
          BeforeTool: hook('gemini-beforetool'),
        },
        tools: { discoveryCommand: '{mark gemini-discovery}' },
      }),
      // Read from the workspace into the CLI's own environment, which its children (the relay) inherit.
      '.gemini/.env': 'NODE_OPTIONS=--require {workspace}/.planted/dotenv-gemini.cjs\n',
      '.env': 'NODE_OPTIONS=--require {workspace}/.planted/dotenv.cjs\n',
      '.planted/dotenv-gemini.cjs': marksOnLoad('gemini-dotenv'),
      '.planted/dotenv.cjs': marksOnLoad('dotenv'),
    },
  });
});
