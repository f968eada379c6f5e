/** `scienceevolve gateway --stdio "<launch command>" [--port 8000]`: supergateway, supervised and checked. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { closeHostSupervisor, SdkError } from '@scienceevolve/sdk';
import { startGateway } from '@scienceevolve/sdk/internal';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';
import { untilSignal } from '../signals.js';

/** supergateway's entry script, resolved from this package's own dependencies; `missing_dependency` without it. */
function supergatewayBin(): string {
  const require = createRequire(import.meta.url);
  let manifestPath: string;
  try {
    manifestPath = require.resolve('supergateway/package.json');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    // An optional dependency of the CLI (docs/decisions/optional-dependencies.md): only this command needs it.
    throw new SdkError(
      'missing_dependency',
      'gateway needs the package supergateway, an optional dependency of ScienceEvolve that is not installed: npm install supergateway',
      { remedy: 'npm install supergateway', data: { package: 'supergateway', packages: ['supergateway'] } },
    );
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.supergateway;
  if (bin === undefined) throw new SdkError('internal', `supergateway's package (${manifestPath}) names no bin`);
  return join(dirname(manifestPath), bin);
}

export async function gatewayCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('gateway'), argv);
  if (positionals.length > 0) {
    throw usageError('gateway takes no positional arguments', 'quote the launch command: --stdio "node server.js"');
  }
  const stdio = required(values.stdio, '--stdio', 'the launch command of a stdio MCP server, in quotes');
  const port = values.port;
  const logLevel = values['log-level'];
  if (logLevel !== undefined && logLevel !== 'info' && logLevel !== 'debug' && logLevel !== 'none') {
    throw usageError(`--log-level takes info, debug or none, not "${logLevel}"`);
  }
  const graceMs = values['grace-ms'];
  const readyTimeoutMs = values['ready-timeout-ms'];
  // Handlers first: a Ctrl-C during the start finishes the start, then collects, instead of leaving it up.
  const stop = untilSignal();
  try {
    const gateway = await startGateway({
      stdio,
      supergateway: supergatewayBin(),
      stateless: values.stateless,
      ...(port === undefined ? {} : { port }),
      ...(values['log-dir'] === undefined ? {} : { logDir: values['log-dir'] }),
      ...(logLevel === undefined ? {} : { logLevel }),
      ...(graceMs === undefined ? {} : { graceMs }),
      ...(readyTimeoutMs === undefined ? {} : { readyTimeoutMs }),
    });
    let unexpected: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    try {
      if (values.json) {
        printJson(io, { url: gateway.url, pid: gateway.pid, pgid: gateway.pgid, tools: gateway.tools });
      } else {
        io.stdout(`${gateway.url}\n`);
      }
      io.stderr(
        `gateway ready: ${gateway.command} behind supergateway pid ${gateway.pid}, ${gateway.tools.length} tools` +
          `${gateway.calledTool === null ? '' : `, called ${gateway.calledTool}`}; log ${gateway.logPath}\n` +
          'SIGINT or SIGTERM stops it and everything it started\n',
      );
      unexpected = await Promise.race([stop.wait().then(() => undefined), gateway.exited]);
    } finally {
      await gateway.close();
    }
    if (unexpected !== undefined) {
      throw new SdkError(
        'service_exited',
        `supergateway exited on its own (code ${unexpected.code}, signal ${unexpected.signal}); see ${gateway.logPath}`,
        { remedy: 'Read the log; everything it had started was collected.', data: { logPath: gateway.logPath } },
      );
    }
    return EXIT.ok;
  } finally {
    stop.dispose();
    // After the gateway collected its group (or a failed start did): the supervisor has nothing left.
    await closeHostSupervisor();
  }
}
