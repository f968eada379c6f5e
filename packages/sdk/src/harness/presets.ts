/**
 * The `command` harness's presets (SPEC §10.2): for each agent CLI, the command, the headless arguments
 * with the task as prompt, the MCP configuration in the CLI's own format pointing at the invocation's
 * relay, the settings that let it call tools unattended, and `model`/`baseUrl`/`apiKeyEnv` translated
 * into the CLI's own settings. A preset only plans: it returns the files to write and the process to
 * start; `commandHarness.ts` writes and runs them.
 *
 * The CLI facts behind each setting (pinned versions in test/clis/package.json) are in docs/harnesses.md.
 */
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  type StdioLaunch,
  type TomlTable,
  type TomlValue,
  claudeMcpConfig,
  codexMcpTables,
  geminiSettings,
  opencodeConfig,
  piMcpConfig,
  renderToml,
  tomlKey,
  tomlValue,
} from '../bridge/harnessConfig.js';
import { SdkError } from '../errors.js';
import type { HarnessPreset } from '../workflow/workflowSchema.js';

/** The presets, in the order the docs list them. */
export const COMMAND_PRESETS: readonly HarnessPreset[] = ['claude', 'codex', 'gemini', 'opencode', 'pi'];

/** The name the invocation's surface has in every CLI's MCP configuration. */
export const SURFACE_SERVER_NAME = 'scienceevolve';

/**
 * The variable a preset puts the API key in when the CLI reads it from a variable the preset names (a
 * custom provider of Codex, OpenCode or pi): the key is never written into a file.
 */
export const PRESET_API_KEY_ENV = 'SCIENCEEVOLVE_API_KEY';

/** The provider id a preset registers for `baseUrl` where the CLI needs one (Codex, OpenCode, pi). */
export const PRESET_PROVIDER_ID = 'scienceevolve';

/** Seconds the CLI waits for one tool call before giving up on it: 3600. The bridge answers a stuck forwarded call itself after 60 s; `delegate` may run long. */
const TOOL_TIMEOUT_SEC = 3600;

/** Seconds the CLI waits for the relay to start and list the tools: 30 (the relay answers in milliseconds). */
const STARTUP_TIMEOUT_SEC = 30;

/** Retries of a failed model request Claude Code makes: 2 (its own default retries for about 90 s). */
const CLAUDE_MAX_RETRIES = '2';

/** What a preset (or a custom command) is planned from. */
export interface PresetContext {
  /** The task as the CLI's prompt. */
  prompt: string;
  /** The invocation's workspace (the CLI's cwd). */
  workspace: string;
  /** A directory of the attempt's runtime path for the harness's own files (configurations, output). */
  configDir: string;
  /** The fresh home directory when `isolateHome`, else undefined (the CLI keeps the user's home). */
  home: string | undefined;
  /** How the CLI launches the relay to the invocation's surface. */
  relay: StdioLaunch;
  /** The surface's tool names (Claude Code must be told each one it may call). */
  toolNames: readonly string[];
  /** `harness.model`. */
  model?: string;
  /** `harness.baseUrl`. */
  baseUrl?: string;
  /** `harness.apiKeyEnv`: the host variable's name. */
  apiKeyEnv?: string;
  /** The value of `apiKeyEnv` on the host (read by the harness; never written to a file). */
  apiKey?: string;
}

/** One file the harness writes (mode 0600) before the CLI starts. */
export interface PlannedFile {
  path: string;
  text: string;
}

/** What a preset plans. */
export interface PresetPlan {
  /** The executable (resolved on the CLI's PATH by the harness). */
  command: string;
  /** Its arguments, the prompt included. */
  args: string[];
  /** Variables set on top of the CLI's minimal environment and `envFrom`. */
  env: Record<string, string>;
  /** Files to write first. */
  files: PlannedFile[];
  /** The MCP configuration file (`{mcpConfig}` in custom arguments). */
  mcpConfigPath: string;
  /** A file the CLI writes its final answer to; its text is the answer when it exists (else stdout). */
  outputFile?: string;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

function mcpOptions(context: PresetContext) {
  return {
    serverName: SURFACE_SERVER_NAME,
    stdio: context.relay,
    startupTimeoutSec: STARTUP_TIMEOUT_SEC,
    toolTimeoutSec: TOOL_TIMEOUT_SEC,
  };
}

/**
 * The plan of `preset`. `resolvedCommand` is the absolute path the preset's command resolved to (pi finds
 * its MCP adapter beside it); undefined when it has not been resolved yet.
 *
 * @throws SdkError `command_not_found` when pi's MCP adapter is not installed beside pi.
 */
export function planPreset(preset: HarnessPreset, context: PresetContext, resolvedCommand?: string): PresetPlan {
  switch (preset) {
    case 'claude':
      return planClaude(context);
    case 'codex':
      return planCodex(context);
    case 'gemini':
      return planGemini(context);
    case 'opencode':
      return planOpencode(context);
    case 'pi':
      return planPi(context, resolvedCommand);
  }
}

/** The plan of a command without a preset: a generic `mcpServers` JSON file (the Claude Code and Gemini CLI shape) for `{mcpConfig}`. */
export function planCustom(context: PresetContext): PresetPlan {
  const mcpConfigPath = join(context.configDir, 'mcp.json');
  return {
    command: '',
    args: [],
    env: {},
    files: [{ path: mcpConfigPath, text: json(claudeMcpConfig(mcpOptions(context))) }],
    mcpConfigPath,
  };
}

/**
 * Claude Code: `claude -p --output-format text --mcp-config <file> --strict-mcp-config --allowedTools …`.
 * Every surface tool is allowed by name (a call not allowed is denied, and `claude` still exits 0); tool
 * search is off (it would hide MCP tools behind a search tool); its state goes to `CLAUDE_CONFIG_DIR`.
 */
function planClaude(context: PresetContext): PresetPlan {
  const mcpConfigPath = join(context.configDir, 'claude-mcp.json');
  const allowed = context.toolNames.map((name) => `mcp__${SURFACE_SERVER_NAME}__${name}`);
  const env: Record<string, string> = {
    ENABLE_TOOL_SEARCH: 'false',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: CLAUDE_MAX_RETRIES,
    DISABLE_AUTOUPDATER: '1',
  };
  if (context.home !== undefined) env.CLAUDE_CONFIG_DIR = join(context.home, '.claude');
  if (context.baseUrl !== undefined) env.ANTHROPIC_BASE_URL = context.baseUrl;
  if (context.apiKey !== undefined) env.ANTHROPIC_API_KEY = context.apiKey;
  return {
    command: 'claude',
    args: [
      '-p',
      '--output-format',
      'text',
      '--mcp-config',
      mcpConfigPath,
      '--strict-mcp-config',
      ...(allowed.length > 0 ? ['--allowedTools', allowed.join(',')] : []),
      ...(context.model === undefined ? [] : ['--model', context.model]),
      // `--allowedTools` takes several values: `--` ends it, and lets a prompt start with "-".
      '--',
      context.prompt,
    ],
    env,
    files: [{ path: mcpConfigPath, text: json(claudeMcpConfig(mcpOptions(context))) }],
    mcpConfigPath,
  };
}

/**
 * Codex: `codex exec --skip-git-repo-check --ephemeral -o <file>` with `$CODEX_HOME/config.toml` (or, when
 * the user's home is kept, the same settings as `-c key=value` overrides). The server's tools are
 * approved (`default_tools_approval_mode`), plugins are off (they run `git ls-remote` to the internet),
 * and a `baseUrl` becomes a `[model_providers.scienceevolve]` speaking the Responses API (Codex rejects
 * Chat Completions).
 */
function planCodex(context: PresetContext): PresetPlan {
  const outputFile = join(context.configDir, 'codex-last-message.txt');
  const env: Record<string, string> = {};
  const root: [string, TomlValue][] = [];
  const tables: TomlTable[] = [];
  if (context.model !== undefined) root.push(['model', context.model]);
  if (context.baseUrl !== undefined) {
    root.push(['model_provider', PRESET_PROVIDER_ID]);
    const provider: [string, TomlValue][] = [
      ['name', 'ScienceEvolve'],
      ['base_url', context.baseUrl],
      ['wire_api', 'responses'],
    ];
    if (context.apiKey !== undefined) {
      provider.push(['env_key', PRESET_API_KEY_ENV]);
      env[PRESET_API_KEY_ENV] = context.apiKey;
    }
    tables.push({ name: `model_providers.${PRESET_PROVIDER_ID}`, values: provider });
  } else if (context.apiKey !== undefined) {
    env.OPENAI_API_KEY = context.apiKey;
  }
  tables.push({ name: 'features', values: [['plugins', false]] });
  tables.push(...codexMcpTables(mcpOptions(context)));
  const all: TomlTable[] = [{ name: '', values: root }, ...tables];

  const files: PlannedFile[] = [];
  const overrides: string[] = [];
  let mcpConfigPath: string;
  if (context.home !== undefined) {
    const codexHome = join(context.home, '.codex');
    env.CODEX_HOME = codexHome;
    mcpConfigPath = join(codexHome, 'config.toml');
    files.push({ path: mcpConfigPath, text: renderToml(root.length > 0 ? all : tables) });
  } else {
    // The user's own CODEX_HOME (and login) stays; our settings go on the command line, which Codex
    // applies over its config.toml. The file is still written, for reading and for `{mcpConfig}`.
    mcpConfigPath = join(context.configDir, 'codex-config.toml');
    files.push({ path: mcpConfigPath, text: renderToml(root.length > 0 ? all : tables) });
    for (const table of all) {
      for (const [key, value] of table.values) {
        const path = table.name === '' ? tomlKey(key) : `${table.name}.${tomlKey(key)}`;
        overrides.push('-c', `${path}=${tomlValue(value)}`);
      }
    }
  }
  return {
    command: 'codex',
    args: [
      'exec',
      '--skip-git-repo-check',
      '--ephemeral',
      '--color',
      'never',
      '-o',
      outputFile,
      ...overrides,
      '--',
      context.prompt,
    ],
    env,
    files,
    mcpConfigPath,
    outputFile,
  };
}

/**
 * Gemini CLI: `gemini --approval-mode yolo --output-format text --prompt=…` with `settings.json` in the
 * fresh home's `.gemini/` (or, when the user's home is kept, as the system settings file named by
 * `GEMINI_CLI_SYSTEM_SETTINGS_PATH`). The server is trusted (an untrusted server's tools are silently
 * left out of a headless run), and so is the workspace (`GEMINI_CLI_TRUST_WORKSPACE`).
 */
function planGemini(context: PresetContext): PresetPlan {
  const settings: Record<string, unknown> = geminiSettings(mcpOptions(context));
  const env: Record<string, string> = { GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  if (context.apiKey !== undefined) {
    env.GEMINI_API_KEY = context.apiKey;
    settings.security = { auth: { selectedType: 'gemini-api-key' } };
  }
  if (context.baseUrl !== undefined) env.GOOGLE_GEMINI_BASE_URL = context.baseUrl;
  let mcpConfigPath: string;
  if (context.home !== undefined) {
    mcpConfigPath = join(context.home, '.gemini', 'settings.json');
  } else {
    mcpConfigPath = join(context.configDir, 'gemini-settings.json');
    env.GEMINI_CLI_SYSTEM_SETTINGS_PATH = mcpConfigPath;
  }
  return {
    command: 'gemini',
    args: [
      '--approval-mode',
      'yolo',
      '--output-format',
      'text',
      ...(context.model === undefined ? [] : ['--model', context.model]),
      // One argument: a prompt that starts with "-" is still the prompt.
      `--prompt=${context.prompt}`,
    ],
    env,
    files: [{ path: mcpConfigPath, text: json(settings) }],
    mcpConfigPath,
  };
}

/**
 * OpenCode: `opencode run [--model …] <prompt>` with its whole configuration in `OPENCODE_CONFIG_CONTENT`
 * (also written to a file for reading). A `baseUrl` becomes a provider of the bundled OpenAI-compatible
 * SDK (Chat Completions); auto-update, the models.dev fetch, sharing and LSP downloads are turned off (each
 * reaches the internet).
 */
function planOpencode(context: PresetContext): PresetPlan {
  const config: Record<string, unknown> = opencodeConfig(mcpOptions(context));
  const env: Record<string, string> = {
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  };
  let model = context.model;
  if (context.baseUrl !== undefined) {
    const options: Record<string, string> = { baseURL: context.baseUrl };
    if (context.apiKey !== undefined) {
      options.apiKey = `{env:${PRESET_API_KEY_ENV}}`;
      env[PRESET_API_KEY_ENV] = context.apiKey;
    }
    const models = context.model === undefined ? {} : { [context.model]: { name: context.model } };
    config.provider = {
      [PRESET_PROVIDER_ID]: { npm: '@ai-sdk/openai-compatible', name: 'ScienceEvolve', options, models },
    };
    if (context.model !== undefined) model = `${PRESET_PROVIDER_ID}/${context.model}`;
  } else if (context.apiKey !== undefined && context.apiKeyEnv !== undefined) {
    // No provider of ours: the key goes under its own name, which OpenCode's built-in providers read.
    env[context.apiKeyEnv] = context.apiKey;
  }
  if (model !== undefined) config.model = model;
  const text = json(config);
  env.OPENCODE_CONFIG_CONTENT = text;
  const mcpConfigPath = join(context.configDir, 'opencode.json');
  return {
    command: 'opencode',
    args: ['run', ...(model === undefined ? [] : ['--model', model]), context.prompt],
    env,
    files: [{ path: mcpConfigPath, text }],
    mcpConfigPath,
  };
}

/**
 * pi: `pi -p --offline --no-session -e <pi-mcp-adapter> [--provider scienceevolve] [--model …] <prompt>`
 * with `mcp.json` (tools offered directly) and, for a `baseUrl`, `models.json` (a Chat Completions
 * provider) in `PI_CODING_AGENT_DIR`. The adapter is the `pi-mcp-adapter` package installed beside pi.
 */
function planPi(context: PresetContext, resolvedCommand: string | undefined): PresetPlan {
  const agentDir =
    context.home !== undefined ? join(context.home, '.pi', 'agent') : join(context.configDir, 'pi-agent');
  const mcpConfigPath = join(agentDir, 'mcp.json');
  const env: Record<string, string> = { PI_CODING_AGENT_DIR: agentDir };
  const files: PlannedFile[] = [{ path: mcpConfigPath, text: json(piMcpConfig(mcpOptions(context))) }];
  const selection: string[] = [];
  if (context.baseUrl !== undefined) {
    if (context.apiKey !== undefined) env[PRESET_API_KEY_ENV] = context.apiKey;
    files.push({
      path: join(agentDir, 'models.json'),
      text: json({
        providers: {
          [PRESET_PROVIDER_ID]: {
            baseUrl: context.baseUrl,
            api: 'openai-completions',
            // pi reads a value that names a set variable from that variable; a local server ignores the key.
            apiKey: context.apiKey === undefined ? 'none' : PRESET_API_KEY_ENV,
            models: context.model === undefined ? [] : [{ id: context.model }],
          },
        },
      }),
    });
    selection.push('--provider', PRESET_PROVIDER_ID);
  } else if (context.apiKey !== undefined && context.apiKeyEnv !== undefined) {
    env[context.apiKeyEnv] = context.apiKey;
  }
  if (context.model !== undefined) selection.push('--model', context.model);
  const adapter = resolvedCommand === undefined ? 'pi-mcp-adapter' : piMcpAdapter(resolvedCommand);
  return {
    command: 'pi',
    args: ['-p', '--offline', '--no-session', '-e', adapter, ...selection, context.prompt],
    env,
    files,
    mcpConfigPath,
  };
}

/**
 * The `pi-mcp-adapter` extension's entry beside the `pi` that runs: the `node_modules` directory that
 * holds pi's package (a local install's `node_modules/.bin/pi`, or a global one) also holds the adapter.
 * The adapter imports pi's packages as `@earendil-works/pi-*`; those names must resolve too.
 *
 * @throws SdkError `command_not_found` naming where it looked.
 */
export function piMcpAdapter(resolvedPi: string): string {
  let real: string;
  try {
    real = realpathSync(resolvedPi);
  } catch {
    real = resolvedPi;
  }
  let dir = dirname(real);
  let modules: string | undefined;
  for (let depth = 0; depth < 32; depth++) {
    if (basename(dir) === 'node_modules') {
      modules = dir;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  const entry = modules === undefined ? undefined : join(modules, 'pi-mcp-adapter', 'index.ts');
  if (entry === undefined || !existsSync(entry)) {
    throw new SdkError(
      'command_not_found',
      `the pi preset needs the pi-mcp-adapter extension beside pi (${real}), and it is not installed there`,
      {
        remedy: `install it next to pi: \`npm install pi-mcp-adapter\` in ${modules === undefined ? "pi's installation" : dirname(modules)}`,
        data: { pi: real, ...(entry === undefined ? {} : { adapter: entry }) },
      },
    );
  }
  if (!existsSync(join(modules!, '@earendil-works', 'pi-coding-agent'))) {
    throw new SdkError(
      'command_not_found',
      `pi-mcp-adapter imports @earendil-works/pi-coding-agent, which does not resolve in ${modules}`,
      {
        remedy:
          'link the names to the installed pi packages: `ln -s ../@mariozechner/pi-coding-agent node_modules/@earendil-works/pi-coding-agent` (and pi-ai, pi-tui, pi-agent-core)',
        data: { adapter: entry },
      },
    );
  }
  return entry;
}
