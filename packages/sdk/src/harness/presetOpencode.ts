/** The `opencode` preset (OpenCode) of the `command` harness; the CLI facts are in docs/harnesses.md. */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SdkError } from '../errors.js';
import { opencodeConfig } from './harnessConfig.js';
import {
  PRESET_API_KEY_ENV,
  PRESET_PROVIDER_ID,
  type PresetContext,
  type PresetPlan,
  json,
  mcpOptions,
} from './presetPlan.js';

/**
 * OpenCode: `opencode run [--model …] <prompt>` with its whole configuration in `OPENCODE_CONFIG_CONTENT`
 * (also written to a file for reading). A `baseUrl` becomes a provider of the bundled OpenAI-compatible
 * SDK (Chat Completions); auto-update, the models.dev fetch, sharing and LSP downloads are turned off (each
 * reaches the internet). The workspace's configuration is not read (`OPENCODE_DISABLE_PROJECT_CONFIG`): its
 * `opencode.json` and `.opencode/` (MCP servers, plugins, agents, commands) — files a service can write —
 * would otherwise start programs and load code on the host; so is its AGENTS.md, which goes with them.
 * OpenCode 1.18 still loads the plugins of a workspace's `.opencode/plugin(s)/` through a newer config path
 * that heeds neither the variable nor `--pure`: {@link checkOpencodeWorkspace} refuses such a workspace, and
 * sandboxed services get the workspace's `.opencode` read-only (invocation/invocation.ts).
 */
export function planOpencode(context: PresetContext): PresetPlan {
  const config: Record<string, unknown> = opencodeConfig(mcpOptions(context));
  const env: Record<string, string> = {
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_PROJECT_CONFIG: '1',
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

/** The folders of a workspace's `.opencode` whose files OpenCode loads as plugins. */
const PLUGIN_DIRS = ['plugin', 'plugins'] as const;

/**
 * Refuses to start OpenCode in a workspace whose `.opencode` is a link or a file, or holds anything under
 * `plugin/` or `plugins/`: OpenCode would load it as code on the host (no switch stops it), and a service may
 * have written it. Throws `workspace_config_refused` naming the path.
 */
export async function checkOpencodeWorkspace(agent: string, workspace: string): Promise<void> {
  const dir = join(workspace, '.opencode');
  const refuse = (path: string, what: string) =>
    new SdkError('workspace_config_refused', `agent "${agent}": OpenCode was not started: ${path} ${what}`, {
      remedy: `remove ${path} (read it first: a service may have written it); OpenCode loads workspace plugins whatever its settings say`,
      data: { agent, path },
    });
  const stat = await lstat(dir).catch(() => undefined);
  if (stat === undefined) return;
  if (!stat.isDirectory()) throw refuse(dir, 'is not a plain directory (a link or a file)');
  for (const name of PLUGIN_DIRS) {
    const path = join(dir, name);
    const inner = await lstat(path).catch(() => undefined);
    if (inner === undefined) continue;
    if (!inner.isDirectory()) throw refuse(path, 'is not a plain directory');
    const entries = await readdir(path);
    if (entries.length > 0) throw refuse(path, `holds plugins OpenCode would load (${entries.slice(0, 3).join(', ')})`);
  }
}
