/** `scienceevolve run`: a requirement taken through Main (SPEC §10.1); progress on stderr. */
import { type PublicEvent, closeHostSupervisor, startRun } from '@scienceevolve/sdk';
import { parse, positiveInt, required } from '../args.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';
import { untilSignal } from '../signals.js';

export const RUN_HELP = [
  'run --data-dir D --workflow W --workspace WS [--project P] [--script S] [--json] "<requirement>"',
  '                                     take a requirement through Main; progress on stderr',
].join('\n');

/** One short progress line for an event, or undefined for events not worth a line. */
export function progressLine(event: PublicEvent): string | undefined {
  const who = `[${event.agent ?? 'run'}]`;
  switch (event.type) {
    case 'run.started':
      return `run ${event.run} started (project ${String(event.project)}, workflow version ${String(event.version)})`;
    case 'run.resumed':
      return `run ${event.run} resumed (resume ${String(event.resumes)}; Main's invocation restarts from its start)`;
    case 'invocation.started': {
      const services = event.services as string[];
      return `${who} invocation ${event.invocation} attempt ${String(event.attempt)}${event.restarted ? ' (restarted)' : ''}: starting ${services.length > 0 ? `services ${services.join(', ')}` : 'no services'}`;
    }
    case 'service.ready':
      return `${who} service ${String(event.service)} ready (${String(event.tools)} tools, ${String(event.startMs)} ms)`;
    case 'service.failed':
      return `${who} service ${String(event.service)} failed: ${(event.error as { message: string }).message}`;
    case 'tool.calling':
      return `${who} calling ${String(event.tool)}`;
    case 'tool.called':
      return event.ok
        ? undefined
        : `${who} ${String(event.tool)} answered an error: ${String(event.summary).split('\n')[0]}`;
    case 'workflow.reconfigured':
      return `${who} workflow version ${String(event.version)} accepted (services: ${(event.changedMcps as string[]).join(', ') || 'none'}; agents: ${(event.changedAgents as string[]).join(', ') || 'none'})`;
    case 'invocation.attempt_failed':
      return `${who} attempt ${String(event.attempt)} failed: ${(event.error as { message: string } | null)?.message ?? ''}${event.willRetry ? ' — retrying with fresh services' : ''}`;
    case 'invocation.finished':
      return `${who} invocation ${event.invocation} ${String(event.status)}`;
    case 'run.finished':
      return `run ${event.run} ${String(event.status)}`;
    default:
      return undefined;
  }
}

export async function runCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, {
    'data-dir': { type: 'string' },
    workflow: { type: 'string' },
    workspace: { type: 'string' },
    project: { type: 'string' },
    script: { type: 'string' },
    'startup-budget-ms': { type: 'string' },
    'grace-ms': { type: 'string' },
  });
  if (positionals.length !== 1) {
    throw usageError(
      positionals.length === 0 ? 'run needs the requirement' : 'run takes one requirement; quote it',
      'scienceevolve run --data-dir D --workflow W --workspace WS [--script S] "<requirement>"',
    );
  }
  const dataDir = required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state');
  const workflow = required(values.workflow, '--workflow', 'the workflow.json to run');
  const workspace = required(values.workspace, '--workspace', 'the directory the agents work in');
  const stop = untilSignal();
  const abort = new AbortController();
  void stop.wait().then(() => {
    if (stop.signal !== undefined) abort.abort(new Error(`received ${stop.signal}`));
  });
  try {
    const handle = startRun({
      dataDir,
      workflow,
      workspace,
      project: values.project,
      script: values.script,
      requirement: positionals[0]!,
      startupBudgetMs: positiveInt(values['startup-budget-ms'], '--startup-budget-ms'),
      graceMs: positiveInt(values['grace-ms'], '--grace-ms'),
      signal: abort.signal,
      onEvent: (event) => {
        const line = progressLine(event);
        if (line !== undefined) io.stderr(`${line}\n`);
      },
    });
    const result = await handle.result;
    if (values.json) {
      printJson(io, { run: result.run, status: result.status, output: result.output, events: result.events });
    } else {
      io.stdout(`${result.output ?? ''}\n`);
    }
    io.stderr(
      `events: ${result.eventsPath}\nlogs:   ${result.runDir}/invocations/<invocation>/mcp/<service>.stderr.log\n`,
    );
    if (result.status === 'interrupted') {
      io.stderr(
        `the run was interrupted; continue it with: scienceevolve resume --data-dir ${dataDir} --project ${result.project} --run ${result.run}\n`,
      );
    }
    if (result.error) io.stderr(`error [${result.error.code}]: ${result.error.message}\n`);
    return result.status === 'succeeded' ? EXIT.ok : EXIT.failed;
  } finally {
    stop.dispose();
    await closeHostSupervisor();
  }
}
