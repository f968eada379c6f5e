/** The `codex` preset (Codex) of the `command` harness; the CLI facts are in docs/harnesses.md. */
import { join } from 'node:path';
import { type TomlTable, type TomlValue, codexMcpTables, renderToml, tomlKey, tomlValue } from './harnessConfig.js';
import {
  PRESET_API_KEY_ENV,
  PRESET_PROVIDER_ID,
  type PlannedFile,
  type PresetContext,
  type PresetPlan,
  mcpOptions,
} from './presetPlan.js';

/**
 * Codex: `codex exec --skip-git-repo-check --ephemeral -o <file>` with `$CODEX_HOME/config.toml` (or, when
 * the user's home is kept, the same settings as `-c key=value` overrides). The server's tools are
 * approved (`default_tools_approval_mode`), plugins are off (they run `git ls-remote` to the internet),
 * and a `baseUrl` becomes a `[model_providers.scienceevolve]` speaking the Responses API (Codex rejects
 * Chat Completions).
 */
export function planCodex(context: PresetContext): PresetPlan {
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
