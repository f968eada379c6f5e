/**
 * Helpers of the engine tests: a fresh data dir, workspace and project per test with its cleanup
 * registered at once, and proofs that every process a run started is gone.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseMarker } from '@scienceevolve/supervisor/protocol';
import { scanMarkedProcesses } from '@scienceevolve/supervisor/procfs';
import type { RunEvent, RunEventOf, RunEventType } from '../../../packages/sdk/src/events/runEvents.js';
import { closeHostSupervisor } from '../../../packages/sdk/src/invocation/hostSupervision.js';
import { assertGone } from '../../fixtures/store/children.js';
import { tempDir } from '../../fixtures/store/tempDir.js';

/** Where one test runs. */
export interface EngineSandbox {
  dataDir: string;
  workspace: string;
  /** A project id no other test uses, so sweeps of parallel tests never meet. */
  project: string;
  base: string;
}

/** The marked processes of `project` still alive. */
export function markedProcesses(project: string): number[] {
  return scanMarkedProcesses((m) => parseMarker(m)?.projectId === project).map((p) => p.pid);
}

/**
 * A sandbox whose cleanup runs whatever the test did: the host's supervisor is closed and anything still
 * carrying the project's marker is SIGKILLed (the test then fails on its own assertions, leaking nothing).
 */
export async function sandbox(t: TestContext): Promise<EngineSandbox> {
  const base = await tempDir(t, 'se-engine-');
  const project = `t${randomBytes(5).toString('hex')}`;
  t.after(async () => {
    await closeHostSupervisor();
    for (const pid of markedProcesses(project)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  const workspace = join(base, 'workspace');
  await mkdir(workspace);
  return { dataDir: join(base, 'data'), workspace, project, base };
}

/**
 * Proves every service process of the run gone: each pid a `service.ready` event named (ESRCH, polled), and
 * no process carrying the project's marker.
 */
export async function assertNothingLeft(project: string, events: readonly RunEvent[]): Promise<void> {
  const pids = ofType(events, 'service.ready').flatMap((e) => (typeof e.pid === 'number' ? [e.pid] : []));
  for (const pid of pids) await assertGone(pid);
  const deadline = Date.now() + 5000;
  while (markedProcesses(project).length > 0) {
    if (Date.now() > deadline) assert.fail(`processes of project ${project} still alive: ${markedProcesses(project)}`);
    await sleep(25);
  }
}

/** The events of one type. */
export function ofType<T extends RunEventType>(events: readonly RunEvent[], type: T): RunEventOf<T>[] {
  return events.filter((e): e is RunEventOf<T> => e.type === type);
}
