/**
 * The command line that starts an agent's stdio face (`scienceevolve services serve … --agent A`), as a
 * harness configuration needs it: an absolute command and absolute paths, so that the harness may
 * launch it from any directory.
 */
import { resolve } from 'node:path';

/** Options of {@link serveCommand}. @internal */
export interface ServeCommandOptions {
  /** The `scienceevolve` bin script (its absolute path is used). */
  bin: string;
  dataDir: string;
  workspace: string;
  agent: string;
  /** Default: derived from `workspace` by `services serve`. */
  project?: string | undefined;
  /** Adds `--passthrough` (the agent's single service keeps its own names). */
  passthrough?: boolean;
  /** The Node executable. Default `process.execPath`. */
  node?: string;
}

/**
 * `{ command: node, args: [bin, 'services', 'serve', '--data-dir', D, '--workspace', WS, '--agent', A, …] }`.
 * @internal
 */
export function serveCommand(options: ServeCommandOptions): { command: string; args: string[] } {
  return {
    command: options.node ?? process.execPath,
    args: [
      resolve(options.bin),
      'services',
      'serve',
      '--data-dir',
      resolve(options.dataDir),
      '--workspace',
      resolve(options.workspace),
      '--agent',
      options.agent,
      ...(options.project === undefined ? [] : ['--project', options.project]),
      ...(options.passthrough ? ['--passthrough'] : []),
    ],
  };
}
