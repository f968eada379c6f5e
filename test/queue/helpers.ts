/**
 * Helpers of the queue backend's tests: a real `redis-server` on a Unix socket in the test's directory
 * (stopped, and proven gone, after the test), real `scienceevolve worker` processes with their own data
 * dirs, and the scripted workflow whose worker invocations become jobs.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CliChild, runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertGone } from '../fixtures/store/children.js';
import { type RunRecord, runEventsPath, runRecordPath } from '../../packages/sdk/src/engine/runRecord.js';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { ProjectPaths } from '../../packages/sdk/src/store/projectStore.js';
import type { EngineSandbox } from '../sdk/engine/helpers.js';

/** A Redis server of one test. */
export interface TestRedis {
  /** `unix://<dir>/redis.sock` */
  url: string;
  /** Its current process id. */
  pid(): number;
  /** Stops it (SIGTERM: it saves its data first, for {@link start}) and proves it gone. */
  stop(): Promise<void>;
  /** Starts it again on the same socket with the data it saved. */
  start(): Promise<void>;
}

/**
 * Starts `redis-server` on a Unix socket in `dir` (no TCP port), with `extra` arguments (e.g.
 * `--requirepass`); stopped and proven gone after the test.
 */
export async function startRedis(t: TestContext, dir: string, extra: readonly string[] = []): Promise<TestRedis> {
  const socket = join(dir, 'redis.sock');
  let child: ChildProcess | undefined;
  const launch = async () => {
    const c = spawn(
      'redis-server',
      [
        '--port',
        '0',
        '--unixsocket',
        socket,
        '--unixsocketperm',
        '700',
        '--dir',
        dir,
        '--save',
        '3600 1',
        '--appendonly',
        'no',
        ...extra,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = c;
    const deadline = Date.now() + 10_000;
    while (!existsSync(socket)) {
      if (c.exitCode !== null) assert.fail('redis-server exited at start');
      if (Date.now() > deadline) assert.fail('redis-server did not open its socket within 10 s');
      await sleep(20);
    }
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const c = child;
    if (c === undefined || c.pid === undefined) return;
    child = undefined;
    if (c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill(signal);
      await exited;
    }
    await assertGone(c.pid);
  };
  // After the test its data does not matter: SIGKILL (a SIGTERMed Redis whose directory is gone refuses to exit).
  t.after(() => stop('SIGKILL'));
  await launch();
  return {
    url: `unix://${socket}`,
    pid: () => child?.pid ?? -1,
    stop: () => stop('SIGTERM'),
    start: launch,
  };
}

/**
 * Starts `scienceevolve worker` with short lock and stall intervals; waits until it takes jobs. `queue` is
 * the URL for `--queue`, or the queue options themselves (`['--queue-file', F]`); `env` its environment.
 */
export async function startWorker(
  t: TestContext,
  queue: string | readonly string[],
  dataDir: string,
  extra: string[] = [],
  wrap: readonly string[] = [],
  env?: NodeJS.ProcessEnv,
): Promise<CliChild> {
  const worker = startCli(
    t,
    [
      'worker',
      ...(typeof queue === 'string' ? ['--queue', queue] : queue),
      '--data-dir',
      dataDir,
      '--lock-duration-ms',
      '2000',
      '--stalled-interval-ms',
      '1000',
      ...extra,
    ],
    wrap,
    env,
  );
  t.after(async () => {
    // A worker still running at the end is drained (SIGTERM), then proven gone.
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGTERM');
      const timer = setTimeout(() => worker.child.kill('SIGKILL'), 10_000);
      await worker.exited;
      clearTimeout(timer);
    }
    await assertGone(worker.pid);
  });
  await worker.waitForStderr(/worker \S+ ready/, 120_000);
  return worker;
}

/**
 * A worker that cannot see `hidden` (a directory): it runs under bubblewrap with an empty tmpfs mounted
 * there, as a worker on another machine without the shared filesystem would. `pid` of the result is the
 * worker's own (inside bubblewrap, same pid namespace); SIGTERM to it drains the worker and bubblewrap
 * exits with it. Both are proven gone after the test.
 */
export async function startWorkerWithout(
  t: TestContext,
  url: string,
  dataDir: string,
  hidden: string,
): Promise<CliChild> {
  const wrapped = await startWorker(
    t,
    url,
    dataDir,
    [],
    ['bwrap', '--dev-bind', '/', '/', '--tmpfs', hidden, '--die-with-parent', '--'],
  );
  const bwrapPid = wrapped.pid;
  const children = readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, 'utf8').trim().split(/\s+/);
  assert.equal(children.length, 1, 'bubblewrap runs the worker as its one child');
  const pid = Number(children[0]);
  t.after(async () => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
    await assertGone(pid);
    await assertGone(bwrapPid);
  });
  return { ...wrapped, pid };
}

/** Writes the test workflow and script: Main delegates `tasks` additions to the analyst, one by one. */
export async function writeDelegatingRun(
  base: string,
  tasks: number,
  options: { slowMs?: number; retries?: number; git?: boolean } = {},
): Promise<{ workflowPath: string; scriptPath: string; expected: string }> {
  const workflowPath = join(base, 'workflow.json');
  const scriptPath = join(base, 'script.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      orchestration: { invocationRetries: options.retries ?? 1, git: options.git ?? false },
      agents: {
        main: agent([['counts', 'counts']]),
        analyst: agent([
          ['adds', 'adds'],
          ['counts', 'counts'],
          ['slow', 'slow'],
        ]),
      },
      mcpDefinitions: {
        adds: fixtureDefinition('addsNumbers.cjs'),
        counts: fixtureDefinition('countsCalls.cjs'),
        slow: fixtureDefinition('sleepsOnCall.cjs'),
      },
    }),
  );
  const main: unknown[] = [];
  const analyst: unknown[] = [];
  for (let i = 0; i < tasks; i += 1) {
    main.push({ call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: `add ${i} and ${i}` } });
    analyst.push({ call: 'counts__count', arguments: { label: `task-${i}` } });
    analyst.push({ call: 'slow__sleep', arguments: { ms: options.slowMs ?? 0 } });
    analyst.push({ call: 'adds__add', arguments: { a: i, b: i } });
    analyst.push({ final: '{{0}}={{2}}' });
  }
  main.push({ final: Array.from({ length: tasks }, (_, i) => `{{${i}}}`).join(' ') });
  await writeFile(scriptPath, JSON.stringify({ agents: { main, analyst } }));
  const expected = Array.from({ length: tasks }, (_, i) => `task-${i}#1=${2 * i}`).join(' ');
  return { workflowPath, scriptPath, expected };
}

/** SIGTERMs a worker (drain) and asserts it exits 0 within 20 s, then that it is gone. */
export async function stopWorker(worker: CliChild): Promise<void> {
  // The worker's own pid (a wrapped worker's is not its child's).
  process.kill(worker.pid, 'SIGTERM');
  const timer = setTimeout(() => worker.child.kill('SIGKILL'), 20_000);
  const code = await worker.exited;
  clearTimeout(timer);
  assert.equal(code, 0, `the worker drained and exited 0:\n${worker.stderr()}`);
  await assertGone(worker.pid);
}

/** Polls (to `timeoutMs`, default 180 s: services start slowly on a loaded machine) until `file` exists and its text matches `pattern`. */
export async function waitForFile(file: string, pattern: RegExp, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (pattern.test(readFileSync(file, 'utf8'))) return;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) assert.fail(`${file} did not match ${pattern} within ${timeoutMs} ms`);
    await sleep(25);
  }
}

/** How long a queued test run may take: real services on a loaded 2-core CI machine may take minutes. */
export const RUN_TIMEOUT_MS = 240_000;

/** What a queued test run needs besides the sandbox and the queue. */
export interface QueuedRun {
  workflowPath: string;
  scriptPath: string;
  /** The run's workspace. Default the sandbox's. */
  workspace?: string;
  /** More `run` options (before the requirement), e.g. `--queue-unreachable-ms`. */
  extra?: string[];
  /** `--json` (the result as a document on stdout). Default true. */
  json?: boolean;
}

/**
 * `scienceevolve run … --queue URL [--json] add`: the sandbox's data dir and project, the given workflow
 * and script, a 300 ms grace.
 */
export function queuedRunArgs(box: EngineSandbox, url: string, run: QueuedRun): string[] {
  return [
    'run',
    ...queueCommon(box, url),
    '--workspace',
    run.workspace ?? box.workspace,
    '--workflow',
    run.workflowPath,
    '--script',
    run.scriptPath,
    ...(run.extra ?? []),
    ...(run.json === false ? [] : ['--json']),
    'add',
  ];
}

/** The options `run` and `resume` of a queued test share: data dir, project, a 300 ms grace, the queue. */
export function queueCommon(box: EngineSandbox, url: string): string[] {
  return ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '300', '--queue', url];
}

/** What `run --json` printed, as the tests read it. */
export interface RunDoc {
  run: string;
  status: string;
  output: string | null;
  error?: { code: string; message: string; remedy?: string } | null;
  events: RunEvent[];
}

/** Runs a queued run to its end (proven gone); its exit code, stderr and `--json` document. */
export async function runQueued(
  t: TestContext,
  box: EngineSandbox,
  url: string,
  run: QueuedRun,
): Promise<{ code: number | null; stderr: string; doc: RunDoc }> {
  const done = await runCliToEnd(t, queuedRunArgs(box, url, run), RUN_TIMEOUT_MS);
  const doc = done.json as RunDoc | undefined;
  assert.ok(doc !== undefined, `run --json printed no document (exit ${done.code}):\n${done.stderr}`);
  return { code: done.code, stderr: done.stderr, doc };
}

/** The run record (`run.json`) of `run` in the sandbox's project. */
export function readRunRecord(box: EngineSandbox, run: string): RunRecord {
  return JSON.parse(readFileSync(runRecordPath(new ProjectPaths(box.dataDir, box.project), run), 'utf8')) as RunRecord;
}

/** The journal (`events.jsonl`) of `run` in the sandbox's project. */
export function readJournal(box: EngineSandbox, run: string): RunEvent[] {
  return readFileSync(runEventsPath(new ProjectPaths(box.dataDir, box.project), run), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RunEvent);
}
