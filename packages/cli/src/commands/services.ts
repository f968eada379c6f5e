/** `scienceevolve services probe|serve`: one agent's services, outside a run. */
import {
  createBridgeToken,
  MAX_PIDS_MAX,
  MIN_PIDS_MAX,
  probeServices,
  protectStdout,
  type SandboxDecision,
  serveAgentServices,
  serveHttp,
  serveStdio,
  writeBridgeTokenFile,
} from '@scienceevolve/sdk/agent-services';
import { parse, positiveInt, RANGES, required } from '../args.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';
import { untilSignal } from '../signals.js';

export const SERVICES_HELP = [
  'services probe --data-dir D [--workflow W] --workspace WS --agent A [--hold S] [--pids-max N] [--json]',
  "                                     start an agent's services, list all they offer, collect them",
  'services serve --data-dir D [--workflow W] --workspace WS --agent A [--http [--port N] --token-file F] [--passthrough] [--pids-max N]',
  "                                     serve the agent's managed bridge (stdio MCP server by default)",
].join('\n');

const OPTIONS = {
  'data-dir': { type: 'string' },
  project: { type: 'string' },
  workspace: { type: 'string' },
  workflow: { type: 'string' },
  agent: { type: 'string' },
  'startup-budget-ms': { type: 'string' },
  'grace-ms': { type: 'string' },
  'pids-max': { type: 'string' },
} as const;

/** What holds a probe's services, in words. */
function collectionLine(mechanism: string): string {
  if (mechanism === 'process-group') {
    return 'process-group (process group + marker sweep; a process that leaves its group and clears its environment escapes)';
  }
  return `${mechanism} (a control group per service: nothing escapes collection; pids.max holds)`;
}

export async function servicesCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'probe') return probe(rest, io);
  if (sub === 'serve') return serve(rest, io);
  throw usageError(
    sub === undefined ? 'services needs a subcommand' : `unknown subcommand "services ${sub}"`,
    'use `services probe` or `services serve`',
  );
}

function common(values: Record<string, unknown>) {
  return {
    dataDir: required(
      values['data-dir'] as string | undefined,
      '--data-dir',
      'the directory that holds all ScienceEvolve state',
    ),
    project: values.project as string | undefined,
    workspace: required(
      values.workspace as string | undefined,
      '--workspace',
      'the task directory the services work in',
    ),
    workflow: values.workflow as string | undefined,
    agent: required(values.agent as string | undefined, '--agent', 'the agent whose services to start'),
    startupBudgetMs: positiveInt(values['startup-budget-ms'] as string | undefined, '--startup-budget-ms'),
    graceMs: positiveInt(values['grace-ms'] as string | undefined, '--grace-ms'),
    // Each service's control group limit, where services run in one (docs/supervision.md).
    pidsMax: positiveInt(values['pids-max'] as string | undefined, '--pids-max', {
      min: MIN_PIDS_MAX,
      max: MAX_PIDS_MAX,
    }),
  };
}

async function probe(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, { ...OPTIONS, hold: { type: 'string' } });
  if (positionals.length > 0) throw usageError('services probe takes no positional arguments');
  const hold = positiveInt(values.hold, '--hold', RANGES.sec);
  const options = common(values);
  const stop = untilSignal();
  try {
    const probed = await probeServices({
      ...options,
      onEvent: (e) => {
        if (e.type === 'service.ready') io.stderr(`ready: ${e.service} (${e.tools} tools, ${e.startMs} ms)\n`);
        if (e.type === 'service.failed') io.stderr(`failed: ${e.service}: ${e.error.code}\n`);
      },
    });
    try {
      if (values.json) printJson(io, probed.report);
      else {
        io.stdout(`project ${probed.report.project}, invocation ${probed.report.invocation}\n`);
        io.stdout(`collection: ${collectionLine(probed.report.collection)}\n`);
        for (const s of probed.report.services) {
          io.stdout(
            s.state === 'ready'
              ? `  ${s.name}: ready${s.pid ? ` (pid ${s.pid})` : ''} — tools: ${s.tools.join(', ') || '(none)'}${
                  s.missingLists.length > 0 ? ` (not implemented, counted empty: ${s.missingLists.join(', ')})` : ''
                }\n`
              : `  ${s.name}: failed — ${s.error?.code}: ${s.error?.message}\n`,
          );
          if (s.sandbox !== null) io.stdout(`    ${sandboxLine(s.sandbox)}\n`);
        }
      }
      if (hold !== undefined && probed.ok) {
        io.stderr(`holding the services for ${hold} s (SIGINT or SIGTERM to stop)\n`);
        await stop.wait(hold * 1000);
      }
    } finally {
      await probed.close();
    }
    return probed.ok ? EXIT.ok : EXIT.failed;
  } finally {
    stop.dispose();
  }
}

async function serve(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...OPTIONS,
    http: { type: 'boolean', default: false },
    port: { type: 'string' },
    'token-file': { type: 'string' },
    passthrough: { type: 'boolean', default: false },
  });
  if (positionals.length > 0) throw usageError('services serve takes no positional arguments');
  const options = common(values);
  if (!values.http && (values.port !== undefined || values['token-file'] !== undefined)) {
    throw usageError('--port and --token-file go with --http');
  }
  const tokenFile = values.http
    ? required(values['token-file'], '--token-file', 'where the bearer token is written (never to stdout)')
    : undefined;
  const port = positiveInt(values.port, '--port', RANGES.port) ?? 0;
  // The stdio face owns fd 1 from the first moment: anything else the process prints goes to stderr.
  const output = values.http ? undefined : protectStdout().protocolOutput;
  const stop = untilSignal();
  try {
    const served = await serveAgentServices({ ...options, passthrough: values.passthrough });
    try {
      if (values.http) {
        const token = createBridgeToken();
        await writeBridgeTokenFile(tokenFile!, token);
        const face = await serveHttp(served.surface, { token, port });
        try {
          const info = { project: served.project, invocation: served.invocation, url: face.url, tokenFile };
          if (values.json) printJson(io, info);
          else io.stdout(`serving agent ${options.agent} at ${face.url} (bearer token in ${tokenFile})\n`);
          await stop.wait();
        } finally {
          await face.close();
        }
      } else {
        io.stderr(`serving agent ${options.agent} on stdio (${served.surface.tools.length} tools)\n`);
        const face = serveStdio(served.surface, { output });
        try {
          await Promise.race([face.closed, stop.wait()]);
        } finally {
          await face.close();
        }
      }
    } finally {
      await served.close();
    }
    return EXIT.ok;
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
