// The `claude` preset with the real CLI (see helpers.ts). A real CLI starts in seconds and talks to the
// model several times: the budget is 300 s.
import { test } from 'node:test';
import { runPreset } from './helpers.js';

test('preset claude: the real CLI calls a project service through the live surface and answers', {
  timeout: 300_000,
}, async (t) => {
  await runPreset(t, { preset: 'claude', baseUrlSuffix: '' });
});

/** Hooks on every event a headless run passes through, each appending its event's name to the marker. */
function claudeHooks(prefix: string): string {
  const on = (event: string) => [{ matcher: '*', hooks: [{ type: 'command', command: `{mark ${prefix}-${event}}` }] }];
  const events = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'];
  return JSON.stringify({ hooks: Object.fromEntries(events.map((e) => [e, on(e.toLowerCase())])) });
}

test('preset claude: hooks and MCP servers planted in the workspace do not run', { timeout: 300_000 }, async (t) => {
  await runPreset(t, {
    preset: 'claude',
    baseUrlSuffix: '',
    planted: {
      '.claude/settings.json': claudeHooks('project'),
      '.claude/settings.local.json': claudeHooks('local'),
      '.mcp.json': JSON.stringify({
        mcpServers: { planted: { command: '{node}', args: ['{script}', 'mcp-json', '{marker}'] } },
      }),
    },
  });
});
