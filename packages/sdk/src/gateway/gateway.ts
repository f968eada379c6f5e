/**
 * stdio → HTTP, supervised (`scienceevolve gateway --stdio "<launch command>"`): runs supergateway 4 with
 * Streamable HTTP output in a process group of its own, under a supervisor of its own, and proves the
 * endpoint works with the official MCP client (`initialize`, `tools/list`, and a `tools/call` of a
 * read-only tool when one can be called without arguments) before it is reported ready.
 *
 * Why all the machinery: supergateway starts the stdio server (through a shell) in a process group of
 * its own, per session (`--stateful`) or per request (stateless). Killing supergateway's group therefore
 * does not reach the server, and a SIGKILLed supergateway orphans it. So every process of the gateway
 * carries one marker in its environment (`SCIENCEEVOLVE_MARKER`, project id `gateway`), and supergateway
 * is launched through the services' supervised-spawn path (`SupervisedGroup`): registered with the host's
 * supervisor, and collected by the one kill path (its group, then the marked processes it spawned).
 * The supervisor does the same if the host process dies, SIGKILL included.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MARKER_ENV, processStartTime } from '@scienceevolve/supervisor/procfs';
import { formatMarker } from '@scienceevolve/supervisor/protocol';
import { DEFAULT_GRACE_MS } from '@scienceevolve/supervisor/terminate';
import { SdkError, toSdkError } from '../errors.js';
import { makePrivateDirSync, openFreshSync, tightenDirSync } from '../fileModes.js';
import { commandSecrets, redactText, type Secrets } from '../redact.js';
import { accepts, assertPortFree, checkGateway, freePort } from './gatewayCheck.js';
import { delay, SupervisedGroup } from '../processes/processGroup.js';
import { sweepStrays } from '../processes/strayProcesses.js';
import { sharedSupervisor } from '../processes/sharedSupervisor.js';
import { runEach } from '../processes/teardown.js';
import { durationMs } from '../workflow/workflowSchema.js';

/** supergateway's documented default port, and the gateway's: 8000. */
export const DEFAULT_GATEWAY_PORT = 8000;

/** The project id in every gateway marker (`se1:gateway:<hostPid>:<hostStart>:<gatewayId>`). */
export const GATEWAY_PROJECT_ID = 'gateway';

/** Options of {@link startGateway}. @internal */
export interface GatewayOptions {
  /** The stdio MCP server's launch command; supergateway runs it through `/bin/sh`. */
  stdio: string;
  /**
   * supergateway's entry script (the file its package's `bin` names). The SDK does not depend on
   * supergateway: the CLI resolves it from its own dependencies with `createRequire`.
   */
  supergateway: string;
  /** TCP port supergateway listens on (on 127.0.0.1 only, through the loopback guard); 0 picks a free one. Default 8000. */
  port?: number;
  /** supergateway's stateless mode: a new server process for every request (~425 ms a call). Default `false` (`--stateful`). */
  stateless?: boolean;
  /**
   * Where supergateway's output (`gateway-<port>.log`) goes, and the supervisor's log
   * (`gateway-<port>.supervisor.log`) when the gateway starts this process's supervisor (when a run in the
   * same process already did, the gateway registers with that one). Default {@link defaultGatewayLogDir}.
   */
  logDir?: string;
  /** supergateway's `--logLevel`. `info` logs every message that passes. Default `info`. */
  logLevel?: 'debug' | 'info' | 'none';
  /** Milliseconds between SIGTERM and SIGKILL when the gateway is collected. Default {@link DEFAULT_GRACE_MS} (2,000). */
  graceMs?: number;
  /** Milliseconds for supergateway to listen and for the checks to pass, together. Default 30,000 (30 s). */
  readyTimeoutMs?: number;
  /** supergateway's environment (the stdio server inherits it); the marker is added. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Receives every lifecycle transition, for a log. Must not throw. */
  onEvent?: (event: GatewayEvent) => void;
}

/**
 * A gateway's life; every transition is reported through {@link GatewayOptions.onEvent}.
 * - `starting`: the supervisor is up and supergateway was spawned; waiting for it to listen;
 * - `checking`: it listens; the official client runs `initialize`, `tools/list` and a `tools/call`;
 * - `ready`: the checks passed; the endpoint is in use;
 * - `stopping`: collecting supergateway's group and the marked processes it spawned;
 * - `stopped`: nothing the gateway started is alive.
 */
export type GatewayState = 'starting' | 'checking' | 'ready' | 'stopping' | 'stopped';

/** What {@link GatewayOptions.onEvent} receives. */
export type GatewayEvent =
  | { type: 'state'; state: GatewayState; pid?: number }
  /** supergateway exited while the gateway was not stopping it. */
  | { type: 'exited'; code: number | null; signal: NodeJS.Signals | null };

/** A running, checked gateway. @internal */
export interface Gateway {
  /** The endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly port: number;
  /** supergateway's pid. */
  readonly pid: number;
  /** supergateway's process group (its pid: it was started detached). */
  readonly pgid: number;
  /** The marker every process of the gateway carries. */
  readonly marker: string;
  /** The launch command as output may show it: URLs and secret-named values redacted (`redactCommand`). */
  readonly command: string;
  /** The tool names `tools/list` returned during the check. */
  readonly tools: string[];
  /** The read-only tool called during the check, or `null` when none could be called without arguments. */
  readonly calledTool: string | null;
  /**
   * supergateway's output (and the stdio server's stderr, which supergateway copies into it), line by line
   * with the launch command's secrets redacted (supergateway writes the command into its first lines).
   */
  readonly logPath: string;
  /** The log of the supervisor the gateway is registered with. */
  readonly supervisorLogPath: string;
  /** Resolves when supergateway has exited, on its own or through {@link Gateway.close}. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Collects supergateway's group and every marked process it spawned, and releases them from the
   * supervisor. The supervisor itself is the host process's: it ends with the process, or with
   * `closeHostSupervisor()`. Idempotent.
   */
  close(): Promise<void>;
}

/** `$XDG_CACHE_HOME/scienceevolve/gateway` (default `~/.cache/scienceevolve/gateway`). */
export function defaultGatewayLogDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const cache =
    env.XDG_CACHE_HOME !== undefined && env.XDG_CACHE_HOME !== '' ? env.XDG_CACHE_HOME : join(homedir(), '.cache');
  return join(cache, 'scienceevolve', 'gateway');
}

/**
 * Starts supergateway in front of `options.stdio` and resolves once the official client checked it.
 * On any failure everything started is collected before the promise rejects.
 *
 * @throws SdkError `usage` (no command, bad port), `io_error` (port taken, log dir), `supervisor_failed`,
 *   `service_exited` (supergateway exited while starting), `startup_timeout` (not listening or not
 *   checked within `readyTimeoutMs`), `initialize_failed` / `protocol_error` (a check failed).
 * @internal
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  if (options.stdio.trim() === '') {
    throw new SdkError('usage', 'the gateway needs a launch command', { remedy: 'Pass --stdio "<launch command>".' });
  }
  const requestedPort = options.port ?? DEFAULT_GATEWAY_PORT;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65_535) {
    throw new SdkError('usage', `${requestedPort} is not a TCP port`, {
      remedy: 'Pass --port 1–65535, or 0 for a free one.',
    });
  }
  const graceMs = durationMs(options.graceMs, 'graceMs', DEFAULT_GRACE_MS);
  const deadline = Date.now() + durationMs(options.readyTimeoutMs, 'readyTimeoutMs', 30_000, 1);
  const remaining = () => Math.max(1, deadline - Date.now());
  const onEvent = options.onEvent ?? (() => {});
  const port = requestedPort === 0 ? await freePort() : requestedPort;
  await assertPortFree(port);

  const logDir = options.logDir ?? defaultGatewayLogDir(options.env ?? process.env);
  const logPath = join(logDir, `gateway-${port}.log`);
  const ownSupervisorLogPath = join(logDir, `gateway-${port}.supervisor.log`);
  try {
    makePrivateDirSync(logDir);
    // The default directory is ours (made 0700; one made before that rule is narrowed); a --log-dir is the user's.
    if (options.logDir === undefined) tightenDirSync(logDir);
  } catch (error) {
    throw new SdkError('io_error', `cannot create the gateway log directory ${logDir}: ${(error as Error).message}`, {
      remedy: 'Pass a writable --log-dir.',
      data: { logDir },
      cause: error,
    });
  }

  // Strays of earlier gateway hosts that died together with their supervisors.
  await sweepStrays({ projectId: GATEWAY_PROJECT_ID, graceMs });
  const supervisor = await sharedSupervisor({ logPath: ownSupervisorLogPath, graceMs });
  const supervisorLogPath = supervisor.logPath;
  const marker = formatMarker({
    projectId: GATEWAY_PROJECT_ID,
    hostPid: process.pid,
    hostStart: processStartTime(process.pid) ?? '0',
    invocationId: `gw${port}-${randomBytes(6).toString('hex')}`,
  });
  const group = new SupervisedGroup({ marker, registry: supervisor, graceMs });
  // A token in the launch command's arguments or a URL's user information: never in the log or an error.
  const secrets = commandSecrets(options.stdio);
  let logged: Promise<void> | undefined;
  let child: ChildProcess | undefined;
  let stopping = false;
  const transition = (to: GatewayState) => {
    onEvent({ type: 'state', state: to, ...(child?.pid === undefined ? {} : { pid: child.pid }) });
  };

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      stopping = true;
      transition('stopping');
      let survivors: number[] = [];
      await runEach([
        // SIGTERM to supergateway's group and to every marked process it spawned (the stdio servers in
        // their own groups), SIGKILL after the grace, until /proc shows none of them alive; released from
        // the supervisor only when nothing survived.
        async () => {
          survivors = (await group.collect()).survivors;
        },
        // The marker is the gateway's alone; what outlived SIGKILL keeps it under the supervisor.
        () => {
          if (survivors.length === 0) supervisor.releaseMarker(marker);
        },
        // The output pipes end once every process holding them is gone; the log's last lines are written.
        async () => {
          if (logged !== undefined) await Promise.race([logged, delay(LOG_DRAIN_MS)]);
          child?.stdout?.destroy();
          child?.stderr?.destroy();
        },
      ]);
      transition('stopped');
    })();
    return closed;
  };

  try {
    await group.announce();
    // A new 0600 file: a link planted at the path is removed, never followed (fileModes.ts).
    const logFd = openFreshSync(logPath);
    const log = createWriteStream('', { fd: logFd });
    log.on('error', () => {});
    try {
      const args = [
        // Loopback only, and Host/Origin checked: supergateway alone listens everywhere (loopbackGuard.ts).
        '--import',
        pathToFileURL(fileURLToPath(new URL('./loopbackGuard.js', import.meta.url))).href,
        options.supergateway,
        '--stdio',
        options.stdio,
        '--outputTransport',
        'streamableHttp',
        '--port',
        String(port),
        '--logLevel',
        options.logLevel ?? 'info',
        ...(options.stateless ? [] : ['--stateful']),
      ];
      // supergateway leads a new process group (pgid = its pid), so it can be collected as a whole and a
      // Ctrl-C at the host's terminal is the host's to handle, not supergateway's.
      child = group.spawn(process.execPath, args, {
        // stdin is a pipe we hold: supergateway shuts down (stopping its servers) when it closes, which
        // also happens when the host dies. Its output comes through us, never to our stdout: supergateway
        // logs the launch command as given, so each line is redacted on its way into the log file.
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...(options.env ?? process.env), [MARKER_ENV]: marker },
        windowsHide: true,
      });
    } catch (error) {
      // Closes the file too.
      log.destroy();
      throw error;
    }
    const spawned = child;
    logged = Promise.all([copyRedacted(spawned.stdout, log, secrets), copyRedacted(spawned.stderr, log, secrets)]).then(
      () => new Promise<void>((resolve) => log.end(resolve)),
    );
    spawned.on('error', () => {});
    spawned.stdin?.on('error', () => {});
    if (spawned.pid === undefined) {
      throw new SdkError('service_exited', `supergateway (${options.supergateway}) could not be started`, {
        remedy: 'Check that Node can run it.',
        data: { supergateway: options.supergateway },
      });
    }
    const pid = spawned.pid;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      spawned.once('exit', (code, signal) => {
        if (!stopping) onEvent({ type: 'exited', code, signal });
        resolve({ code, signal });
      });
    });
    transition('starting');

    const url = `http://127.0.0.1:${port}/mcp`;
    let exitedEarly = false;
    void exited.then(() => {
      exitedEarly = true;
    });
    while (!(await accepts(port))) {
      if (exitedEarly || spawned.exitCode !== null || spawned.signalCode !== null) {
        throw new SdkError(
          'service_exited',
          `supergateway exited while starting (code ${spawned.exitCode}, signal ${spawned.signalCode}); see ${logPath}`,
          {
            remedy: 'Read the log: a taken port or a bad launch command are the usual causes.',
            data: { logPath, port },
          },
        );
      }
      if (Date.now() >= deadline) {
        throw new SdkError('startup_timeout', `supergateway did not listen on port ${port} in time; see ${logPath}`, {
          remedy: 'Read the log, or raise the ready timeout.',
          data: { logPath, port },
        });
      }
      await delay(25);
    }
    transition('checking');
    let checked: { tools: string[]; calledTool: string | null };
    try {
      checked = await checkGateway(url, remaining);
    } catch (error) {
      const failed = toSdkError(error, 'protocol_error');
      throw new SdkError(failed.code, `${failed.message}; see ${logPath}`, {
        ...(failed.remedy === undefined ? {} : { remedy: failed.remedy }),
        data: { ...failed.data, logPath },
        cause: failed.cause,
      });
    }
    // Whatever answered must be this supergateway: one that lost the port to another process exits.
    if (exitedEarly || spawned.exitCode !== null || spawned.signalCode !== null) {
      throw new SdkError('service_exited', `supergateway exited during the checks; see ${logPath}`, {
        remedy: 'Read the log: a port taken meanwhile is the usual cause; pick another --port.',
        data: { logPath, port },
      });
    }
    transition('ready');
    return {
      url,
      port,
      pid,
      pgid: pid,
      marker,
      command: redactText(options.stdio, secrets),
      tools: checked.tools,
      calledTool: checked.calledTool,
      logPath,
      supervisorLogPath,
      exited,
      close,
    };
  } catch (error) {
    await close();
    throw redactedError(error, secrets);
  }
}

/** Milliseconds {@link Gateway.close} waits for supergateway's last output to reach the log: 1,000. */
const LOG_DRAIN_MS = 1000;

/**
 * Longest line of supergateway's output copied to the log, in characters: 65,536. A longer line is left
 * out whole (a note says so): cutting it could keep the start of a secret the redaction needs whole to
 * recognise, and holding it would let a server that never ends a line grow the host's memory.
 */
const GATEWAY_LOG_LINE_CHARS = 64 * 1024;

/** Copies `stream` into `log` line by line, each with `secrets` redacted; resolves when the stream ends. */
function copyRedacted(stream: Readable | null, log: WriteStream, secrets: Secrets): Promise<void> {
  if (stream === null) return Promise.resolve();
  const write = (text: string) => {
    if (!log.destroyed && !log.writableEnded) log.write(text);
  };
  let pending = '';
  /** Characters of the current line dropped since it outgrew the limit (0: the line is kept). */
  let dropped = 0;
  const endLine = (rest: string) => {
    if (dropped > 0)
      write(`[a line of ${dropped + rest.length} characters left out: longer than ${GATEWAY_LOG_LINE_CHARS}]\n`);
    else write(`${redactText((pending + rest).replace(/\r$/, ''), secrets)}\n`);
    pending = '';
    dropped = 0;
  };
  return new Promise((resolve) => {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      let start = 0;
      for (let newline = chunk.indexOf('\n'); newline !== -1; newline = chunk.indexOf('\n', start)) {
        endLine(chunk.slice(start, newline));
        start = newline + 1;
      }
      const rest = chunk.slice(start);
      if (dropped > 0) dropped += rest.length;
      else if (pending.length + rest.length > GATEWAY_LOG_LINE_CHARS) {
        dropped = pending.length + rest.length;
        pending = '';
      } else pending += rest;
    });
    const finish = () => {
      if (pending !== '' || dropped > 0) endLine('');
      resolve();
    };
    stream.once('end', finish);
    stream.once('error', finish);
    stream.once('close', finish);
  });
}

/** `error` as an SdkError whose message shows none of the launch command's secrets. */
function redactedError(error: unknown, secrets: Secrets): unknown {
  const sdk = toSdkError(error);
  const message = redactText(sdk.message, secrets);
  if (message === sdk.message) return error;
  return new SdkError(sdk.code, message, {
    ...(sdk.remedy === undefined ? {} : { remedy: sdk.remedy }),
    data: sdk.data,
  });
}
