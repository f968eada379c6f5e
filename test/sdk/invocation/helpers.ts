/** Helpers of the invocation tests: workflows built from the service fixtures, and proofs that processes are gone. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { scanMarkedProcesses } from '@scienceevolve/supervisor/protocol';

const FIXTURES = new URL('../../fixtures/services/', import.meta.url).pathname;

/** A definition that runs the fixture `name` (with the shared `lib/makeServer.cjs` beside it). */
export function fixtureDefinition(
  name: string,
  extra: { args?: string[]; envFrom?: Record<string, string>; command?: string } = {},
) {
  return {
    entrypoint: 'server.cjs',
    files: {
      'server.cjs': readFileSync(join(FIXTURES, name), 'utf8'),
      'lib/makeServer.cjs': readFileSync(join(FIXTURES, 'lib/makeServer.cjs'), 'utf8'),
    },
    ...extra,
  };
}

/** A directory removed after the test. */
export function tempDir(t: TestContext, prefix = 'se-inv-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** True when `pid` is gone (or a zombie: PID 1 here may never reap orphans). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}

/** Polls until every pid is gone; fails the test naming the survivors at the deadline. */
export async function assertAllGone(pids: number[], deadlineMs = 5000): Promise<void> {
  const end = Date.now() + deadlineMs;
  let alive = pids.filter((p) => !isGone(p));
  while (alive.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    alive = pids.filter((p) => !isGone(p));
  }
  assert.deepEqual(alive, [], `processes still alive: ${alive.join(', ')}`);
}

/** Polls until no live process carries a marker of `projectId`. */
export async function assertNoMarkedProcess(projectId: string, deadlineMs = 5000): Promise<void> {
  const match = (m: string) => m.split(':')[1] === projectId;
  const end = Date.now() + deadlineMs;
  let found = scanMarkedProcesses(match);
  while (found.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    found = scanMarkedProcesses(match);
  }
  assert.deepEqual(found, [], 'processes carrying the project marker are still alive');
}

/** Kills every process carrying a marker of `projectId` (cleanup after a failed assertion). */
export function killMarked(projectId: string): void {
  for (const p of scanMarkedProcesses((m) => m.split(':')[1] === projectId)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
