/**
 * What the `command` harness starts its CLI with: the prompt, the custom arguments' placeholders, the
 * minimal environment plus `envFrom` and the key (`missing_env` before anything starts), the marker its
 * processes carry, and the check that no argument or variable is over the OS limit.
 */
import { formatMarker } from '@scienceevolve/supervisor/protocol';
import { processStartTime } from '@scienceevolve/supervisor/procfs';
import { SdkError } from '../errors.js';
import { INHERITED_ENV_KEYS } from '../processes/serviceEnv.js';
import type { Harness } from '../workflow/workflowSchema.js';
import type { HarnessInput } from './harness.js';

/** A `command` harness configuration (the workflow's `agents.<name>.harness` with `type: "command"`). */
export type CommandHarnessConfig = Extract<Harness, { type: 'command' }>;

/**
 * Bytes one argument or one `NAME=value` environment string may hold on Linux (`MAX_ARG_STRLEN`, 32 pages
 * of 4 KiB, with its terminating NUL): 131,072. A longer prompt would fail the spawn with `E2BIG`.
 */
const MAX_ARG_BYTES = 131_072;

/** The `{…}` placeholders of custom arguments. */
export function substitute(args: readonly string[], values: Readonly<Record<string, string>>): string[] {
  return args.map((arg) => arg.replace(/\{(prompt|workspace|mcpConfig)\}/g, (_, key: string) => values[key] ?? ''));
}

/** The CLI's prompt: the agent's instructions (when any), then the task. */
export function commandPrompt(instructions: string, task: string): string {
  return instructions.trim() === '' ? task : `${instructions.trim()}\n\n${task}`;
}

/**
 * The marker the CLI's processes carry (SPEC §6): the invocation's project and this host, and an
 * invocation part of its own (`<invocationId>-cli`) so that sweeping the CLI never takes the services'.
 * The project comes from the runtime path (`…/projects/<project>/runs/<run>/invocations/<id>`).
 */
export function cliMarker(input: HarnessInput): string {
  const parts = input.runtimePath.split(/[\\/]/).filter((p) => p !== '');
  const at = parts.lastIndexOf('invocations');
  const projectId = at >= 4 && parts[at - 4] === 'projects' ? parts[at - 3] : undefined;
  const safe = (text: string) => text.replace(/[^A-Za-z0-9_.-]/g, '_') || 'x';
  return formatMarker({
    projectId: safe(projectId ?? 'harness'),
    hostPid: process.pid,
    hostStart: processStartTime(process.pid) ?? '0',
    invocationId: `${safe(input.invocationId)}-cli`,
  });
}

/** The CLI's environment: the minimal inherited set, `envFrom`, then the preset's variables and the marker. */
export function cliEnv(
  agent: string,
  config: CommandHarnessConfig,
  input: HarnessInput,
): { env: Record<string, string>; apiKey: string | undefined } {
  const env: Record<string, string> = {};
  for (const key of INHERITED_ENV_KEYS) {
    const value = input.hostEnv[key];
    if (value !== undefined && !value.startsWith('()')) env[key] = value;
  }
  const missing: { variable: string; hostVariable: string }[] = [];
  for (const [variable, hostVariable] of Object.entries(config.envFrom ?? {})) {
    const value = Object.hasOwn(input.hostEnv, hostVariable) ? input.hostEnv[hostVariable] : undefined;
    // An empty value is missing too, as for a service's envFrom.
    if (value === undefined || value === '') missing.push({ variable, hostVariable });
    else env[variable] = value;
  }
  let apiKey: string | undefined;
  if (config.apiKeyEnv !== undefined) {
    apiKey = Object.hasOwn(input.hostEnv, config.apiKeyEnv) ? input.hostEnv[config.apiKeyEnv] : undefined;
    // An empty key is no key, as for the model loops: the CLI would fail later with its provider's 401.
    if (apiKey === undefined || apiKey === '') {
      apiKey = undefined;
      missing.push({ variable: 'apiKeyEnv', hostVariable: config.apiKeyEnv });
    }
  }
  if (missing.length > 0) {
    const names = missing.map((m) => `${m.hostVariable} (for ${m.variable})`).join(', ');
    throw new SdkError(
      'missing_env',
      `agent "${agent}" cannot start its CLI: host variable${missing.length > 1 ? 's' : ''} ${names} ${missing.length > 1 ? 'are' : 'is'} not set or empty`,
      {
        remedy: `set ${missing.map((m) => m.hostVariable).join(', ')} in the environment that runs ScienceEvolve, or change agents.${agent}.harness`,
        data: { agent, variables: missing },
      },
    );
  }
  return { env, apiKey };
}

/**
 * Throws `limit_exceeded` when one argument or `NAME=value` string is too long for the OS (the spawn
 * would fail with `E2BIG`); the message names the prompt's size, the usual cause.
 */
export function checkArgLength(
  agent: string,
  prompt: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): void {
  const tooLong = [...args, ...Object.entries(env).map(([k, v]) => `${k}=${v}`)].find(
    (text) => Buffer.byteLength(text) >= MAX_ARG_BYTES,
  );
  if (tooLong !== undefined) {
    throw new SdkError(
      'limit_exceeded',
      `agent "${agent}": one argument or variable of its CLI would be ${Buffer.byteLength(tooLong)} bytes, over the ${MAX_ARG_BYTES - 1} bytes Linux allows (the prompt is ${Buffer.byteLength(prompt)} bytes)`,
      {
        remedy:
          'give the agent a shorter task: put long material in a file in the workspace and name the file in the task',
        data: { agent, bytes: Buffer.byteLength(tooLong), limit: MAX_ARG_BYTES - 1 },
      },
    );
  }
}
