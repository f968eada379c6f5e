/**
 * What every preset of the `command` harness shares (SPEC §10.2): what a preset is planned from, what it
 * plans (files to write, the process to start), the names it gives the surface and its provider, and the
 * MCP options of the relay. Each preset is a file of its own (`preset<Name>.ts`); `presets.ts` picks one.
 */
import type { StdioLaunch } from './harnessConfig.js';

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

/** A JSON file's text: two-space indent and a final newline. */
export const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The relay's entry in a CLI's MCP configuration: the surface's server name, the launch, the timeouts. */
export function mcpOptions(context: PresetContext) {
  return {
    serverName: SURFACE_SERVER_NAME,
    stdio: context.relay,
    startupTimeoutSec: STARTUP_TIMEOUT_SEC,
    toolTimeoutSec: TOOL_TIMEOUT_SEC,
  };
}
