/** The `claude` preset (Claude Code) of the `command` harness; the CLI facts are in docs/harnesses.md. */
import { join } from 'node:path';
import { claudeMcpConfig } from './harnessConfig.js';
import { type PresetContext, type PresetPlan, SURFACE_SERVER_NAME, json, mcpOptions } from './presetPlan.js';

/** Retries of a failed model request Claude Code makes: 2 (its own default retries for about 90 s). */
const CLAUDE_MAX_RETRIES = '2';

/**
 * Claude Code: `claude -p --output-format text --setting-sources user --mcp-config <file> --strict-mcp-config
 * --allowedTools …`. Every surface tool is allowed by name (a call not allowed is denied, and `claude` still
 * exits 0); tool search is off (it would hide MCP tools behind a search tool); its state goes to
 * `CLAUDE_CONFIG_DIR`. Nothing of the workspace's configuration is loaded: `-p` skips the workspace trust
 * dialog, so without `--setting-sources user` the hooks, `apiKeyHelper`, permissions and plugins of a
 * `.claude/settings.json` a service wrote there would run on the host; `--strict-mcp-config` leaves out
 * its `.mcp.json`. The user settings are the fresh home's (empty) with `isolateHome`, else the user's own.
 */
export function planClaude(context: PresetContext): PresetPlan {
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
      // Not "project" or "local": those are files in the workspace, which services can write.
      '--setting-sources',
      'user',
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
