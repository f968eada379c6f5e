// A Python service run by the interpreter of a venv that lives under the system temp directory, which the
// sandbox hides: the venv (and the interpreter it links to) is bound read-only at its place, so the service
// starts sandboxed instead of failing with `service_exited`. The service is a small MCP server on the
// standard library (the `mcp` package is not installable offline here); the point is where it runs from.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { sandboxAvailability } from '../../packages/sdk/src/processes/sandbox.ts';
import { assertNoMarkedProcess, killMarked, tempDir } from '../sdk/invocation/helpers.ts';

const BIN = new URL('../../packages/cli/bin/scienceevolve.js', import.meta.url).pathname;

/** Newline-delimited JSON-RPC: initialize, tools/list (one tool), tools/call; notifications are ignored. */
const SERVER_PY = `import json, sys
def send(obj):
    sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, rid = msg.get("method"), msg["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {"protocolVersion": msg["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "venv-py", "version": "1.0.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{"name": "where",
              "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": sys.prefix}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "method not found"}})
`;

function python(): string | undefined {
  const found = spawnSync('python3', ['-c', 'import sys, venv; print(sys.executable)'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

test('a Python service from a venv under the temp directory starts inside the sandbox', {
  timeout: 120_000,
}, async (t) => {
  const interpreter = python();
  if (interpreter === undefined) {
    t.skip('python3 with the venv module is not installed');
    return;
  }
  const sandbox = await sandboxAvailability(process.env);
  if (!sandbox.ok) {
    t.skip(`bubblewrap does not work here: ${sandbox.detail}`);
    return;
  }
  const dir = tempDir(t, 'se-venv-');
  const venv = join(dir, 'venv');
  execFileSync(interpreter, ['-m', 'venv', '--without-pip', venv]);
  const project = `venv-${process.pid}`;
  t.after(() => killMarked(project));
  const workflow = join(dir, 'workflow.json');
  writeFileSync(
    workflow,
    JSON.stringify({
      orchestration: { sandbox: 'required' },
      agents: { main: { mcpServers: [{ name: 'py', project: 'py' }] } },
      mcpDefinitions: {
        py: { command: join(venv, 'bin', 'python'), entrypoint: 'server.py', files: { 'server.py': SERVER_PY } },
      },
    }),
  );
  mkdirSync(join(dir, 'ws'));
  const probe = spawnSync(
    process.execPath,
    [
      BIN,
      'services',
      'probe',
      '--data-dir',
      join(dir, 'data'),
      '--project',
      project,
      '--workflow',
      workflow,
      '--workspace',
      join(dir, 'ws'),
      '--agent',
      'main',
      '--json',
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(probe.status, 0, `${probe.stdout}\n${probe.stderr}`);
  const report = JSON.parse(probe.stdout) as { services: { name: string; state: string; tools: string[] }[] };
  assert.deepEqual(
    report.services.map((s) => [s.name, s.state, s.tools]),
    [['py', 'ready', ['where']]],
  );
  await assertNoMarkedProcess(project);
});
