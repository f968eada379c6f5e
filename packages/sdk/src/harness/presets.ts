/**
 * The `command` harness's presets (SPEC §10.2): for each agent CLI, the command, the headless arguments
 * with the task as prompt, the MCP configuration in the CLI's own format pointing at the invocation's
 * relay, the settings that let it call tools unattended, and `model`/`baseUrl`/`apiKeyEnv` translated
 * into the CLI's own settings. A preset only plans: it returns the files to write and the process to
 * start; `commandHarness.ts` writes and runs them. This file picks a preset; each preset is a file of
 * its own (`presetClaude.ts` … `presetPi.ts`), and what they share is `presetPlan.ts`.
 *
 * The CLI facts behind each setting (pinned versions in test/clis/package.json) are in docs/harnesses.md.
 */
import { join } from 'node:path';
import { HARNESS_PRESETS } from '../schemas/harnessNames.js';
import { claudeMcpConfig } from './harnessConfig.js';
import type { HarnessPreset } from '../workflow/workflowSchema.js';
import { planClaude } from './presetClaude.js';
import { planCodex } from './presetCodex.js';
import { planGemini } from './presetGemini.js';
import { planOpencode } from './presetOpencode.js';
import { planPi } from './presetPi.js';
import { type PresetContext, type PresetPlan, json, mcpOptions } from './presetPlan.js';

export {
  PRESET_API_KEY_ENV,
  PRESET_PROVIDER_ID,
  type PlannedFile,
  type PresetContext,
  type PresetPlan,
  SURFACE_SERVER_NAME,
} from './presetPlan.js';
export { piMcpAdapter } from './presetPi.js';

/** The presets, in the order the docs list them. */
export const COMMAND_PRESETS: readonly HarnessPreset[] = HARNESS_PRESETS;

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
