/**
 * The `command` harness (SPEC §10.2): an external agent CLI run headless in the invocation's workspace as
 * a supervised process group, given the invocation's live surface through a per-invocation socket and
 * the stdio relay its MCP configuration launches (docs/decisions/cli-harness-live-surface.md). Its final
 * stdout (or the file its preset makes it write) is the answer; the result also says how many tool calls
 * reached the surface, because no CLI reports a denied or failed call in its exit code. What the CLI is
 * started with (prompt, environment, marker, argument sizes) is `commandLaunch.ts`.
 */
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { MARKER_ENV } from '@scienceevolve/supervisor/procfs';
import { type SocketFace, relayPath, startSocketFace } from '../faces/socketFace.js';
import { SdkError } from '../errors.js';
import { redactText } from '../redact.js';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../fileModes.js';
import { type CollectResult, SupervisedGroup } from '../processes/processGroup.js';
import { resolveCommand } from '../processes/resolveCommand.js';
import { StderrLog } from '../processes/stderrLog.js';
import { runEach } from '../processes/teardown.js';
import { writeFileAtomic } from '../store/atomicFile.js';
import { MAX_DURATION_MS } from '../workflow/workflowSchema.js';
import type { AgentHarness, HarnessInput, HarnessOutput } from './harness.js';
import {
  type CommandHarnessConfig,
  checkArgLength,
  cliEnv,
  cliMarker,
  commandPrompt,
  substitute,
} from './commandLaunch.js';
import { type PresetContext, type PresetPlan, planCustom, planPreset } from './presets.js';
import { checkOpencodeWorkspace } from './presetOpencode.js';

export { type CommandHarnessConfig, commandPrompt } from './commandLaunch.js';

/** Default milliseconds the CLI may run: 3,600,000 (1 h), as the workflow schema's `timeoutMs`. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 3_600_000;

/** Bytes of the CLI's stdout kept as its answer: 4 MiB; the rest is dropped (and said so in the answer's data). */
export const COMMAND_STDOUT_CAP_BYTES = 4 * 1024 * 1024;

/** Lines of the CLI's stderr a failure keeps in `data.stderrTail` (run.json; never in events): 10. */
const STDERR_TAIL_LINES = 10;

/** Milliseconds to wait for Node to report the leader's exit status once `/proc` shows it gone: 1,000. */
const EXIT_STATUS_WAIT_MS = 1000;

/** How the CLI ended. */
interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A `command` harness for `agent`. Each `run`:
 * 1. checks `envFrom` and `apiKeyEnv` against the host (`missing_env` before anything starts);
 * 2. serves the surface on a fresh socket and writes the preset's files (0600) under
 *    `<runtimePath>/cli/` (the fresh home `<runtimePath>/cli/home` when `isolateHome`);
 * 3. starts the CLI in the workspace, in its own process group registered with the host's supervisor,
 *    stdin closed, stderr to `<runtimePath>/cli/stderr.log`;
 * 4. waits for it to exit, for `timeoutMs` (→ `harness_timeout`) or for the run's signal (→ `cancelled`),
 *    then collects the group and anything that carries its marker, and closes the socket.
 * A non-zero exit is `harness_failed` with the exit code, the log's path and (in `data.stderrTail`, which
 * events leave out) the last lines of stderr.
 */
export function createCommandHarness(agent: string, config: CommandHarnessConfig): AgentHarness {
  return {
    run: (input) => runCommand(agent, config, input),
  };
}

/** What one run started, for its teardown. */
interface RunState {
  marker: string;
  face?: SocketFace;
  log?: StderrLog;
  child?: ChildProcess;
  /** The CLI's process group, on the services' supervised-spawn path; undefined before the launch. */
  group?: SupervisedGroup;
  /** Set once the group was collected. */
  collected?: CollectResult;
}

async function runCommand(agent: string, config: CommandHarnessConfig, input: HarnessInput): Promise<HarnessOutput> {
  input.signal.throwIfAborted();
  const state: RunState = { marker: cliMarker(input) };
  let output: HarnessOutput | undefined;
  let failure: unknown;
  try {
    output = await attempt(agent, config, input, state);
  } catch (error) {
    failure = error;
  }
  // Every step runs even when an earlier one threw; the group is collected first, so the relay's
  // connections are gone before the socket closes.
  await runEach([
    async () => {
      // Idempotent: a group already collected answers its first result. It is released from the registry
      // only when nothing outlived SIGKILL (what did stays the supervisor's).
      if (state.group !== undefined) state.collected = await state.group.collect();
    },
    () => state.child?.stdout?.destroy(),
    () => state.log?.finish(),
    () => state.face?.close(),
    () => {
      if ((state.collected?.survivors.length ?? 0) > 0) return;
      input.registry.releaseMarker?.(state.marker);
    },
  ]);
  const survivors = state.collected?.survivors ?? [];
  if (survivors.length > 0) {
    throw new SdkError(
      'collect_failed',
      `processes ${survivors.join(', ')} of agent "${agent}"'s CLI outlived SIGKILL; they stay under the supervisor`,
      {
        remedy: 'look at them with `ps -o pid,stat,cmd -p <pid>` (state D: stuck in the kernel)',
        data: { agent, survivors, marker: state.marker },
      },
    );
  }
  if (failure !== undefined) throw failure;
  return output!;
}

async function attempt(
  agent: string,
  config: CommandHarnessConfig,
  input: HarnessInput,
  state: RunState,
): Promise<HarnessOutput> {
  const { env: baseEnv, apiKey } = cliEnv(agent, config, input);
  // What the CLI's stderr tail must never show in an error (`run` prints the tail on the screen).
  const secretValues = [
    ...(apiKey === undefined ? [] : [apiKey]),
    ...Object.keys(config.envFrom ?? {}).flatMap((key) => (Object.hasOwn(baseEnv, key) ? [baseEnv[key]!] : [])),
  ];
  const tailOf = (log: { tail(): string[] }) =>
    log
      .tail()
      .slice(-STDERR_TAIL_LINES)
      .map((line) => redactText(line, { values: secretValues }));
  const configDir = join(input.runtimePath, 'cli');
  const home = config.isolateHome === false ? undefined : join(configDir, 'home');
  await makePrivateDir(configDir);
  if (home !== undefined) await makePrivateDir(home);
  const { marker } = state;

  const face = await startSocketFace(input.surface);
  state.face = face;
  const context: PresetContext = {
    prompt: commandPrompt(input.instructions, input.task),
    workspace: input.workspace,
    configDir,
    home,
    relay: { command: process.execPath, args: [relayPath(), face.socketPath], env: { [MARKER_ENV]: marker } },
    toolNames: input.surface.tools.map((t) => t.name),
    ...(config.model === undefined ? {} : { model: config.model }),
    ...(config.baseUrl === undefined ? {} : { baseUrl: config.baseUrl }),
    ...(config.apiKeyEnv === undefined ? {} : { apiKeyEnv: config.apiKeyEnv }),
    ...(apiKey === undefined ? {} : { apiKey }),
  };
  const env: Record<string, string> = { ...baseEnv };
  if (home !== undefined) env.HOME = home;

  // The command first (pi finds its MCP adapter beside it), then the plan with it.
  const wanted =
    config.command ?? (config.preset === undefined ? undefined : planPreset(config.preset, context).command);
  if (wanted === undefined) {
    throw new SdkError('invalid_workflow', `agent "${agent}": the command harness needs "preset" or "command"`, {
      remedy: `set agents.${agent}.harness.preset (claude, codex, gemini, opencode or pi) or .command`,
      data: { agent },
    });
  }
  const command = resolveCommand(wanted, env.PATH, input.workspace);
  if (command === undefined) {
    const where = wanted.includes('/') ? 'does not exist or is not executable' : "is not on the CLI's PATH";
    throw new SdkError('command_not_found', `agent "${agent}": the CLI command "${wanted}" ${where}`, {
      remedy: `install it, or set agents.${agent}.harness.command to its path`,
      data: { agent, command: wanted },
    });
  }
  const plan: PresetPlan =
    config.preset === undefined ? planCustom(context) : planPreset(config.preset, context, command);
  const args =
    config.args === undefined
      ? plan.args
      : substitute(config.args, { prompt: context.prompt, workspace: input.workspace, mcpConfig: plan.mcpConfigPath });
  Object.assign(env, plan.env);
  env[MARKER_ENV] = marker;
  for (const file of plan.files) {
    await makePrivateDir(dirname(file.path));
    // A new 0600 file renamed into place: a file or link left at the path (by an earlier attempt, or
    // planted by a service) is replaced, never written through.
    await writeFileAtomic(file.path, file.text, { mode: PRIVATE_FILE_MODE });
  }

  checkArgLength(agent, context.prompt, args, env);
  if (config.preset === 'opencode') await checkOpencodeWorkspace(agent, input.workspace);

  const log = new StderrLog(join(configDir, 'stderr.log'));
  state.log = log;
  // The supervised-spawn path: announced before the spawn (a host killed between spawn and register is
  // still covered by the sweep), registered right after it, collected by the one kill path.
  const group = new SupervisedGroup({ marker, registry: input.registry, graceMs: input.graceMs });
  state.group = group;
  await group.announce();
  input.signal.throwIfAborted();
  // The CLI leads a new process group (pgid = its pid), and a SIGINT to the host's terminal does not reach
  // it. stdin is closed ('ignore'): several CLIs wait forever on an open stdin pipe.
  const child = group.spawn(command, args, {
    cwd: input.workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    shell: false,
    windowsHide: true,
  });
  state.child = child;
  const exited = new Promise<CliExit | Error>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve(error));
  });
  // Later 'error' events (a failed kill) must not become uncaught exceptions.
  child.on('error', () => {});
  if (child.pid === undefined) {
    const error = (await exited) as NodeJS.ErrnoException;
    throw new SdkError(
      'command_not_found',
      `agent "${agent}": the CLI ${command} could not be started (${error.code ?? error.message})`,
      {
        remedy: 'check that the command is an executable file and the workspace exists',
        data: { agent, command },
        cause: error,
      },
    );
  }
  log.attach(child.stderr!);
  const stdout: Buffer[] = [];
  let kept = 0;
  let dropped = 0;
  child.stdout!.on('data', (chunk: Buffer) => {
    const room = Math.max(0, COMMAND_STDOUT_CAP_BYTES - kept);
    if (room > 0) stdout.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
    kept += Math.min(room, chunk.length);
    dropped += chunk.length - Math.min(room, chunk.length);
  });
  const stdoutClosed = new Promise<void>((resolve) => child.stdout!.once('close', () => resolve()));

  const timeoutMs = Math.min(config.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS, MAX_DURATION_MS);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const outcome = await Promise.race([
    exited.then((exit) => ({ kind: 'exited' as const, exit })),
    new Promise<{ kind: 'timeout' }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
    }),
    new Promise<{ kind: 'aborted' }>((resolve) => {
      onAbort = () => resolve({ kind: 'aborted' });
      if (input.signal.aborted) onAbort();
      else input.signal.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  if (timer !== undefined) clearTimeout(timer);
  if (onAbort !== undefined) input.signal.removeEventListener('abort', onAbort);

  // Whatever ended the wait, the group is collected now: a CLI that exited may have left children (its
  // relay, a shell, a daemon that left the group with setsid but carries the marker).
  state.collected = await group.collect();
  const exit = outcome.kind === 'exited' ? outcome.exit : await raceTimeout(exited, EXIT_STATUS_WAIT_MS);
  await raceTimeout(stdoutClosed, EXIT_STATUS_WAIT_MS);

  const identity = { agent, command, log: log.path, toolCallsReached: face.toolCalls };
  if (outcome.kind === 'aborted') {
    throw new SdkError('cancelled', `agent "${agent}": the run was cancelled; its CLI was stopped`, {
      data: identity,
    });
  }
  if (outcome.kind === 'timeout') {
    throw new SdkError(
      'harness_timeout',
      `agent "${agent}": the CLI ${command} ran past timeoutMs (${timeoutMs} ms) and was stopped; see ${log.path}`,
      {
        remedy: `raise agents.${agent}.harness.timeoutMs, or give the agent a smaller task`,
        data: { ...identity, timeoutMs, stderrTail: tailOf(log) },
      },
    );
  }
  if (exit instanceof Error || exit === undefined || exit.code !== 0) {
    const how =
      exit instanceof Error
        ? `failed (${exit.message})`
        : exit === undefined
          ? 'ended without an exit status'
          : exit.code === null
            ? `was killed by ${exit.signal}`
            : `exited with code ${exit.code}`;
    const tail = tailOf(log);
    throw new SdkError(
      'harness_failed',
      // The stderr lines stay out of the message (events and progress lines carry it): they are in
      // `data.stderrTail` (the key and the mapped values redacted), which events leave out.
      `agent "${agent}": the CLI ${command} ${how}; see its stderr log ${log.path}`,
      {
        remedy: `read ${log.path}; check the CLI's model settings (model, baseUrl, apiKeyEnv) and its login`,
        data: {
          ...identity,
          exitCode: exit instanceof Error || exit === undefined ? null : exit.code,
          signal: exit instanceof Error || exit === undefined ? null : exit.signal,
          stderrTail: tail,
        },
      },
    );
  }
  let output = Buffer.concat(stdout).toString('utf8');
  if (dropped > 0)
    output += `\n[scienceevolve: the CLI's stdout was cut at ${COMMAND_STDOUT_CAP_BYTES} bytes; ${dropped} bytes dropped]`;
  if (plan.outputFile !== undefined) {
    const written = await readFile(plan.outputFile, 'utf8').catch(() => undefined);
    if (written !== undefined) output = written;
  }
  return { output: output.trim(), toolCallsReached: face.toolCalls };
}

/** Resolves with the promise's value, or undefined after `ms` milliseconds; the timer is cleared either way. */
async function raceTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
      }),
    ]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}
