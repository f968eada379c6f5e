/**
 * Helpers of the end-to-end tests: the built `scienceevolve` bin and the MCP Inspector CLI as real child
 * processes, a lab project per test, and proofs that nothing a test started is left.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseMarker } from '@scienceevolve/supervisor/protocol';
import { scanMarkedProcesses } from '@scienceevolve/supervisor/procfs';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { loadWorkflow } from '../../packages/sdk/src/store/workflowLoad.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BIN = join(ROOT, 'packages/cli/bin/scienceevolve.js');
/**
 * The MCP Inspector's launcher (`mcp-inspector`); `--cli` runs its CLI client. A test-only install of its own
 * (`npm ci --prefix test/inspector`): it wants Node ≥ 22.19 by its engines field, its `--cli` runs on Node 20.
 */
export const INSPECTOR = join(
  ROOT,
  'test/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);
export const LAB_SERVICE = join(ROOT, 'test/fixtures/e2e/labService.cjs');

/** A directory removed after the test. */
export function tempDir(t: TestContext, prefix = 'se-e2e-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

/** True while `pid` names a live process (a zombie counts as gone: it holds nothing). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Polls until `pid` is gone (to `timeoutMs`, default 10 s), then asserts `kill(pid, 0)` throws ESRCH. */
export async function assertGone(pid: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) assert.fail(`process ${pid} is still alive after ${timeoutMs} ms`);
    await sleep(20);
  }
  // A zombie is reaped by its parent soon; kill(0) only throws ESRCH once it is.
  while (Date.now() <= deadline) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ESRCH');
      return;
    }
    await sleep(20);
  }
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
}

/** Live processes (other than this one) whose command line mentions `text`. */
export function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text) && isAlive(pid)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Live processes carrying a marker of project `projectId`. */
export function markedProcesses(projectId: string): number[] {
  return scanMarkedProcesses((m) => parseMarker(m)?.projectId === projectId).map((p) => p.pid);
}

/** Polls (to `timeoutMs`, default 10 s) until no process mentions `dir` nor carries a marker of `projectId`. */
export async function assertNothingLeft(
  options: { dir?: string; projectId?: string; marker?: string },
  timeoutMs = 10_000,
) {
  const left = () => [
    ...(options.dir === undefined ? [] : processesMentioning(options.dir)),
    ...(options.projectId === undefined ? [] : markedProcesses(options.projectId)),
    ...(options.marker === undefined ? [] : scanMarkedProcesses((m) => m === options.marker).map((p) => p.pid)),
  ];
  const deadline = Date.now() + timeoutMs;
  let pids = left();
  while (pids.length > 0 && Date.now() < deadline) {
    await sleep(25);
    pids = left();
  }
  assert.deepEqual(pids, [], `processes left behind: ${pids.join(' ')}`);
}

/** SIGKILLs (by pid) whatever still mentions `dir` or carries a marker of `projectId`: a failing test's safety net. */
export function killLeftovers(options: { dir?: string; projectId?: string }): number {
  const pids = [
    ...(options.dir === undefined ? [] : processesMentioning(options.dir)),
    ...(options.projectId === undefined ? [] : markedProcesses(options.projectId)),
  ];
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return pids.length;
}

/** A lab project: the e2e workflow (with `labService.cjs` as its service) loaded into a fresh data dir. */
export interface Lab {
  dir: string;
  dataDir: string;
  workspace: string;
  project: string;
  workflowPath: string;
}

/** The e2e workflow document with the lab service's source put in. */
export function labWorkflow(): Record<string, unknown> {
  const workflow = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/e2e/workflow.json'), 'utf8'));
  workflow.mcpDefinitions.lab.files['server.cjs'] = readFileSync(LAB_SERVICE, 'utf8');
  return workflow;
}

/**
 * Creates and loads a lab project. Registered at once: the safety net (SIGKILL to anything left), then
 * removal of the directory. The test itself proves nothing was left ({@link assertNothingLeft}).
 */
export async function labProject(t: TestContext): Promise<Lab> {
  const dir = mkdtempSync(join(tmpdir(), 'se-e2e-'));
  const project = `e2e-${randomBytes(4).toString('hex')}`;
  t.after(async () => {
    const killed = killLeftovers({ dir, projectId: project });
    const deadline = Date.now() + 5000;
    while (processesMentioning(dir).length + markedProcesses(project).length > 0 && Date.now() < deadline)
      await sleep(25);
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    if (killed > 0) {
      // A host killed here leaves its supervisor to collect; it logs into the data dir once more.
      await sleep(1500);
      rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    }
  });
  const dataDir = join(dir, 'data');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace, { recursive: true });
  const workflowPath = join(dir, 'workflow.json');
  writeFileSync(workflowPath, JSON.stringify(labWorkflow(), null, 2));
  await loadWorkflow({ dataDir, project, workflow: workflowPath });
  return { dir, dataDir, workspace, project, workflowPath };
}

/** `scienceevolve services serve` of the lab's `main` agent (stdio face unless `extra` says `--http`), 300 ms grace. */
export function labServeArgs(lab: Lab, extra: string[] = []): string[] {
  return [
    BIN,
    'services',
    'serve',
    '--data-dir',
    lab.dataDir,
    '--workspace',
    lab.workspace,
    '--project',
    lab.project,
    '--agent',
    'main',
    '--grace-ms',
    '300',
    ...extra,
  ];
}

/** A child process with its output collected. */
export interface Spawned {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code and signal once the child exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first JSON document printed on stdout (to `timeoutMs`, default 30 s). */
  json<T = Record<string, unknown>>(timeoutMs?: number): Promise<T>;
}

/** Starts `node ...args`; its SIGKILL (if still alive) and proof of exit are registered at once. */
export function spawnNode(
  t: TestContext,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Spawned {
  assert.ok(existsSync(join(ROOT, 'packages/cli/dist/main.js')), 'the CLI is not built: run `npx tsc --build`');
  const child = spawn(process.execPath, args, {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  assert.ok(child.pid !== undefined, `could not start node ${args.join(' ')}`);
  const pid = child.pid;
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await assertGone(pid);
  });
  return {
    child,
    pid,
    stdout: () => out,
    stderr: () => err,
    exited,
    async json<T>(timeoutMs = 30_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          return JSON.parse(out) as T;
        } catch {
          // not complete yet
        }
        if (child.exitCode !== null || child.signalCode !== null) {
          assert.fail(`exited (${child.exitCode ?? child.signalCode}) without a JSON document; stderr:\n${err}`);
        }
        if (Date.now() > deadline)
          assert.fail(`no JSON document within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`);
        await sleep(20);
      }
    },
  };
}

/** At most two inspector runs at a time: each may start a CLI, a supervisor and a service. */
const slots = (() => {
  let free = 2;
  const waiting: (() => void)[] = [];
  return {
    acquire(): Promise<void> {
      if (free > 0) {
        free -= 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
      });
    },
    release: () => {
      const next = waiting.shift();
      if (next !== undefined) next();
      else free += 1;
    },
  };
})();

/**
 * Runs the MCP Inspector's CLI (`mcp-inspector --cli …`) and resolves with the JSON it printed. Asserts
 * exit 0 and that the inspector is gone. 60 s timeout: it may start `services serve`, which starts a
 * supervisor and a service, on a loaded 2-core machine.
 */
export async function inspector(t: TestContext, args: string[], dir: string): Promise<Record<string, unknown>> {
  // scripts/test.mjs checks this for the suites it knows; a new suite that drives the inspector fails here.
  assert.ok(existsSync(INSPECTOR), "the MCP Inspector's CLI is not installed: run `npm ci --prefix test/inspector`");
  // HOME in the test's directory: the inspector keeps state under ~/.mcp-inspector.
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir };
  // Its catalog would otherwise be written to ~/.mcp-inspector; with --config (read-only) there is none.
  if (args.includes('--config')) delete env.MCP_CATALOG_PATH;
  else env.MCP_CATALOG_PATH = join(dir, 'inspector-catalog.json');
  await slots.acquire();
  // Its default connect timeout (15 s) is too short for `services serve` starting on a loaded machine.
  const run = spawnNode(t, [INSPECTOR, '--cli', '--connect-timeout', '60000', ...args], { env });
  void run.exited.then(() => slots.release());
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 60_000);
  const { code, signal } = await run.exited;
  clearTimeout(timer);
  await assertGone(run.pid);
  assert.equal(
    code,
    0,
    `inspector ${args.join(' ')} exited ${code ?? signal}\nstdout:\n${run.stdout()}\nstderr:\n${run.stderr()}`,
  );
  return JSON.parse(run.stdout()) as Record<string, unknown>;
}

/** The text of the first text content item of a tool result or a prompt message. */
export function firstText(result: Record<string, unknown>): string | undefined {
  const content = (result.content ?? []) as { type: string; text?: string }[];
  return content.find((c) => c.type === 'text')?.text;
}

/** Every JSON line of a run's events.jsonl (a line cut by SIGKILL is skipped; no file yet, none). */
export function runEvents(path: string): RunEvent[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as RunEvent];
      } catch {
        return [];
      }
    });
}

/** Polls `check` every 20 ms until it returns a value (to `timeoutMs`, default 30 s). */
export async function until<T>(what: string, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}
