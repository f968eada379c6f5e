/** Helpers of the invocation tests: workflows built from the service fixtures, and proofs that processes are gone. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { scanMarkedProcesses } from '@scienceevolve/supervisor/procfs';

export { assertAllGone, isGone } from '../sessions/helpers.ts';

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
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
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
