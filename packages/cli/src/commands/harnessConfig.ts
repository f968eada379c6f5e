/** `scienceevolve harness-config --format F …`: the MCP configuration an external harness needs to reach an agent's managed bridge. */
import {
  HARNESS_CONFIG_FORMATS,
  type HarnessConfigFormat,
  harnessConfig,
  serveCommand,
} from '@scienceevolve/sdk/harness-config';
import { parseCommand, required } from '../args.js';
import { cliBinPath } from '../cliPaths.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

export async function harnessConfigCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('harness-config'), argv);
  if (positionals.length > 0) throw usageError('harness-config takes no positional arguments');
  const format = required(values.format, '--format', HARNESS_CONFIG_FORMATS.join(', '));
  if (!(HARNESS_CONFIG_FORMATS as readonly string[]).includes(format)) {
    throw usageError(`--format takes one of ${HARNESS_CONFIG_FORMATS.join(', ')}, not "${format}"`);
  }
  const layout = values['opencode-layout'];
  if (layout !== undefined && layout !== 'v1' && layout !== 'v2') {
    throw usageError(`--opencode-layout takes v1 or v2, not "${layout}"`);
  }
  let face: 'stdio' | 'http';
  let stdio: { command: string; args: string[] } | undefined;
  let http: { url: string; tokenEnv: string } | undefined;
  if (values.http) {
    face = 'http';
    if (values.passthrough)
      throw usageError('--passthrough goes with the stdio face; pass it to `services serve --http`');
    http = {
      url: required(values.url, '--url', 'the HTTP face, as `services serve --http` printed it'),
      tokenEnv: required(
        values['token-env'],
        '--token-env',
        'the environment variable that will hold the bearer token',
      ),
    };
  } else {
    face = 'stdio';
    if (values.url !== undefined || values['token-env'] !== undefined)
      throw usageError('--url and --token-env go with --http');
    stdio = serveCommand({
      bin: cliBinPath(),
      dataDir: required(values['data-dir'], '--data-dir', 'the directory that holds all ScienceEvolve state'),
      workspace: required(values.workspace, '--workspace', 'the task directory the services work in'),
      agent: required(values.agent, '--agent', 'the agent whose bridge the harness reaches'),
      project: values.project,
      passthrough: values.passthrough,
    });
  }
  const serverName = values.name ?? 'scienceevolve';
  const startupTimeoutSec = values['startup-timeout-sec'];
  const toolTimeoutSec = values['tool-timeout-sec'];
  const text = harnessConfig({
    format: format as HarnessConfigFormat,
    serverName,
    ...(stdio === undefined ? {} : { stdio }),
    ...(http === undefined ? {} : { http }),
    ...(startupTimeoutSec === undefined ? {} : { startupTimeoutSec }),
    ...(toolTimeoutSec === undefined ? {} : { toolTimeoutSec }),
    ...(layout === undefined ? {} : { opencodeLayout: layout }),
  });
  if (values.json) printJson(io, { format, name: serverName, face, text });
  else io.stdout(text);
  return EXIT.ok;
}
