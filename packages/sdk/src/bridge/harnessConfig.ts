/**
 * The MCP configuration an external harness expects, pointing at an agent's stdio face (a command the
 * harness launches) or its HTTP face (a URL, with the bearer token taken from an environment variable
 * by the harness — the token itself is never written into a configuration).
 *
 * Formats (field names checked against each harness's documentation):
 * - `claude`: Claude Code `--mcp-config` JSON, `{ "mcpServers": { name: { type: "stdio", command, args, env } } }`
 *   or `{ type: "http", url, headers: { Authorization: "Bearer ${VAR}" } }` (Claude Code expands `${VAR}`).
 * - `codex`: Codex `config.toml`, `[mcp_servers.<name>]` with `command`/`args`/`env` or `url` and
 *   `bearer_token_env_var`, plus `startup_timeout_sec` and `tool_timeout_sec`.
 * - `gemini`: Gemini CLI `settings.json`, `{ "mcpServers": { name: { command, args, env, timeout } } }` or
 *   `{ httpUrl, headers: { Authorization: "Bearer $VAR" }, timeout }` (`timeout` in ms; Gemini expands `$VAR`).
 * - `opencode`: OpenCode config JSON (for `OPENCODE_CONFIG_CONTENT` or `opencode.json`),
 *   `{ "mcp": { name: { type: "local", command: [cmd, ...args], environment, enabled, timeout } } }` or
 *   `{ type: "remote", url, headers: { Authorization: "Bearer {env:VAR}" }, enabled, timeout }` (OpenCode
 *   1.x; `timeout` is the tool-listing timeout in ms, and `{env:VAR}` is expanded in
 *   `OPENCODE_CONFIG_CONTENT` since 1.1.64). With `opencodeLayout: 'v2'` the servers go under
 *   `mcp.servers` without `enabled`/`timeout`, as OpenCode 2 expects.
 */
import { SdkError } from '../errors.js';

/** The harnesses {@link harnessConfig} writes for. */
export const HARNESS_CONFIG_FORMATS = ['claude', 'codex', 'gemini', 'opencode'] as const;
/** One of {@link HARNESS_CONFIG_FORMATS}. */
export type HarnessConfigFormat = (typeof HARNESS_CONFIG_FORMATS)[number];

/** Input of {@link harnessConfig}: exactly one of `stdio` and `http`. */
export interface HarnessConfigOptions {
  format: HarnessConfigFormat;
  /** The server's name in the harness (its tools appear as e.g. `mcp__<serverName>__<tool>` in Claude Code). `[A-Za-z0-9_-]`, 1–64 characters. */
  serverName: string;
  /** The stdio face: the command the harness launches. */
  stdio?: { command: string; args: readonly string[]; env?: Readonly<Record<string, string>> };
  /** The HTTP face: its URL and the name of the environment variable that holds its token. */
  http?: { url: string; tokenEnv: string };
  /** Seconds the harness waits for the server to start and list its tools (Codex `startup_timeout_sec`, OpenCode 1.x `timeout`). Default 120. */
  startupTimeoutSec?: number;
  /**
   * Seconds the harness waits for one tool call (Codex `tool_timeout_sec`, Gemini `timeout`). Default 3600 (1 h): the bridge answers a stuck forwarded call itself after 60 s, and the
   * fixed catalog's `delegate` runs another agent, which may take long.
   */
  toolTimeoutSec?: number;
  /** OpenCode's config layout: `v1` puts servers under `mcp`, `v2` under `mcp.servers`. Default `v1`. */
  opencodeLayout?: 'v1' | 'v2';
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function tomlString(value: string): string {
  // JSON string syntax is a valid TOML basic string for every code point JSON.stringify emits.
  return JSON.stringify(value);
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

function tomlArray(values: readonly string[]): string {
  return `[${values.map(tomlString).join(', ')}]`;
}

function validate(options: HarnessConfigOptions): void {
  if (!(HARNESS_CONFIG_FORMATS as readonly string[]).includes(options.format)) {
    throw new SdkError('usage', `unknown harness config format "${options.format}"`, {
      remedy: `Use one of: ${HARNESS_CONFIG_FORMATS.join(', ')}.`,
    });
  }
  if (!SERVER_NAME.test(options.serverName)) {
    throw new SdkError('usage', `server name "${options.serverName}" is not 1–64 characters of [A-Za-z0-9_-]`, {
      remedy: 'Pick a server name of letters, digits, "_" and "-".',
    });
  }
  if ((options.stdio === undefined) === (options.http === undefined)) {
    throw new SdkError('usage', 'a harness config points at exactly one face: give either stdio or http', {
      remedy: 'Pass the stdio command, or the HTTP URL with its token variable, not both.',
    });
  }
  if (options.http !== undefined && !ENV_NAME.test(options.http.tokenEnv)) {
    throw new SdkError('usage', `"${options.http.tokenEnv}" is not an environment variable name`, {
      remedy: 'Name the variable that holds the token (e.g. SCIENCEEVOLVE_BRIDGE_TOKEN), never the token itself.',
    });
  }
  for (const key of Object.keys(options.stdio?.env ?? {})) {
    if (!ENV_NAME.test(key)) throw new SdkError('usage', `"${key}" is not an environment variable name`);
  }
}

/**
 * The text of the MCP configuration `format` expects, ending with a newline: JSON for `claude`,
 * `gemini` and `opencode`, TOML for `codex`.
 *
 * @throws SdkError `usage` for an unknown format, an invalid server or variable name, or not exactly one face.
 */
export function harnessConfig(options: HarnessConfigOptions): string {
  validate(options);
  const startup = options.startupTimeoutSec ?? 120;
  const toolTimeout = options.toolTimeoutSec ?? 3600;
  const { stdio, http, serverName } = options;
  const env = stdio?.env === undefined || Object.keys(stdio.env).length === 0 ? undefined : { ...stdio.env };
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  switch (options.format) {
    case 'claude':
      return json({
        mcpServers: {
          [serverName]: stdio
            ? { type: 'stdio', command: stdio.command, args: [...stdio.args], ...(env ? { env } : {}) }
            : { type: 'http', url: http!.url, headers: { Authorization: `Bearer \${${http!.tokenEnv}}` } },
        },
      });
    case 'gemini':
      return json({
        mcpServers: {
          [serverName]: stdio
            ? { command: stdio.command, args: [...stdio.args], ...(env ? { env } : {}), timeout: toolTimeout * 1000 }
            : {
                httpUrl: http!.url,
                headers: { Authorization: `Bearer \${${http!.tokenEnv}}` },
                timeout: toolTimeout * 1000,
              },
        },
      });
    case 'opencode': {
      const v1 = (options.opencodeLayout ?? 'v1') === 'v1';
      const common = v1 ? { enabled: true, timeout: startup * 1000 } : {};
      const server = stdio
        ? { type: 'local', command: [stdio.command, ...stdio.args], ...(env ? { environment: env } : {}), ...common }
        : { type: 'remote', url: http!.url, headers: { Authorization: `Bearer {env:${http!.tokenEnv}}` }, ...common };
      return json({
        $schema: 'https://opencode.ai/config.json',
        mcp: v1 ? { [serverName]: server } : { servers: { [serverName]: server } },
      });
    }
    case 'codex': {
      const table = `mcp_servers.${tomlKey(serverName)}`;
      const lines = [`[${table}]`];
      if (stdio) {
        lines.push(`command = ${tomlString(stdio.command)}`, `args = ${tomlArray(stdio.args)}`);
      } else {
        lines.push(`url = ${tomlString(http!.url)}`, `bearer_token_env_var = ${tomlString(http!.tokenEnv)}`);
      }
      lines.push(`startup_timeout_sec = ${startup}`, `tool_timeout_sec = ${toolTimeout}`);
      if (env) {
        lines.push('', `[${table}.env]`);
        for (const [key, value] of Object.entries(env)) lines.push(`${tomlKey(key)} = ${tomlString(value)}`);
      }
      return `${lines.join('\n')}\n`;
    }
  }
}
