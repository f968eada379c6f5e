// The `codex` preset with the real CLI (see helpers.ts). A real CLI starts in seconds and talks to the
// model several times: the budget is 300 s.
import { test } from 'node:test';
import { runPreset } from './helpers.js';

test('preset codex: the real CLI calls a project service through the live surface and answers', {
  timeout: 300_000,
}, async (t) => {
  await runPreset(t, { preset: 'codex', baseUrlSuffix: '/v1' });
});

// Codex reads a project's .codex/ only when its configuration trusts the project; the fresh CODEX_HOME trusts
// none, so this passes without a switch of the preset's. The plant itself works: with
// `[projects."<workspace>"] trust_level = "trusted"` added to that config, its MCP server ran (seen once by hand).
test('preset codex: a project .codex/config.toml planted in the workspace (notify, MCP server) takes no effect', {
  timeout: 300_000,
}, async (t) => {
  await runPreset(t, {
    preset: 'codex',
    baseUrlSuffix: '/v1',
    planted: {
      '.codex/config.toml': [
        'notify = ["{node}", "{script}", "codex-notify", "{marker}"]',
        '[mcp_servers.planted]',
        'command = "{node}"',
        'args = ["{script}", "codex-mcp", "{marker}"]',
        '',
      ].join('\n'),
    },
  });
});
