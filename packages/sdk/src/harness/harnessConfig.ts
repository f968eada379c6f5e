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
 * - `pi`: the `pi-mcp-adapter` extension's `mcp.json` in `$PI_CODING_AGENT_DIR`,
 *   `{ "mcpServers": { name: { command, args, env, directTools: true } } }` or `{ url, headers, directTools: true }`.
 *
 * Each format is written so that the CLI calls the tools headless, without asking: Codex gets
 * `default_tools_approval_mode = "approve"` (without it `codex exec` refuses every call and still exits 0),
 * Gemini CLI `"trust": true` (an untrusted server's tools are left out of a headless run), pi
 * `"directTools": true` (the tools are offered as tools, not behind the adapter's proxy tool). Claude Code
 * has no approval field in `--mcp-config`: pass `--allowedTools mcp__<name>` (see docs/bridges.md).
 *
 * One writer a format: the `command` harness's presets (`harness/presets.ts`) use the same functions.
 */
import { SdkError } from '../errors.js';
import { HARNESS_PRESETS } from '../schemas/harnessNames.js';

/** The harnesses {@link harnessConfig} writes for. @internal */
export const HARNESS_CONFIG_FORMATS = HARNESS_PRESETS;
/** One of {@link HARNESS_CONFIG_FORMATS}. @internal */
export type HarnessConfigFormat = (typeof HARNESS_CONFIG_FORMATS)[number];

/** The stdio face: the command the harness launches. */
export interface StdioLaunch {
  command: string;
  args: readonly string[];
  env?: Readonly<Record<string, string>>;
}

/** The HTTP face: its URL and the name of the environment variable that holds its token. */
export interface HttpTarget {
  url: string;
  tokenEnv: string;
}

/** Input of {@link harnessConfig}: exactly one of `stdio` and `http`. @internal */
export interface HarnessConfigOptions {
  format: HarnessConfigFormat;
  /** The server's name in the harness (its tools appear as e.g. `mcp__<serverName>__<tool>` in Claude Code). `[A-Za-z0-9_-]`, 1–64 characters. */
  serverName: string;
  /** The stdio face: the command the harness launches. */
  stdio?: StdioLaunch;
  /** The HTTP face: its URL and the name of the environment variable that holds its token. */
  http?: HttpTarget;
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

/** A TOML value harness configurations use: a string, a number, a boolean or an array of strings. */
export type TomlValue = string | number | boolean | readonly string[];

/** One TOML table: its dotted name (empty for the root) and its keys in order. */
export interface TomlTable {
  name: string;
  values: ReadonlyArray<readonly [key: string, value: TomlValue]>;
}

function tomlString(value: string): string {
  // JSON string syntax is a valid TOML basic string for every code point JSON.stringify emits.
  return JSON.stringify(value);
}

/** A bare TOML key when it can be one, a quoted key otherwise. */
export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/** A TOML value. */
export function tomlValue(value: TomlValue): string {
  if (typeof value === 'string') return tomlString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `[${value.map(tomlString).join(', ')}]`;
}

/** TOML text of `tables` (the root table, when given, must come first), ending with a newline. */
export function renderToml(tables: readonly TomlTable[]): string {
  const blocks = tables.map((t) => {
    const lines = t.name === '' ? [] : [`[${t.name}]`];
    for (const [key, value] of t.values) lines.push(`${tomlKey(key)} = ${tomlValue(value)}`);
    return lines.join('\n');
  });
  return `${blocks.join('\n\n')}\n`;
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

interface Resolved {
  serverName: string;
  stdio: StdioLaunch | undefined;
  http: HttpTarget | undefined;
  env: Record<string, string> | undefined;
  startup: number;
  toolTimeout: number;
}

function resolve(options: HarnessConfigOptions): Resolved {
  validate(options);
  const env = options.stdio?.env;
  return {
    serverName: options.serverName,
    stdio: options.stdio,
    http: options.http,
    env: env === undefined || Object.keys(env).length === 0 ? undefined : { ...env },
    startup: options.startupTimeoutSec ?? 120,
    toolTimeout: options.toolTimeoutSec ?? 3600,
  };
}

/** A JSON object with one own key: a computed key defines the property, so even `__proto__` stays data. */
function single(key: string, value: unknown): Record<string, unknown> {
  return { [key]: value };
}

/** Claude Code's `--mcp-config` document. */
export function claudeMcpConfig(options: Omit<HarnessConfigOptions, 'format'>): Record<string, unknown> {
  const { serverName, stdio, http, env } = resolve({ ...options, format: 'claude' });
  return {
    mcpServers: single(
      serverName,
      stdio
        ? { type: 'stdio', command: stdio.command, args: [...stdio.args], ...(env ? { env } : {}) }
        : { type: 'http', url: http!.url, headers: { Authorization: `Bearer \${${http!.tokenEnv}}` } },
    ),
  };
}

/** Gemini CLI's `settings.json` document (`mcpServers`, each trusted). */
export function geminiSettings(options: Omit<HarnessConfigOptions, 'format'>): Record<string, unknown> {
  const { serverName, stdio, http, env, toolTimeout } = resolve({ ...options, format: 'gemini' });
  return {
    mcpServers: single(
      serverName,
      stdio
        ? {
            command: stdio.command,
            args: [...stdio.args],
            ...(env ? { env } : {}),
            timeout: toolTimeout * 1000,
            trust: true,
          }
        : {
            httpUrl: http!.url,
            headers: { Authorization: `Bearer \${${http!.tokenEnv}}` },
            timeout: toolTimeout * 1000,
            trust: true,
          },
    ),
  };
}

/** OpenCode's config document (for `OPENCODE_CONFIG_CONTENT` or `opencode.json`). */
export function opencodeConfig(options: Omit<HarnessConfigOptions, 'format'>): Record<string, unknown> {
  const { serverName, stdio, http, env, startup } = resolve({ ...options, format: 'opencode' });
  const v1 = (options.opencodeLayout ?? 'v1') === 'v1';
  const common = v1 ? { enabled: true, timeout: startup * 1000 } : {};
  const server = stdio
    ? { type: 'local', command: [stdio.command, ...stdio.args], ...(env ? { environment: env } : {}), ...common }
    : { type: 'remote', url: http!.url, headers: { Authorization: `Bearer {env:${http!.tokenEnv}}` }, ...common };
  return {
    $schema: 'https://opencode.ai/config.json',
    mcp: v1 ? single(serverName, server) : { servers: single(serverName, server) },
  };
}

/** The `pi-mcp-adapter` extension's `mcp.json` document (each server's tools offered directly). */
export function piMcpConfig(options: Omit<HarnessConfigOptions, 'format'>): Record<string, unknown> {
  const { serverName, stdio, http, env } = resolve({ ...options, format: 'pi' });
  return {
    mcpServers: single(
      serverName,
      stdio
        ? { command: stdio.command, args: [...stdio.args], ...(env ? { env } : {}), directTools: true }
        : { url: http!.url, headers: { Authorization: `Bearer \${${http!.tokenEnv}}` }, directTools: true },
    ),
  };
}

/** Codex's `config.toml` tables for the server: `[mcp_servers.<name>]` (tools approved) and its `env`. */
export function codexMcpTables(options: Omit<HarnessConfigOptions, 'format'>): TomlTable[] {
  const { serverName, stdio, http, env, startup, toolTimeout } = resolve({ ...options, format: 'codex' });
  const name = `mcp_servers.${tomlKey(serverName)}`;
  const values: [string, TomlValue][] = stdio
    ? [
        ['command', stdio.command],
        ['args', [...stdio.args]],
      ]
    : [
        ['url', http!.url],
        ['bearer_token_env_var', http!.tokenEnv],
      ];
  values.push(
    ['startup_timeout_sec', startup],
    ['tool_timeout_sec', toolTimeout],
    // Without it `codex exec` refuses every call of the server (and still exits 0).
    ['default_tools_approval_mode', 'approve'],
  );
  const tables: TomlTable[] = [{ name, values }];
  if (env) tables.push({ name: `${name}.env`, values: Object.entries(env) });
  return tables;
}

/**
 * The text of the MCP configuration `format` expects, ending with a newline: JSON for `claude`,
 * `gemini`, `opencode` and `pi`, TOML for `codex`.
 *
 * @throws SdkError `usage` for an unknown format, an invalid server or variable name, or not exactly one face.
 * @internal
 */
export function harnessConfig(options: HarnessConfigOptions): string {
  validate(options);
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  switch (options.format) {
    case 'claude':
      return json(claudeMcpConfig(options));
    case 'gemini':
      return json(geminiSettings(options));
    case 'opencode':
      return json(opencodeConfig(options));
    case 'pi':
      return json(piMcpConfig(options));
    case 'codex':
      return renderToml(codexMcpTables(options));
  }
}
