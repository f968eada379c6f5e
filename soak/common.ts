/** What the soak's parts share: a seeded random source, the CLI, `services probe` and the leftover count. */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scanMarkedProcesses } from '../packages/supervisor/dist/index.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const BIN = join(ROOT, 'packages/cli/bin/scienceevolve.js');
export const SERVICE_FIXTURES = join(ROOT, 'test/fixtures/services');
export const SOAK_FIXTURES = join(ROOT, 'soak/fixtures');

/** A small seeded generator (mulberry32), so a failing soak can be replayed with `--seed`. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

/** A definition made of one service fixture (test/fixtures/services or soak/fixtures) and the shared lib. */
export function fixtureDefinition(file: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const dir = file.startsWith('soak:') ? SOAK_FIXTURES : SERVICE_FIXTURES;
  const name = file.replace(/^soak:/, '');
  return {
    entrypoint: 'server.cjs',
    files: {
      'server.cjs': readFileSync(join(dir, name), 'utf8'),
      'lib/makeServer.cjs': readFileSync(join(SERVICE_FIXTURES, 'lib/makeServer.cjs'), 'utf8'),
    },
    ...extra,
  };
}

/** What one CLI run did. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  pid: number;
  ms: number;
}

/** Runs the CLI with `args`; `env` replaces the environment when given; SIGKILL after `timeoutMs` (default 120 s). */
export function runCli(args: string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliRun> {
  const start = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: options.env ?? process.env,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      if (stderr.length < 100_000) stderr += c;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, pid: child.pid ?? -1, ms: performance.now() - start });
    });
  });
}

/** Live pids carrying a marker of `projectId`. */
export function markedPids(projectId: string): number[] {
  return scanMarkedProcesses((m: string) => m.split(':')[1] === projectId).map((p: { pid: number }) => p.pid);
}

/** Live pids whose command line contains `token` (for processes that cleared their environment). */
export function pidsWithArg(token: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (cmd.includes(token) && Number(entry) !== process.pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Polls `find` until it returns nothing or `deadlineMs` passes; returns the last survivors. */
export async function survivorsAfter(find: () => number[], deadlineMs: number): Promise<number[]> {
  const end = Date.now() + deadlineMs;
  let left = find();
  while (left.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    left = find();
  }
  return left;
}

/** SIGKILLs each pid (cleanup after counting). */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Runs `task` over `items` with at most `limit` at once. */
export async function pool<T, R>(
  items: T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await task(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * The collection mechanism a `services probe --json` document names in its top-level `collection` field
 * (a string, or an object with a string `mechanism`), or undefined when the build has no such field or
 * the text is no JSON document.
 */
export function collectionOf(probeStdout: string): string | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(probeStdout);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || !Object.hasOwn(doc, 'collection')) return undefined;
  const c = (doc as { collection: unknown }).collection;
  if (typeof c === 'string') return c;
  if (typeof c === 'object' && c !== null && Object.hasOwn(c, 'mechanism')) {
    const m = (c as { mechanism: unknown }).mechanism;
    if (typeof m === 'string') return m;
  }
  return JSON.stringify(c);
}

/** Counts one more `name` in `tally` (a map from mechanism to probes that named it). */
export function tallyCollection(tally: Map<string, number>, stdout: string): void {
  const name = collectionOf(stdout) ?? 'not reported';
  tally.set(name, (tally.get(name) ?? 0) + 1);
}
