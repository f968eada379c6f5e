/**
 * Helpers of the services tests: a fresh directory, marker and environment per test, starting a fixture
 * with its cleanup registered at once, and proving processes gone.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { formatMarker } from '@scienceevolve/supervisor/protocol';
import { processStartTime, scanMarkedProcesses } from '@scienceevolve/supervisor/procfs';
import type { SdkError } from '../../../packages/sdk/src/errors.js';
import { buildServiceEnv } from '../../../packages/sdk/src/processes/serviceEnv.js';
import type { ServiceEvent } from '../../../packages/sdk/src/sessions/serviceEvents.js';
import {
  type StartServiceOptions,
  type StdioServiceSession,
  type StdioServiceSpec,
  startStdioService,
} from '../../../packages/sdk/src/sessions/stdioService.js';

/** The absolute path of a fixture service. */
export function fixture(name: string): string {
  return new URL(`../../fixtures/services/${name}`, import.meta.url).pathname;
}

/** A directory removed after the test. */
export function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'se-services-'));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

/**
 * A marker unique to this test. Its safety net is registered at once: whatever still carries it when the
 * test ends is SIGKILLed, so a failing test leaks nothing.
 */
export function testMarker(t: TestContext): string {
  const marker = formatMarker({
    projectId: 'services-test',
    hostPid: process.pid,
    hostStart: processStartTime(process.pid) ?? '0',
    invocationId: randomUUID(),
  });
  t.after(() => {
    for (const p of scanMarkedProcesses((m) => m === marker)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  return marker;
}

/** What a test gives to build a spec. */
export interface FixtureOptions {
  args?: string[];
  envFrom?: Record<string, string>;
  hostEnv?: Record<string, string | undefined>;
  marker?: string;
  command?: string;
  graceMs?: number;
  serviceName?: string;
}

/** A spec for `fixtureName` in a fresh workspace, with the SDK's environment. */
export function fixtureSpec(t: TestContext, fixtureName: string, options: FixtureOptions = {}): StdioServiceSpec {
  const dir = tempDir(t);
  const marker = options.marker ?? testMarker(t);
  const workspace = join(dir, 'workspace');
  const sourceDir = new URL('../../fixtures/services/', import.meta.url).pathname;
  const serviceName = options.serviceName ?? fixtureName.replace(/\.cjs$/, '');
  mkdirSync(workspace, { recursive: true });
  const env = buildServiceEnv({
    serviceName,
    hostEnv: options.hostEnv ?? process.env,
    envFrom: options.envFrom ?? {},
    workspace,
    sourceDir,
    projectRoot: join(dir, 'project'),
    marker,
  });
  return {
    serviceName,
    definitionName: `${serviceName}-def`,
    digest: 'f'.repeat(64),
    command: options.command ?? 'node',
    entrypointPath: fixture(fixtureName),
    args: options.args ?? [],
    cwd: workspace,
    env,
    stderrLogPath: join(dir, 'mcp', `${serviceName}.stderr.log`),
    marker,
    graceMs: options.graceMs ?? 300,
  };
}

/** Starts a spec with a short budget, its close registered at once; the events land in `events`. */
export async function startService(
  t: TestContext,
  spec: StdioServiceSpec,
  options: StartServiceOptions & { budgetMs?: number } = {},
): Promise<{ session: StdioServiceSession; events: ServiceEvent[] }> {
  const events: ServiceEvent[] = [];
  const { budgetMs, ...rest } = options;
  const session = await startStdioService(spec, {
    deadline: Date.now() + (budgetMs ?? 10_000),
    onEvent: (e) => events.push(e),
    ...rest,
  });
  t.after(() => session.close());
  return { session, events };
}

/** Starts a spec that must fail; returns the SdkError and the events. */
export async function startMustFail(
  spec: StdioServiceSpec,
  options: StartServiceOptions & { budgetMs?: number } = {},
): Promise<{ error: SdkError; events: ServiceEvent[] }> {
  const events: ServiceEvent[] = [];
  const { budgetMs, ...rest } = options;
  try {
    const session = await startStdioService(spec, {
      deadline: Date.now() + (budgetMs ?? 10_000),
      onEvent: (e) => events.push(e),
      ...rest,
    });
    await session.close();
  } catch (error) {
    return { error: error as SdkError, events };
  }
  assert.fail(`${spec.serviceName} started but was expected to fail`);
}

/**
 * True when `pid` is gone: `process.kill(pid, 0)` throws ESRCH, or the process is a zombie. Zombies count
 * as gone because an orphan that died is only reaped by init, and some container inits never reap; a
 * zombie holds no memory, files or pipes.
 */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Polls until every pid is gone, failing after `deadlineMs` (default 3,000 ms). */
export async function assertAllGone(pids: number[], deadlineMs = 3000): Promise<void> {
  const end = Date.now() + deadlineMs;
  let alive = pids.filter((p) => !isGone(p));
  while (alive.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    alive = alive.filter((p) => !isGone(p));
  }
  assert.deepEqual(alive, [], `processes still alive after ${deadlineMs} ms: ${alive.join(', ')}`);
}

/** The event types in order, without state transitions. */
export function eventTypes(events: ServiceEvent[]): string[] {
  return events.filter((e) => e.type !== 'service.state').map((e) => e.type);
}

/** The states the events went through. */
export function states(events: ServiceEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'service.state' ? [e.to] : []));
}

/** Polls `read` until it returns something truthy, failing after `deadlineMs`. */
export async function waitFor<T>(read: () => T | undefined, deadlineMs = 3000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = read();
    if (value) return value;
    if (Date.now() > end) assert.fail(`condition not met within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
