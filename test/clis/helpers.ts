/**
 * One run per preset: Main is the real agent CLI (installed in test/clis/node_modules), pointed at a local
 * model server that speaks the CLI's own wire protocol, with a project service `adds`. The model asks for
 * `add {a: 2, b: 40}` and then answers with the result it received; the test checks that the call reached
 * the service (the run's journal), that the model saw the tool and its result (the server's record), that
 * the answer reached the run, and that nothing is left running.
 *
 * scripts/test-clis.mjs runs these inside a loopback-only network namespace when it can, so a CLI that
 * reached the internet would fail here.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startRun } from '../../packages/sdk/src/engine/engine.js';
import type { HarnessPreset } from '../../packages/sdk/src/workflow/workflowSchema.js';
import { type ModelRequest, scriptedPolicy, startModelServer } from '../fixtures/modelServer/index.js';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';
import { assertGone } from '../fixtures/store/children.js';

/** The CLIs' bin directory (npm install --prefix test/clis). */
export const CLI_BIN = fileURLToPath(new URL('./node_modules/.bin', import.meta.url));

/** The pids of the processes whose working directory is `dir` or below it, this process excepted (Linux /proc). */
export function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      continue; // gone meanwhile
    }
    if (cwd === dir || cwd.startsWith(dir + sep)) found.push(pid);
  }
  return found;
}

/**
 * Watches, while a run goes, the processes working in `dir` (the run's workspace: the CLI, what it
 * starts, the relay and the services all run there), sampling every `everyMs` ms (default 100). Unlike a
 * marker, which `env -i` drops, or a group, which `setsid` leaves, a working directory is inherited by
 * every child. `stop()` ends the watch and returns every pid seen.
 */
export function watchProcessesIn(dir: string, everyMs = 100): { stop(): number[] } {
  const seen = new Set<number>();
  const sample = () => {
    for (const pid of processesIn(dir)) seen.add(pid);
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return [...seen];
    },
  };
}

/**
 * Proves every process seen working in the workspace gone (ESRCH, polled) and none working there now.
 * `seen` must not be empty: the CLI works in the workspace, so an empty watch means the watch failed.
 */
export async function assertWorkspaceEmpty(workspace: string, seen: number[]): Promise<void> {
  assert.ok(seen.length > 0, `no process was seen working in ${workspace}: the watch saw nothing`);
  for (const pid of seen) await assertGone(pid);
  assert.deepEqual(processesIn(workspace), [], `processes still working in ${workspace}`);
}

/** What differs between presets. */
export interface PresetCase {
  preset: HarnessPreset;
  /** Appended to the model server's URL: each CLI has its own idea of what a base URL includes. */
  baseUrlSuffix: string;
  /** Milliseconds the CLI may run. */
  timeoutMs?: number;
  /**
   * Files written into the workspace before the run, as a service of an earlier invocation could have
   * (paths relative to the workspace; `{mark <label>}` in a text becomes a command that appends `<label>`
   * to the marker file). After the run the marker file must not exist: none of them took effect.
   */
  planted?: Record<string, string>;
  /** The run must fail before the CLI starts, its invocation with this code (no model request made). */
  refusedWith?: string;
}

/**
 * The program the planted settings run: appends its first argument to the file named by its second, then
 * exits (as an MCP server it is a failed one; as a hook, a plugin or an extension it has done its harm).
 */
const MARKS = `require('node:fs').appendFileSync(process.argv[3], process.argv[2] + '\\n');\n`;

/**
 * Writes `planted` into `workspace`, with `{mark <label>}` replaced by the JSON-string-safe command
 * `<node> <workspace>/.planted/mark.cjs <label> <marker>`, and returns the marker file's path.
 */
function plant(workspace: string, base: string, planted: Record<string, string>): string {
  const marker = join(base, 'planted-ran.txt');
  const script = join(workspace, '.planted', 'mark.cjs');
  mkdirSync(dirname(script), { recursive: true });
  writeFileSync(script, MARKS);
  for (const [path, text] of Object.entries(planted)) {
    const target = join(workspace, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(
      target,
      text
        .replace(/\{mark ([a-z-]+)\}/g, (_, label: string) => `${process.execPath} ${script} ${label} ${marker}`)
        .replace(/\{node\}/g, process.execPath)
        .replace(/\{script\}/g, script)
        .replace(/\{marker\}/g, marker)
        .replace(/\{workspace\}/g, workspace),
    );
  }
  return marker;
}

/** Runs the preset's CLI as Main and checks everything the test promises. */
export async function runPreset(t: TestContext, c: PresetCase): Promise<void> {
  const box = await sandbox(t);
  const server = await startModelServer({
    respond: scriptedPolicy([{ call: 'add', arguments: { a: 2, b: 40 } }], {
      // The model reads the sum from what the tool answered (each CLI wraps a result its own way).
      final: (results) => {
        const sum = /= (\d+)/.exec(results.join('\n'))?.[1];
        return sum === undefined ? `No sum in: ${results.join(' | ')}` : `The sum is ${sum}.`;
      },
    }),
    requireApiKey: 'test-key-123',
  });
  t.after(() => server.close());
  const workflow = {
    orchestration: { invocationRetries: 0 },
    agents: {
      main: {
        harness: {
          type: 'command',
          preset: c.preset,
          model: 'test-model',
          baseUrl: `${server.url}${c.baseUrlSuffix}`,
          apiKeyEnv: 'SE_TEST_MODEL_KEY',
          timeoutMs: c.timeoutMs ?? 240_000,
        },
        instructions: 'You are a careful assistant. Use the tools you are given.',
        mcpServers: [{ name: 'adds', project: 'adds' }],
      },
    },
    mcpDefinitions: {
      adds: {
        entrypoint: 'server.cjs',
        files: { 'server.cjs': readFileSync(new URL('./addsInWords.cjs', import.meta.url), 'utf8') },
      },
    },
  };
  const marker = c.planted === undefined ? undefined : plant(box.workspace, box.base, c.planted);
  const watch = watchProcessesIn(box.workspace);
  t.after(() => watch.stop());
  const result = await startRun({
    ...box,
    workflow,
    requirement: 'Add 2 and 40 with the adds tool and tell me the sum.',
    hostEnv: {
      PATH: `${CLI_BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: process.env.HOME,
      USER: process.env.USER,
      SE_TEST_MODEL_KEY: 'test-key-123',
    },
    graceMs: 1000,
  }).result;

  const log = join(ofType(result.events, 'invocation.started')[0]?.runtimePath as string, 'cli', 'stderr.log');
  const context = () =>
    `status ${result.status}, error ${JSON.stringify(result.error)}; requests: ${JSON.stringify(
      server.requests.map((r) => ({ path: r.path, tools: r.tools.map((x) => x.name) })),
    )}; last messages: ${JSON.stringify(server.requests.at(-1)?.messages)}; calls: ${JSON.stringify(
      ofType(result.events, 'tool.called'),
    )}; output: ${JSON.stringify(result.output)}; rejected: ${JSON.stringify(server.rejected)}; log: ${log}`;
  // First, so that on a preset that trusts the workspace the failure names what ran.
  if (marker !== undefined) {
    const ran = existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n') : [];
    assert.deepEqual(ran, [], `settings planted in the workspace took effect: ${context()}`);
  }
  if (c.refusedWith !== undefined) {
    assert.equal(result.status, 'failed', context());
    const error = ofType(result.events, 'invocation.finished')[0]?.error as { code?: string } | undefined;
    assert.equal(error?.code, c.refusedWith, context());
    assert.deepEqual(server.requests, [], 'the CLI never reached the model');
    watch.stop();
    await assertNothingLeft(box.project, result.events);
    return;
  }
  assert.equal(result.status, 'succeeded', context());
  // The call reached the project service through the invocation's surface.
  const calls = ofType(result.events, 'tool.called');
  assert.deepEqual(
    calls.map((e) => [e.tool, e.ok, e.summary]),
    [['adds__add', true, '2 + 40 = 42']],
    context(),
  );
  // The model was offered the tool, and got its result back.
  const withTool = server.requests.filter((r: ModelRequest) => r.tools.some((x) => /adds__add$/.test(x.name)));
  assert.ok(withTool.length > 0, `the add tool was offered: ${context()}`);
  const results = server.requests.flatMap((r) => r.messages.flatMap((m) => m.toolResults ?? []));
  assert.ok(
    results.some((r) => r.text.includes('2 + 40 = 42')),
    `the tool result reached the model: ${context()}`,
  );
  assert.ok(
    server.requests.every((r) => r.apiKey === 'test-key-123'),
    'the key from apiKeyEnv was used',
  );
  // The answer reached the run.
  assert.match(result.output ?? '', /The sum is 42\./, context());
  await assertNothingLeft(box.project, result.events);
  await assertWorkspaceEmpty(box.workspace, watch.stop());
}
