/**
 * `scienceevolve services probe`: start one agent's services as an invocation would, list all they offer,
 * collect. Its own module (with what probe and serve share), so that the probe's bundle
 * (`dist/probe.bundle.cjs`, `scripts/build-probe.mjs`) holds the probe alone, not serve's faces.
 */
// The probe's entry loads little before it forks the supervisor and spawns the service (the MCP client
// loads after the spawn).
import { probeServices, type SandboxDecision } from '@scienceevolve/sdk/probe';
import { parseCommand, required, sdkOptions } from '../args.js';
import { ENGINE_OPTIONS, command } from '../optionTable.js';
import { EXIT, type Io, type ShownError, failureText, printJson, usageError } from '../output.js';
import { untilSignal } from '../signals.js';

/** What holds a probe's services, in words. */
function collectionLine(mechanism: string): string {
  if (mechanism === 'process-group') {
    return 'process-group (process group + marker sweep; a process that leaves its group and clears its environment escapes)';
  }
  return `${mechanism} (a control group per service: nothing escapes collection; pids.max holds)`;
}

/** What probe and serve share, from their parsed options: the place, the agent and the engine block. */
export function common(values: {
  'data-dir': string | undefined;
  project: string | undefined;
  workspace: string | undefined;
  workflow: string | undefined;
  agent: string | undefined;
  'pids-max': number | undefined;
  [engine: string]: unknown;
}) {
  return {
    dataDir: required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state'),
    project: values.project,
    workspace: required(values.workspace, '--workspace', 'the task directory the services work in'),
    workflow: values.workflow,
    agent: required(values.agent, '--agent', 'the agent whose services to start'),
    // startupBudgetMs, graceMs, forwardTimeoutMs: the engine block, as run and resume pass it.
    ...(sdkOptions(ENGINE_OPTIONS, values) as {
      startupBudgetMs?: number;
      graceMs?: number;
      forwardTimeoutMs?: number;
    }),
    // Each service's control group limit, where services run in one (docs/supervision.md).
    ...(values['pids-max'] === undefined ? {} : { pidsMax: values['pids-max'] }),
  };
}

/** `services probe` with its arguments (the subcommand removed). */
export async function probe(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('services probe'), argv);
  if (positionals.length > 0) throw usageError('services probe takes no positional arguments');
  // --hold (seconds) is the deprecated spelling of --hold-ms; the parser refuses both at once.
  const holdMs = values['hold-ms'] ?? (values.hold === undefined ? undefined : values.hold * 1000);
  const options = common(values);
  const stop = untilSignal();
  try {
    const probed = await probeServices({
      ...options,
      onEvent: (e) => {
        if (e.type === 'service.ready') io.stderr(`ready: ${e.service} (${e.tools} tools, ${e.startMs} ms)\n`);
        // Without --json the report below says each failure once, with its stderr and fix.
        if (e.type === 'service.failed' && values.json) io.stderr(`failed: ${e.service}: ${e.error.code}\n`);
      },
    });
    try {
      if (values.json) printJson(io, probed.report);
      else {
        io.stdout(`project ${probed.report.project}, invocation ${probed.report.invocation}\n`);
        io.stdout(`collection: ${collectionLine(probed.report.collection)}\n`);
        for (const s of probed.report.services) {
          io.stdout(s.state === 'ready' ? readyLines(s) : failedLine(s.name, s.error, probed.failures));
          if (s.sandbox !== null) io.stdout(`    ${sandboxLine(s.sandbox)}\n`);
        }
      }
      if (holdMs !== undefined && probed.ok) {
        io.stderr(`holding the services for ${holdMs} ms (SIGINT or SIGTERM to stop)\n`);
        await stop.wait(holdMs);
      }
    } finally {
      await probed.close();
    }
    return probed.ok ? EXIT.ok : EXIT.failed;
  } finally {
    stop.dispose();
  }
}

/** Why a service runs sandboxed or not, as one line of the human probe report. */
const SANDBOX_REASONS: Record<SandboxDecision['reason'], string> = {
  policy_off: 'orchestration.sandbox is "off"',
  auto: 'orchestration.sandbox is "auto" (every project service, when a sandbox is available)',
  opted_out: 'the operator\'s definition opts out ("sandbox": false)',
  unavailable: 'orchestration.sandbox is "auto", but no working sandbox is available',
  required: 'orchestration.sandbox is "required"',
};

function sandboxLine(sandbox: SandboxDecision): string {
  const what = sandbox.sandboxed ? `sandboxed${sandbox.network ? '' : ', no network'}` : 'not sandboxed';
  return `${what}: ${SANDBOX_REASONS[sandbox.reason]}${sandbox.detail === undefined ? '' : ` (${sandbox.detail})`}`;
}

/**
 * A failed service of the human probe report: `  name: failed [code]: message`, the end of its stderr and
 * its fix, from the start's full error (the report itself carries no log content).
 */
function failedLine(
  name: string,
  error: { code: string; message: string } | null,
  failures: readonly { code: string; message: string; toJSON(): ShownError }[],
): string {
  if (error === null) return `  ${name}: failed\n`;
  const full = failures.find((f) => f.message === error.message)?.toJSON() ?? error;
  return failureText(full, { indent: '  ', head: `${name}: failed` });
}

/**
 * A ready service of the human probe report: its name and pid, then one line each for what it offers —
 * tools, resources, resource templates, prompts (`(none)` when empty) — and the list methods it declared
 * but did not implement.
 */
function readyLines(s: {
  name: string;
  pid: number | null;
  tools: string[];
  resources: string[];
  resourceTemplates: string[];
  prompts: string[];
  missingLists: string[];
}): string {
  const list = (items: string[]) => (items.length === 0 ? '(none)' : items.join(', '));
  return [
    `  ${s.name}: ready${s.pid ? ` (pid ${s.pid})` : ''}`,
    `    tools: ${list(s.tools)}`,
    `    resources: ${list(s.resources)}`,
    `    resource templates: ${list(s.resourceTemplates)}`,
    `    prompts: ${list(s.prompts)}`,
    ...(s.missingLists.length > 0 ? [`    not implemented, counted empty: ${s.missingLists.join(', ')}`] : []),
    '',
  ].join('\n');
}
