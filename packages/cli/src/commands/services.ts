/** `scienceevolve services probe|serve`: one agent's services, outside a run. */
// The probe (commands/servicesProbe.ts) loads little before it forks the supervisor and spawns the service;
// serve's modules (the bridge faces, the surface) load in serve alone.
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';
import { untilSignal } from '../signals.js';
import { common, probe } from './servicesProbe.js';

export async function servicesCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'probe') return probe(rest, io);
  if (sub === 'serve') return serve(rest, io);
  throw usageError(
    sub === undefined ? 'services needs a subcommand' : `unknown subcommand "services ${sub}"`,
    'use `services probe` or `services serve`',
  );
}

async function serve(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('services serve'), argv);
  if (positionals.length > 0) throw usageError('services serve takes no positional arguments');
  const options = common(values);
  if (!values.http && (values.port !== undefined || values['token-file'] !== undefined)) {
    throw usageError('--port and --token-file go with --http');
  }
  const tokenFile = values.http
    ? required(values['token-file'], '--token-file', 'where the bearer token is written (never to stdout)')
    : undefined;
  const port = values.port ?? 0;
  const { createBridgeToken, protectStdout, serveAgentServices, serveHttp, serveStdio, writeBridgeTokenFile } =
    await import('@scienceevolve/sdk/agent-services');
  // The stdio face owns fd 1 from the first moment (the bin guarded it before anything loaded): anything
  // else the process prints goes to stderr.
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
