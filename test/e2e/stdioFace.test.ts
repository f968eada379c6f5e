/**
 * The stdio face end to end, driven by the MCP Inspector's CLI (2.12, `--cli`, which runs on Node 20):
 * the inspector launches `scienceevolve services serve` as a stdio MCP server, as an external harness
 * would, and lists, calls, reads and gets through it. Also the Claude Code configuration that
 * `harness-config` writes, used as is by the inspector's `--config`.
 *
 * Slow (about 10–20 s on 2 cores): every inspector call starts the CLI, a supervisor and the service.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertNothingLeft, labServeArgs, BIN, firstText, inspector, labProject, spawnNode } from './helpers.js';

test('the inspector lists, calls, reads and gets through the stdio face', async (t) => {
  const lab = await labProject(t);
  const serve = ['--', process.execPath, ...labServeArgs(lab)];
  const [list, call, read, prompt] = await Promise.all([
    inspector(t, ['--method', 'tools/list', ...serve], lab.dir),
    inspector(t, ['--method', 'tools/call', '--tool-name', 'lab__echo', '--tool-arg', 'text=hello', ...serve], lab.dir),
    inspector(t, ['--method', 'resources/read', '--uri', 'lab://notes', ...serve], lab.dir),
    inspector(
      t,
      ['--method', 'prompts/get', '--prompt-name', 'lab__greet', '--prompt-args', 'who=Ada', ...serve],
      lab.dir,
    ),
  ]);

  const tools = (list.tools as { name: string; annotations?: { readOnlyHint?: boolean } }[]).map((tool) => tool.name);
  assert.deepEqual(tools.sort(), ['lab__echo', 'lab__whoami', 'scienceevolve__get_workflow']);
  assert.equal(firstText(call), 'echo: hello');
  assert.deepEqual(read.contents, [{ uri: 'lab://notes', mimeType: 'text/plain', text: 'lab notes: all calibrated' }]);
  const messages = prompt.messages as { role: string; content: { type: string; text: string } }[];
  assert.equal(messages[0]?.content.text, 'Hello Ada, welcome to the lab');

  // Each inspector closed its server's stdin: `services serve` collected the service and exited.
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});

test("harness-config's Claude Code configuration launches the stdio face as written", async (t) => {
  const lab = await labProject(t);
  const config = spawnNode(t, [
    BIN,
    'harness-config',
    '--format',
    'claude',
    '--name',
    'lab-bridge',
    '--data-dir',
    lab.dataDir,
    '--workspace',
    lab.workspace,
    '--project',
    lab.project,
    '--agent',
    'main',
  ]);
  const written = await config.json<{
    mcpServers: Record<string, { type: string; command: string; args: string[] }>;
  }>();
  assert.equal((await config.exited).code, 0);
  const server = written.mcpServers['lab-bridge'];
  assert.ok(server !== undefined);
  assert.equal(server.type, 'stdio');
  assert.equal(server.command, process.execPath);
  assert.deepEqual(server.args.slice(0, 3), [BIN, 'services', 'serve']);

  const path = join(lab.dir, 'claude-mcp.json');
  writeFileSync(path, JSON.stringify(written));
  const result = await inspector(
    t,
    ['--config', path, '--server', 'lab-bridge', '--method', 'tools/call', '--tool-name', 'lab__whoami'],
    lab.dir,
  );
  const who = JSON.parse(firstText(result) ?? '{}') as { pid: number; marker: string };
  assert.equal(typeof who.pid, 'number');
  assert.match(who.marker, new RegExp(`^se1:${lab.project}:`));
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});
