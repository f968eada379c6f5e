/** `scienceevolve run`: a requirement taken through Main (SPEC §10.1); progress on stderr. */
import {
  type EngineOptions,
  type QueueSettings,
  type RunEvent,
  SdkError,
  closeHostSupervisor,
  startRun,
} from '@scienceevolve/sdk';
import { parseCommand, required, sdkOptions } from '../args.js';
import { RUN_OPTIONS, command } from '../optionTable.js';
import { EXIT, type Io, failureText, printJson, usageError, visible } from '../output.js';
import { queueUrlOption } from '../queueUrlOption.js';
import { askOnTerminal, attended } from '../operatorPrompt.js';
import { untilSignal } from '../signals.js';

/** Token counts as a short phrase: `1,234 in / 56 out tokens` (missing counts are left out). */
function tokens(usage: { inputTokens?: number; outputTokens?: number }): string {
  const parts = [
    usage.inputTokens === undefined ? undefined : `${usage.inputTokens.toLocaleString('en-US')} in`,
    usage.outputTokens === undefined ? undefined : `${usage.outputTokens.toLocaleString('en-US')} out`,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? 'usage not reported' : `${parts.join(' / ')} tokens`;
}

/**
 * One short progress line for an event, or undefined for events not worth a line. Much of it is text a
 * service or a model endpoint wrote (a tool's error, a service's failure, a retry's message): every control
 * character is shown as `\xNN`, so it cannot drive the terminal.
 */
export function progressLine(event: RunEvent): string | undefined {
  const line = progressText(event);
  // Line by line: a message's own line breaks stay breaks; every other control character is shown.
  return line === undefined ? undefined : line.split('\n').map(visible).join('\n');
}

function progressText(event: RunEvent): string | undefined {
  const who = `[${'agent' in event ? event.agent : 'run'}]`;
  switch (event.type) {
    case 'run.started':
      return `run ${event.run} started (project ${event.project}, workflow version ${event.version})`;
    case 'run.resumed':
      return `run ${event.run} resumed from ${event.from} (resume ${event.resumes}; Main continues from its last checkpoint)`;
    case 'invocation.started':
      return `${who} invocation ${event.invocation} attempt ${event.attempt}${event.restarted ? ' (restarted)' : ''}${event.fromCheckpoint ? ' from its checkpoint' : ''}: starting ${event.services.length > 0 ? `services ${event.services.join(', ')}` : 'no services'}`;
    case 'service.ready':
      return `${who} service ${event.service} ready (${event.tools} tools, ${event.startMs} ms${
        event.queuedMs ? `, after ${event.queuedMs} ms queued for its turn to start` : ''
      }${event.prestarted ? ', prestarted' : ''})`;
    case 'service.failed':
      return `${who} service ${event.service} failed: ${event.error.message}`;
    case 'model.called':
      return `${who} turn ${event.turn} (${event.model}): ${tokens(event.usage)}, ${event.durationMs} ms`;
    case 'model.retry':
      return `${who} turn ${event.turn}: model call failed (${event.status ?? 'network'}: ${event.message.split('\n')[0]}); retry ${event.attempt} in ${event.delayMs} ms`;
    case 'tool.calling':
      return `${who} calling ${event.tool}`;
    case 'service.rested':
      return `${who} service ${event.service} failed ${event.failures} calls in a row: rested until ${event.until}`;
    case 'service.recovered':
      return `${who} service ${event.service} answers again`;
    case 'tool.called':
      return event.ok
        ? undefined
        : `${who} ${event.tool} answered an error${event.code === undefined ? '' : ` [${event.code}]`}: ${event.summary.split('\n')[0]}`;
    case 'workflow.reconfigured':
      return `${who} workflow version ${event.version} accepted (services: ${event.changedMcps.join(', ') || 'none'}; agents: ${event.changedAgents.join(', ') || 'none'})`;
    case 'invocation.attempt_failed':
      return `${who} attempt ${event.attempt} failed: ${event.error?.message ?? ''}${event.willRetry ? ' — retrying with fresh services' : ''}`;
    case 'invocation.finished':
      return `${who} invocation ${event.invocation} ${event.status}`;
    case 'run.finished':
      return `run ${event.run} ${event.status}${event.usage.modelCalls > 0 ? ` (${event.usage.modelCalls} model calls, ${tokens(event.usage)})` : ''}`;
    default:
      return undefined;
  }
}

/**
 * The `onEvent` of `run` and `resume`: one progress line on stderr for each event worth one, and one line
 * per failure — an attempt that failed for a reason a `service.failed` line already gave says only its code.
 */
export function progressOnStderr(io: Io): (event: RunEvent) => void {
  const said = new Set<string>();
  return (event) => {
    if (event.type === 'service.failed') said.add(event.error.message);
    if (event.type === 'invocation.attempt_failed' && event.error && said.has(event.error.message)) {
      io.stderr(
        `[${event.agent}] attempt ${event.attempt} failed (${event.error.code}, above)${event.willRetry ? ' — retrying with fresh services' : ''}\n`,
      );
      return;
    }
    const line = progressLine(event);
    if (line !== undefined) io.stderr(`${line}\n`);
  };
}

/**
 * Aborts `abort` on the first SIGINT/SIGTERM/SIGHUP: the run stops its harnesses, collects every process
 * and ends `cancelled`. Returns the handlers' disposer.
 */
export function cancelOnSignal(abort: AbortController, io: Io): () => void {
  const stop = untilSignal();
  void stop.wait().then(() => {
    if (stop.signal === undefined) return;
    io.stderr(`received ${stop.signal}: cancelling the run (collecting every process)\n`);
    abort.abort(
      new SdkError('cancelled', `the run was cancelled by ${stop.signal}`, {
        remedy: 'continue it with `scienceevolve resume`',
      }),
    );
  });
  return () => stop.dispose();
}

/** The `queue` option of run and resume from the queue URL (see `queueUrlOption`), `--queue-name` and `--queue-unreachable-ms`. */
export function queueOption(
  url: string | undefined,
  name: string | undefined,
  unreachableMs: number | undefined,
): QueueSettings | undefined {
  if (url === undefined) {
    if (name !== undefined || unreachableMs !== undefined) {
      throw usageError('--queue-name and --queue-unreachable-ms go with --queue, --queue-env or --queue-file');
    }
    return undefined;
  }
  return { url, name, unreachableMs };
}

/**
 * The engine options of `run` and `resume` from their parsed values: every option of the shared blocks
 * ({@link RUN_OPTIONS}: start-up budget, grace, forwarding timeout, fair and warm starts) under its SDK
 * name, the queue, and `prestart` from `--no-prestart`.
 */
export function runEngineOptions(values: {
  'no-prestart': boolean;
  queue: string | undefined;
  'queue-env': string | undefined;
  'queue-file': string | undefined;
  'queue-name': string | undefined;
  'queue-unreachable-ms': number | undefined;
  [option: string]: unknown;
}): EngineOptions {
  return {
    ...(sdkOptions(RUN_OPTIONS, values) as EngineOptions),
    queue: queueOption(queueUrlOption(values), values['queue-name'], values['queue-unreachable-ms']),
    prestart: !values['no-prestart'],
  };
}

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('run'), argv);
  if (positionals.length !== 1) {
    throw usageError(
      positionals.length === 0 ? 'run needs the requirement' : 'run takes one requirement; quote it',
      'scienceevolve run --data-dir D --workflow W --workspace WS [--script S] "<requirement>"',
    );
  }
  const dataDir = required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state');
  const workflow = required(values.workflow, '--workflow', 'the workflow.json to run');
  const workspace = required(values.workspace, '--workspace', 'the directory the agents work in');
  const abort = new AbortController();
  const dispose = cancelOnSignal(abort, io);
  try {
    const handle = startRun({
      dataDir,
      workflow,
      workspace,
      project: values.project,
      script: values.script,
      requirement: positionals[0]!,
      ...runEngineOptions(values),
      signal: abort.signal,
      onEvent: progressOnStderr(io),
      ...(attended() ? { askOperator: askOnTerminal } : {}),
    });
    const result = await handle.result;
    if (values.json) {
      printJson(io, { run: result.run, status: result.status, output: result.output, events: result.events });
    } else {
      if (result.output !== null) io.stdout(`${result.output}\n`);
    }
    io.stderr(
      `events: ${result.eventsPath}\nlogs:   ${result.runDir}/invocations/<invocation>/mcp/<service>.stderr.log\n`,
    );
    if (result.status === 'interrupted' || result.status === 'cancelled') {
      io.stderr(
        `the run was ${result.status}; continue it with: scienceevolve resume --data-dir ${dataDir} --project ${result.project} --run ${result.run}\n`,
      );
    }
    // The run's error with the end of the failed service's stderr (run.json's, redacted) and its fix.
    if (result.error) io.stderr(failureText(result.error));
    return result.status === 'succeeded' ? EXIT.ok : EXIT.failed;
  } finally {
    dispose();
    await closeHostSupervisor();
  }
}
