/**
 * What each preset plans, case by case: the command and headless arguments, the MCP configuration in the
 * CLI's own format pointing at the relay, the unattended settings, and model/baseUrl/apiKeyEnv in the
 * CLI's own terms — with the key only ever in the environment, never in a file. (The real CLIs run these
 * plans in test/clis.)
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type PresetContext, piMcpAdapter, planCustom, planPreset } from '../../../packages/sdk/src/harness/presets.js';

const relay = { command: '/usr/bin/node', args: ['/sdk/dist/faces/relay.js', '/tmp/se-mcp-x/surface.sock'] };

function context(overrides: Partial<PresetContext> = {}): PresetContext {
  return {
    prompt: 'Add 2 and 40.',
    workspace: '/work/space',
    configDir: '/rt/cli',
    home: '/rt/cli/home',
    relay,
    toolNames: ['adds__add', 'notes__write'],
    model: 'm-1',
    baseUrl: 'http://127.0.0.1:9999/v1',
    apiKeyEnv: 'MY_KEY',
    apiKey: 'sk-secret-value',
    ...overrides,
  };
}

function fileText(plan: ReturnType<typeof planPreset>, path: string): string {
  const file = plan.files.find((f) => f.path === path);
  assert.ok(file, `planned ${path}; planned: ${plan.files.map((f) => f.path).join(', ')}`);
  return file.text;
}

test('no file of any preset holds the API key; the key is in the environment only', () => {
  for (const preset of ['claude', 'codex', 'gemini', 'opencode'] as const) {
    const plan = planPreset(preset, context());
    for (const file of plan.files) assert.ok(!file.text.includes('sk-secret-value'), `${preset}: ${file.path}`);
    assert.ok(!plan.args.some((a) => a.includes('sk-secret-value')), `${preset}: args`);
    assert.ok(Object.values(plan.env).includes('sk-secret-value'), `${preset}: the key is passed`);
  }
});

test('claude: user settings only, --mcp-config, --strict-mcp-config, each surface tool allowed, tool search off, its own config dir', () => {
  const plan = planPreset('claude', context());
  assert.equal(plan.command, 'claude');
  assert.deepEqual(plan.args, [
    '-p',
    '--output-format',
    'text',
    '--setting-sources',
    'user',
    '--mcp-config',
    '/rt/cli/claude-mcp.json',
    '--strict-mcp-config',
    '--allowedTools',
    'mcp__scienceevolve__adds__add,mcp__scienceevolve__notes__write',
    '--model',
    'm-1',
    '--',
    'Add 2 and 40.',
  ]);
  assert.deepEqual(JSON.parse(fileText(plan, '/rt/cli/claude-mcp.json')), {
    mcpServers: { scienceevolve: { type: 'stdio', command: relay.command, args: relay.args } },
  });
  assert.equal(plan.env.ENABLE_TOOL_SEARCH, 'false');
  assert.equal(plan.env.CLAUDE_CONFIG_DIR, '/rt/cli/home/.claude');
  assert.equal(plan.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, '1');
  assert.equal(plan.env.CLAUDE_CODE_MAX_RETRIES, '2');
  assert.equal(plan.env.ANTHROPIC_BASE_URL, 'http://127.0.0.1:9999/v1');
  assert.equal(plan.env.ANTHROPIC_API_KEY, 'sk-secret-value');
  assert.equal(planPreset('claude', context({ home: undefined })).env.CLAUDE_CONFIG_DIR, undefined);
});

test('codex: config.toml in CODEX_HOME with an approved server, plugins off, a Responses provider', () => {
  const plan = planPreset('codex', context());
  assert.equal(plan.env.CODEX_HOME, '/rt/cli/home/.codex');
  assert.equal(plan.outputFile, '/rt/cli/codex-last-message.txt');
  assert.deepEqual(plan.args, [
    'exec',
    '--skip-git-repo-check',
    '--ephemeral',
    '--color',
    'never',
    '-o',
    '/rt/cli/codex-last-message.txt',
    '--',
    'Add 2 and 40.',
  ]);
  const toml = fileText(plan, '/rt/cli/home/.codex/config.toml');
  assert.equal(
    toml,
    [
      'model = "m-1"',
      'model_provider = "scienceevolve"',
      '',
      '[model_providers.scienceevolve]',
      'name = "ScienceEvolve"',
      'base_url = "http://127.0.0.1:9999/v1"',
      'wire_api = "responses"',
      'env_key = "SCIENCEEVOLVE_API_KEY"',
      '',
      '[features]',
      'plugins = false',
      '',
      '[mcp_servers.scienceevolve]',
      `command = "/usr/bin/node"`,
      `args = ["/sdk/dist/faces/relay.js", "/tmp/se-mcp-x/surface.sock"]`,
      'startup_timeout_sec = 30',
      'tool_timeout_sec = 3600',
      'default_tools_approval_mode = "approve"',
      '',
    ].join('\n'),
  );
  assert.equal(plan.env.SCIENCEEVOLVE_API_KEY, 'sk-secret-value');
  // Without baseUrl, the key goes where Codex's own provider reads it.
  assert.equal(planPreset('codex', context({ baseUrl: undefined })).env.OPENAI_API_KEY, 'sk-secret-value');
});

test("codex without isolateHome: the user's CODEX_HOME stays, the settings go as -c overrides", () => {
  const plan = planPreset('codex', context({ home: undefined }));
  assert.equal(plan.env.CODEX_HOME, undefined);
  const overrides = plan.args.flatMap((a, i) => (plan.args[i - 1] === '-c' ? [a] : []));
  assert.ok(overrides.includes('model="m-1"'), overrides.join(' '));
  assert.ok(overrides.includes('features.plugins=false'));
  assert.ok(overrides.includes('mcp_servers.scienceevolve.default_tools_approval_mode="approve"'));
  assert.ok(overrides.includes('model_providers.scienceevolve.wire_api="responses"'));
  assert.equal(plan.args.at(-1), 'Add 2 and 40.');
});

test('gemini: the system settings file with a trusted server, no hooks, servers, commands or .env of the workspace; yolo, API-key auth and base URL', () => {
  const plan = planPreset('gemini', context());
  assert.deepEqual(plan.args, [
    '--approval-mode',
    'yolo',
    '--output-format',
    'text',
    '--model',
    'm-1',
    '--prompt=Add 2 and 40.',
  ]);
  assert.equal(plan.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH, '/rt/cli/gemini-settings.json');
  const settings = JSON.parse(fileText(plan, '/rt/cli/gemini-settings.json'));
  assert.equal(settings.mcpServers.scienceevolve.trust, true);
  assert.deepEqual(settings.mcp, { allowed: ['scienceevolve'], serverCommand: '' });
  assert.deepEqual(settings.hooksConfig, { enabled: false });
  assert.deepEqual(settings.tools, { discoveryCommand: '', callCommand: '' });
  assert.deepEqual(settings.admin, { extensions: { enabled: false } });
  assert.deepEqual(settings.advanced, { ignoreLocalEnv: true });
  assert.deepEqual(settings.security, { auth: { selectedType: 'gemini-api-key' } });
  assert.equal(plan.env.GEMINI_CLI_TRUST_WORKSPACE, 'true');
  assert.equal(plan.env.NODE_OPTIONS, '');
  assert.equal(plan.env.BASH_ENV, '');
  assert.equal(plan.env.GEMINI_API_KEY, 'sk-secret-value');
  assert.equal(plan.env.GOOGLE_GEMINI_BASE_URL, 'http://127.0.0.1:9999/v1');
  const kept = planPreset('gemini', context({ home: undefined }));
  assert.equal(kept.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH, '/rt/cli/gemini-settings.json');
});

test('gemini: refuses a config dir under a directory others can write (Gemini CLI would ignore its settings there)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'se-gemini-'));
  try {
    chmodSync(dir, 0o777);
    assert.throws(
      () => planPreset('gemini', context({ configDir: join(dir, 'cli') })),
      (error: unknown) => (error as { code?: string }).code === 'unsafe_path' && String(error).includes(dir),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('opencode: OPENCODE_CONFIG_CONTENT with the local server and an OpenAI-compatible provider; network extras off', () => {
  const plan = planPreset('opencode', context());
  assert.deepEqual(plan.args, ['run', '--model', 'scienceevolve/m-1', 'Add 2 and 40.']);
  const config = JSON.parse(plan.env.OPENCODE_CONFIG_CONTENT!);
  assert.deepEqual(config.mcp.scienceevolve, {
    type: 'local',
    command: [relay.command, ...relay.args],
    enabled: true,
    timeout: 30_000,
  });
  assert.deepEqual(config.provider.scienceevolve, {
    npm: '@ai-sdk/openai-compatible',
    name: 'ScienceEvolve',
    options: { baseURL: 'http://127.0.0.1:9999/v1', apiKey: '{env:SCIENCEEVOLVE_API_KEY}' },
    models: { 'm-1': { name: 'm-1' } },
  });
  assert.equal(config.model, 'scienceevolve/m-1');
  for (const name of ['AUTOUPDATE', 'MODELS_FETCH', 'SHARE', 'LSP_DOWNLOAD', 'PROJECT_CONFIG']) {
    assert.equal(plan.env[`OPENCODE_DISABLE_${name}`], '1', name);
  }
  // Without baseUrl: the model as given, the key under its own name.
  const own = planPreset('opencode', context({ baseUrl: undefined, model: 'anthropic/claude-x' }));
  assert.deepEqual(own.args, ['run', '--model', 'anthropic/claude-x', 'Add 2 and 40.']);
  assert.equal(own.env.MY_KEY, 'sk-secret-value');
});

test('pi: mcp.json (direct tools) and models.json in PI_CODING_AGENT_DIR, the adapter found beside pi', (t) => {
  const base = mkdtempSync(join(tmpdir(), 'se-pi-'));
  t.after(() => rmSync(base, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const modules = join(base, 'node_modules');
  mkdirSync(join(modules, '@mariozechner', 'pi-coding-agent', 'dist'), { recursive: true });
  writeFileSync(join(modules, '@mariozechner', 'pi-coding-agent', 'dist', 'cli.js'), '');
  mkdirSync(join(modules, '.bin'));
  symlinkSync('../@mariozechner/pi-coding-agent/dist/cli.js', join(modules, '.bin', 'pi'));
  // Not installed yet: a coded error that says where it looked.
  assert.throws(() => piMcpAdapter(join(modules, '.bin', 'pi')), {
    code: 'command_not_found',
    message: /needs the pi-mcp-adapter extension beside pi/,
  });
  mkdirSync(join(modules, 'pi-mcp-adapter'));
  writeFileSync(join(modules, 'pi-mcp-adapter', 'index.ts'), '');
  assert.throws(() => piMcpAdapter(join(modules, '.bin', 'pi')), {
    code: 'command_not_found',
    message: /imports @earendil-works\/pi-coding-agent/,
  });
  mkdirSync(join(modules, '@earendil-works'));
  symlinkSync('../@mariozechner/pi-coding-agent', join(modules, '@earendil-works', 'pi-coding-agent'));

  const plan = planPreset('pi', context(), join(modules, '.bin', 'pi'));
  const adapter = join(modules, 'pi-mcp-adapter', 'index.ts');
  assert.deepEqual(plan.args, [
    '-p',
    '--offline',
    '--no-session',
    '--no-extensions',
    '--no-skills',
    '--no-prompt-templates',
    '--no-themes',
    '-e',
    adapter,
    '--provider',
    'scienceevolve',
    '--model',
    'm-1',
    'Add 2 and 40.',
  ]);
  assert.equal(plan.env.PI_CODING_AGENT_DIR, '/rt/cli/home/.pi/agent');
  assert.equal(plan.env.PI_MCP_CONFIG_MODE, 'exclusive');
  assert.deepEqual(JSON.parse(fileText(plan, '/rt/cli/home/.pi/agent/mcp.json')), {
    mcpServers: { scienceevolve: { command: relay.command, args: relay.args, directTools: true } },
  });
  const models = JSON.parse(fileText(plan, '/rt/cli/home/.pi/agent/models.json'));
  assert.deepEqual(models.providers.scienceevolve, {
    baseUrl: 'http://127.0.0.1:9999/v1',
    api: 'openai-completions',
    apiKey: 'SCIENCEEVOLVE_API_KEY',
    models: [{ id: 'm-1' }],
  });
  assert.equal(plan.env.SCIENCEEVOLVE_API_KEY, 'sk-secret-value');
});

test('a command without a preset gets a generic mcpServers file for {mcpConfig}', () => {
  const plan = planCustom(context());
  assert.equal(plan.mcpConfigPath, '/rt/cli/mcp.json');
  assert.deepEqual(JSON.parse(fileText(plan, '/rt/cli/mcp.json')), {
    mcpServers: { scienceevolve: { type: 'stdio', command: relay.command, args: relay.args } },
  });
});
