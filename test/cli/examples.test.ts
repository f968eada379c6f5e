/**
 * Every workflow in examples/workflows/ validates through the CLI, and every service it defines starts
 * as the SDK would start it (files copied, NODE_PATH and SCIENCEEVOLVE_WORKSPACE set), answers initialize
 * and tools/list, works, and exits when its stdin ends.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, test } from 'node:test';
import { parseWorkflow } from '../../packages/sdk/src/index.js';
import type { McpDefinition } from '../../packages/sdk/src/index.js';
import { assertGone } from '../fixtures/store/children.js';
import { defer, tempDir } from '../fixtures/store/tempDir.js';
import { ROOT, runCli } from './runCli.js';

const EXAMPLES = join(ROOT, 'examples', 'workflows');
const files = (await readdir(EXAMPLES)).filter((f) => f.endsWith('.json')).sort();

/** A minimal JSON-RPC client over a child's stdio. */
class StdioRpc {
  private next = 1;
  private readonly pending = new Map<number, (message: Record<string, unknown>) => void>();
  constructor(private readonly child: import('node:child_process').ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as Record<string, unknown>;
      const resolve = this.pending.get(message.id as number);
      if (resolve !== undefined) {
        this.pending.delete(message.id as number);
        resolve(message);
      }
    });
  }
  request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.next++;
    const reply = new Promise<Record<string, unknown>>((resolve, reject) => {
      this.pending.set(id, resolve);
      setTimeout(() => reject(new Error(`no reply to ${method} within 30 s`)), 30_000).unref();
    });
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return reply;
  }
  notify(method: string): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
  }
  async call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
    const reply = await this.request('tools/call', { name, arguments: args });
    const result = reply.result as { content: Array<{ text: string }>; isError?: boolean };
    return { text: result.content.map((c) => c.text).join(''), isError: result.isError === true };
  }
}

/** What an example service must do beyond listing its tools, by definition name. */
const EXERCISES: Record<string, (rpc: StdioRpc, workspace: string) => Promise<void>> = {
  'workspace-tools': async (rpc, workspace) => {
    assert.deepEqual(await rpc.call('write_file', { path: 'notes/a.txt', content: 'hello' }), {
      text: 'wrote 5 bytes to notes/a.txt',
      isError: false,
    });
    assert.equal(await readFile(join(workspace, 'notes', 'a.txt'), 'utf8'), 'hello');
    assert.deepEqual(await rpc.call('read_file', { path: 'notes/a.txt' }), { text: 'hello', isError: false });
    assert.equal((await rpc.call('list_files', {})).text, 'notes/');
    const outside = await rpc.call('read_file', { path: '../outside.txt' });
    assert.equal(outside.isError, true);
    assert.match(outside.text, /outside the workspace/);
  },
  notes: async (rpc, workspace) => {
    assert.equal((await rpc.call('read_notes', {})).text, '(no notes yet)');
    await rpc.call('append_note', { line: 'first finding' });
    assert.equal((await rpc.call('read_notes', {})).text, 'first finding\n');
    assert.equal(await readFile(join(workspace, 'notes.md'), 'utf8'), 'first finding\n');
  },
};

/** Starts a definition as the SDK would: files copied, launched as `node <entrypoint> ...args`. */
async function startService(t: import('node:test').TestContext, definition: McpDefinition) {
  const dir = await tempDir(t);
  const source = join(dir, 'mcp');
  const workspace = join(dir, 'workspace');
  await mkdir(workspace);
  for (const [path, content] of Object.entries(definition.files)) {
    await mkdir(dirname(join(source, path)), { recursive: true });
    await writeFile(join(source, path), content);
  }
  const child = spawn(process.execPath, [join(source, definition.entrypoint), ...definition.args], {
    cwd: workspace,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_PATH: join(ROOT, 'node_modules'),
      SCIENCEEVOLVE_WORKSPACE: workspace,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  assert.ok(child.pid !== undefined);
  const pid = child.pid;
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  defer(t, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await assertGone(pid);
  });
  return { child, pid, workspace, exited, stderr: () => stderr };
}

describe('examples/workflows', { concurrency: 2 }, () => {
  test('there are examples', () => {
    assert.ok(files.includes('workspace-tools.json'));
    assert.ok(files.includes('alias-and-remote.json'));
  });

  for (const file of files) {
    test(`${file} validates through the CLI`, async () => {
      const r = await runCli(['validate', join(EXAMPLES, file), '--json']);
      assert.equal(r.code, 0, r.stdout);
      assert.deepEqual(r.json, { ok: true, errors: [] });
    });

    test(`${file}: every service starts, lists its tools, works, and exits when stdin ends`, async (t) => {
      const workflow = parseWorkflow(JSON.parse(await readFile(join(EXAMPLES, file), 'utf8')));
      for (const [name, definition] of Object.entries(workflow.mcpDefinitions)) {
        if (definition.command !== 'node' || Object.keys(definition.envFrom).length > 0) {
          t.diagnostic(`${name}: not started here (command ${definition.command}, envFrom needs host variables)`);
          continue;
        }
        const service = await startService(t, definition);
        const rpc = new StdioRpc(service.child);
        const init = await rpc.request('initialize', {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'examples-test', version: '1' },
        });
        assert.equal((init.result as { serverInfo: { name: string } }).serverInfo.name, name, service.stderr());
        rpc.notify('notifications/initialized');
        const tools = (await rpc.request('tools/list')).result as { tools: Array<{ name: string }> };
        assert.ok(tools.tools.length > 0, `${name} lists tools`);
        await EXERCISES[name]?.(rpc, service.workspace);
        service.child.stdin.end();
        assert.equal(await service.exited, 0, service.stderr());
        await assertGone(service.pid);
      }
    });
  }

  test('alias-and-remote.json has an alias (two names, one definition) and a remote entry', async () => {
    const workflow = parseWorkflow(JSON.parse(await readFile(join(EXAMPLES, 'alias-and-remote.json'), 'utf8')));
    const entries = Object.values(workflow.agents).flatMap((a) => a.mcpServers);
    const byProject = new Map<string, Set<string>>();
    for (const e of entries) {
      if (e.project !== undefined) byProject.set(e.project, (byProject.get(e.project) ?? new Set()).add(e.name));
    }
    assert.ok(
      [...byProject.values()].some((names) => names.size >= 2),
      'an alias',
    );
    assert.ok(
      entries.some((e) => e.url !== undefined),
      'a remote entry',
    );
  });
});
