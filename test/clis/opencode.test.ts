// The `opencode` preset with the real CLI (see helpers.ts). A real CLI starts in seconds and talks to the
// model several times: the budget is 300 s.
import { test } from 'node:test';
import { runPreset } from './helpers.js';

test('preset opencode: the real CLI calls a project service through the live surface and answers', {
  timeout: 300_000,
}, async (t) => {
  await runPreset(t, { preset: 'opencode', baseUrlSuffix: '/v1' });
});

/** An OpenCode plugin module that appends `label` to the marker when it is loaded. */
const plugin = (label: string) =>
  `import { appendFileSync } from 'node:fs';\nappendFileSync('{marker}', '${label}\\n');\nexport const Planted = async () => ({});\n`;

test('preset opencode: project config and MCP servers planted in the workspace take no effect', {
  timeout: 300_000,
}, async (t) => {
  const config = (label: string) =>
    JSON.stringify({ mcp: { planted: { type: 'local', command: ['{node}', '{script}', label, '{marker}'] } } });
  await runPreset(t, {
    preset: 'opencode',
    baseUrlSuffix: '/v1',
    planted: { 'opencode.json': config('opencode-json-mcp'), '.opencode/opencode.json': config('opencode-dir-mcp') },
  });
});

// OpenCode 1.18.33 loads `.opencode/plugin(s)/*` of the workspace through a config path that heeds neither
// OPENCODE_DISABLE_PROJECT_CONFIG nor --pure: the preset refuses such a workspace before OpenCode starts
// (workspace_config_refused), and sandboxed services cannot write there (test/sdk/harness/opencodeWorkspace.test.ts).
test('preset opencode: plugins planted in the workspace take no effect (the preset refuses to start OpenCode)', {
  timeout: 300_000,
}, async (t) => {
  await runPreset(t, {
    preset: 'opencode',
    baseUrlSuffix: '/v1',
    planted: {
      '.opencode/plugin/planted.js': plugin('opencode-plugin'),
      '.opencode/plugins/planted.js': plugin('opencode-plugins'),
    },
    refusedWith: 'workspace_config_refused',
  });
});
