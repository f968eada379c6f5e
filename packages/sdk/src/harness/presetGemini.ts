/** The `gemini` preset (Gemini CLI) of the `command` harness; the CLI facts are in docs/harnesses.md. */
import { join } from 'node:path';
import { geminiSettings } from './harnessConfig.js';
import { type PresetContext, type PresetPlan, json, mcpOptions } from './presetPlan.js';

/**
 * Gemini CLI: `gemini --approval-mode yolo --output-format text --prompt=…` with `settings.json` in the
 * fresh home's `.gemini/` (or, when the user's home is kept, as the system settings file named by
 * `GEMINI_CLI_SYSTEM_SETTINGS_PATH`). The server is trusted (an untrusted server's tools are silently
 * left out of a headless run), and so is the workspace (`GEMINI_CLI_TRUST_WORKSPACE`).
 */
export function planGemini(context: PresetContext): PresetPlan {
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
