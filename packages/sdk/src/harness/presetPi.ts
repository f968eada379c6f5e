/**
 * The `pi` preset (pi with the pi-mcp-adapter extension) of the `command` harness, and where the adapter is
 * found beside pi; the CLI facts are in docs/harnesses.md.
 */
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { piMcpConfig } from './harnessConfig.js';
import { SdkError } from '../errors.js';
import {
  PRESET_API_KEY_ENV,
  PRESET_PROVIDER_ID,
  type PlannedFile,
  type PresetContext,
  type PresetPlan,
  json,
  mcpOptions,
} from './presetPlan.js';

/**
 * pi: `pi -p --offline --no-session --no-extensions --no-skills --no-prompt-templates --no-themes -e
 * <pi-mcp-adapter> [--provider scienceevolve] [--model …] <prompt>` with `mcp.json` (tools offered directly)
 * and, for a `baseUrl`, `models.json` (a Chat Completions provider) in `PI_CODING_AGENT_DIR`. The adapter is
 * the `pi-mcp-adapter` package installed beside pi. Of the workspace, pi would load the extensions of
 * `.pi/extensions/` and those `.pi/settings.json` lists (code run in pi), and the adapter the MCP servers of
 * `.mcp.json` and `.pi/mcp.json`: `--no-extensions` keeps only the `-e` one, `PI_MCP_CONFIG_MODE=exclusive`
 * only the agent dir's `mcp.json`. pi has no switch for the rest of `.pi/settings.json` (docs/harnesses.md).
 */
export function planPi(context: PresetContext, resolvedCommand: string | undefined): PresetPlan {
  const agentDir =
    context.home !== undefined ? join(context.home, '.pi', 'agent') : join(context.configDir, 'pi-agent');
  const mcpConfigPath = join(agentDir, 'mcp.json');
  const env: Record<string, string> = { PI_CODING_AGENT_DIR: agentDir, PI_MCP_CONFIG_MODE: 'exclusive' };
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
    args: [
      '-p',
      '--offline',
      '--no-session',
      // Discovery off (the workspace's .pi/ is writable by services); the `-e` extension still loads.
      '--no-extensions',
      '--no-skills',
      '--no-prompt-templates',
      '--no-themes',
      '-e',
      adapter,
      ...selection,
      context.prompt,
    ],
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
