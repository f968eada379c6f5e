/**
 * Helpers of the supervisor tests: start the fixture host, read its JSON lines, and prove processes gone.
 * Everything started is registered for cleanup on the test context the moment it exists.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { processStartTime } from '@scienceevolve/supervisor/procfs';
import { formatMarker } from '@scienceevolve/supervisor/protocol';
import type { HostConfig } from '../fixtures/supervisor/host.js';

const root = new URL('../..', import.meta.url).pathname;
const hostScript = join(root, 'test/fixtures/supervisor/host.ts');

/** One JSON line the fixture host printed. */
export interface HostLine {
  event: string;
  [key: string]: unknown;
}

/** A running fixture host. */
export interface Host {
  child: ChildProcess;
  pid: number;
  logPath: string;
  lines: HostLine[];
  /** Resolves with the first line (already printed or to come) accepted by `match`; rejects after `timeoutMs` (default 30,000: a loaded 2-core machine can take 10 s to start a tsx host). */
  waitFor(match: (line: HostLine) => boolean, timeoutMs?: number): Promise<HostLine>;
  /** Writes one JSON command to the host's stdin. */
  command(value: unknown): void;
  /** The supervisor's log so far. */
  log(): string;
}

/** A project id no other test uses, so sweeps of parallel tests never meet. */
export function uniqueProjectId(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

/** A temporary directory, removed after the test. */
export function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'se-supervisor-'));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

/** Every pid and supervisor pid a host reported, so cleanup can kill them whatever the test did. */
function pidsIn(lines: HostLine[]): number[] {
  const pids = new Set<number>();
  for (const line of lines) {
    for (const pid of (line.pids as number[] | undefined) ?? []) pids.add(pid);
    if (line.event === 'supervisor' && typeof line.pid === 'number') pids.add(line.pid);
  }
  return [...pids];
}

/** Starts the fixture host with `config` (logPath defaults to a temp dir) and registers its cleanup. */
export function startHost(t: TestContext, config: Omit<HostConfig, 'logPath'> & { logPath?: string }): Host {
  const logPath = config.logPath ?? join(tempDir(t), 'supervisor.log');
  const child = spawn(process.execPath, ['--import', 'tsx', hostScript, JSON.stringify({ ...config, logPath })], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines: HostLine[] = [];
  const waiters = new Set<() => void>();
  t.after(() => {
    // Cleanup first of all: the host, then everything it reported (its services' groups too).
    for (const pid of [child.pid ?? 0, ...pidsIn(lines)]) {
      if (pid <= 1) continue;
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });
  createInterface({ input: child.stdout! }).on('line', (text) => {
    try {
      lines.push(JSON.parse(text) as HostLine);
    } catch {
      lines.push({ event: 'text', text });
    }
    for (const wake of waiters) wake();
  });
  child.stdin!.on('error', () => {}); // the host may be killed while the test writes
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    pid: child.pid!,
    logPath,
    lines,
    waitFor(match, timeoutMs = 30_000) {
      return new Promise<HostLine>((resolve, reject) => {
        const check = () => {
          const found = lines.find(match);
          if (found === undefined) return false;
          done();
          resolve(found);
          return true;
        };
        const timer = setTimeout(() => {
          done();
          reject(
            new Error(`host ${child.pid} printed no matching line within ${timeoutMs} ms: ${JSON.stringify(lines)}`),
          );
        }, timeoutMs);
        const onExit = () => {
          if (check()) return;
          done();
          reject(new Error(`host ${child.pid} exited; lines: ${JSON.stringify(lines)}`));
        };
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        if (!check()) exited.then(onExit, onExit);
      });
    },
    command(value) {
      child.stdin!.write(`${JSON.stringify(value)}\n`);
    },
    log() {
      try {
        return readFileSync(logPath, 'utf8');
      } catch {
        return '';
      }
    },
  };
}

/** True while `pid` exists at all (a zombie counts: `kill(pid, 0)` succeeds on it). */
export function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Polls until every pid is gone (`kill(pid, 0)` → ESRCH) or the deadline passes; returns the survivors.
 * Orphans are reparented to pid 1, which reaps its zombies only every ~2 s on this machine kind, so
 * deadlines leave room for that after the supervisor's grace.
 */
export async function waitGone(pids: readonly number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = pids.filter(exists);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    left = left.filter(exists);
  }
  return left;
}

/** Waits `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A marker of this test process that no other test uses. */
export function testMarker(projectId: string): string {
  return formatMarker({
    projectId,
    hostPid: process.pid,
    hostStart: processStartTime(process.pid) ?? '0',
    invocationId: randomUUID(),
  });
}

/** A process started by {@link startProcess}. */
export interface Started {
  child: ChildProcess;
  pid: number;
  /** The first line it printed on stdout. */
  line: string;
  /** How it ended. */
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Adds a pid (a grandchild it reported) to what is SIGKILLed and proven gone after the test. */
  adopt(pid: number): void;
}

/**
 * Starts a process (`detached`: leading its own group) and resolves with its first stdout line. After the
 * test it SIGKILLs the process, its group when detached, and every adopted pid, then proves each gone
 * (ESRCH, polled to a deadline: orphans wait for init's reaping).
 */
export async function startProcess(
  t: TestContext,
  command: string,
  args: string[],
  options: { detached?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<Started> {
  const detached = options.detached ?? false;
  const child = spawn(command, args, {
    detached,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: options.env ?? process.env,
  });
  const pid = child.pid;
  assert.ok(pid !== undefined, `${command} started`);
  const pids = [pid];
  t.after(async () => {
    for (const target of [...(detached ? [-pid] : []), ...pids]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone
      }
    }
    assert.deepEqual(await waitGone(pids, 6000), [], `${command} ${args.join(' ')}: every pid is gone`);
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    void exit.then(({ code, signal }) => reject(new Error(`${command} exited (${code ?? signal}) before printing`)));
  });
  return { child, pid, line, exit, adopt: (p) => pids.push(p) };
}

/** SIGKILLs `pids` (and their groups) after the test, then proves each gone. */
export function cleanup(t: TestContext, pids: () => number[]): void {
  t.after(async () => {
    const all = pids();
    for (const pid of all) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
    assert.deepEqual(await waitGone(all, 6000), [], 'every pid of the test is gone');
  });
}

/** The first stdout line of `child`. */
export async function firstLine(child: ChildProcess): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return line;
}
