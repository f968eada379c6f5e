/** The `gemini` preset (Gemini CLI) of the `command` harness; the CLI facts are in docs/harnesses.md. */
import { realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { geminiSettings } from './harnessConfig.js';
import { SdkError } from '../errors.js';
import { type PresetContext, type PresetPlan, SURFACE_SERVER_NAME, json, mcpOptions } from './presetPlan.js';

/**
 * Variables set (empty) for Gemini CLI so that a `.gemini/.env` in the workspace cannot set them: Gemini
 * CLI copies that file into its environment, but never over a variable that is already set. Each one
 * makes a program load code it names (node, bash, the dynamic linker, git's config).
 */
const GEMINI_PINNED_ENV: Readonly<Record<string, string>> = {
  NODE_OPTIONS: '',
  BASH_ENV: '',
  ENV: '',
  LD_PRELOAD: '',
  LD_AUDIT: '',
  GIT_CONFIG_COUNT: '0',
};

/**
 * Gemini CLI: `gemini --approval-mode yolo --output-format text --prompt=…` with its settings as the
 * *system* settings file (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`), the one layer that overrides a workspace's
 * `.gemini/settings.json`. The workspace must be trusted (`GEMINI_CLI_TRUST_WORKSPACE`): an untrusted one
 * starts no stdio MCP server and refuses yolo. A trusted workspace's settings are read, so the system file
 * turns off what in them would run a program on the host: hooks (`hooksConfig.enabled`), every MCP server
 * but the surface's (`mcp.allowed`), the tool discovery and call commands, the MCP server command,
 * extensions, and the workspace's `.env` (`advanced.ignoreLocalEnv`); {@link GEMINI_PINNED_ENV} keeps a
 * `.gemini/.env` from setting the variables that load code. What such a file sets besides stays possible
 * (docs/harnesses.md says so).
 */
export function planGemini(context: PresetContext): PresetPlan {
  checkSystemSettingsDir(context.configDir);
  const settings: Record<string, unknown> = {
    ...geminiSettings(mcpOptions(context)),
    mcp: { allowed: [SURFACE_SERVER_NAME], serverCommand: '' },
    hooksConfig: { enabled: false },
    tools: { discoveryCommand: '', callCommand: '' },
    admin: { extensions: { enabled: false } },
    advanced: { ignoreLocalEnv: true },
  };
  const env: Record<string, string> = { ...GEMINI_PINNED_ENV, GEMINI_CLI_TRUST_WORKSPACE: 'true' };
  if (context.apiKey !== undefined) {
    env.GEMINI_API_KEY = context.apiKey;
    settings.security = { auth: { selectedType: 'gemini-api-key' } };
  }
  if (context.baseUrl !== undefined) env.GOOGLE_GEMINI_BASE_URL = context.baseUrl;
  const mcpConfigPath = join(context.configDir, 'gemini-settings.json');
  env.GEMINI_CLI_SYSTEM_SETTINGS_PATH = mcpConfigPath;
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
 * Gemini CLI skips a system settings file (with a warning, and runs on without it) when the file or any
 * directory above it, followed through links or not, is writable by group or others: then the
 * workspace's settings would win again. So the preset refuses to start it there.
 *
 * @throws SdkError `unsafe_path` naming the directory.
 */
function checkSystemSettingsDir(configDir: string): void {
  let real = configDir;
  try {
    real = realpathSync(configDir);
  } catch {
    // Not there yet: the harness creates it (0700); its parents are checked as written.
  }
  for (const start of new Set([configDir, real])) {
    for (let dir = start; ; dir = dirname(dir)) {
      let mode: number | undefined;
      try {
        mode = statSync(dir).mode;
      } catch {
        // Not there (created 0700 by the harness) or not readable: nothing Gemini CLI could object to here.
      }
      if (mode !== undefined && (mode & 0o022) !== 0) {
        throw new SdkError(
          'unsafe_path',
          `the gemini preset's settings would be under ${dir}, which others can write (mode ${(mode & 0o7777).toString(8)}); Gemini CLI ignores a system settings file there, and the workspace's own settings would apply`,
          {
            remedy:
              'put the data dir (--data-dir, or TMPDIR for a temporary one) in a directory that only you can write',
            data: { directory: dir },
          },
        );
      }
      if (dirname(dir) === dir) break;
    }
  }
}
