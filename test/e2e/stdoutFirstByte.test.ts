/**
 * Stdout is protocol from the first byte: `services serve` (stdio) and `bridge http-to-stdio` install
 * the stdout guard from the bin before the CLI and the SDK load. Proved with a module that writes to
 * stdout (and `console.log`s) while it loads — the SDK's own main entry, made noisy by a loader hook —
 * whose output must reach stderr while stdout carries only JSON-RPC.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertNothingLeft, labProject, labServeArgs, ROOT, spawnNode, type Spawned } from './helpers.js';

const NOISY = join(ROOT, 'test/fixtures/stdout/noisyLoad.mjs');

async function untilLine(proc: Spawned, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!proc.stdout().includes('\n')) {
    if (proc.child.exitCode !== null) assert.fail(`exited early; stderr:\n${proc.stderr()}`);
    if (Date.now() > deadline) assert.fail(`no line on stdout; stderr:\n${proc.stderr()}`);
    await sleep(20);
  }
}

function assertProtocolOnly(stdout: string): void {
  const lines = stdout.split('\n').filter((line) => line !== '');
  assert.ok(lines.length > 0);
  for (const line of lines) {
    const message = JSON.parse(line) as { jsonrpc?: unknown };
    assert.equal(message.jsonrpc, '2.0', `not JSON-RPC on stdout: ${line}`);
  }
}

const initialize = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'first-byte', version: '1' } },
})}\n`;

test('services serve (stdio): what a module prints while loading goes to stderr, stdout is protocol only', async (t: TestContext) => {
  const lab = await labProject(t);
  const serve = spawnNode(t, ['--import', NOISY, ...labServeArgs(lab)]);
  serve.child.stdin?.write(initialize);
  await untilLine(serve);
  serve.child.stdin?.end();
  assert.deepEqual(await serve.exited, { code: 0, signal: null });
  assertProtocolOnly(serve.stdout());
  assert.match(JSON.parse(serve.stdout().split('\n')[0]!).result.serverInfo.name, /scienceevolve/);
  assert.match(serve.stderr(), /LOAD-TIME NOISE/, 'the hook did run: its output went to stderr');
  assert.match(serve.stderr(), /LOAD-TIME LOG/);
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});

test('a command whose stdout is for people (validate) is not guarded: the same noise reaches stdout', async (t) => {
  // The guard is for stdio servers only: a command whose stdout is for people keeps it.
  const bin = join(ROOT, 'packages/cli/bin/scienceevolve.js');
  const minimal = join(ROOT, 'test/fixtures/workflows/minimal.json');
  const run = spawnNode(t, ['--import', NOISY, bin, 'validate', minimal]);
  assert.deepEqual(await run.exited, { code: 0, signal: null });
  assert.match(run.stdout(), /^LOAD-TIME NOISE\n/);
  assert.match(run.stdout(), /is a valid workflow/);
  // --help is made from the CLI's option table alone: it loads no SDK entry, so nothing noisy at all.
  const help = spawnNode(t, ['--import', NOISY, bin, '--help']);
  assert.deepEqual(await help.exited, { code: 0, signal: null });
  assert.match(help.stdout(), /^scienceevolve — /);
});

test('bridge http-to-stdio is guarded too: nothing but protocol on stdout, even when it fails', async (t) => {
  const bridge = spawnNode(t, [
    '--import',
    NOISY,
    join(ROOT, 'packages/cli/bin/scienceevolve.js'),
    'bridge',
    'http-to-stdio',
    '--url',
    'http://127.0.0.1:1/mcp',
    '--connect-timeout-ms',
    '3000',
  ]);
  bridge.child.stdin?.end();
  assert.deepEqual(await bridge.exited, { code: 1, signal: null });
  assert.equal(bridge.stdout(), '');
  assert.match(bridge.stderr(), /LOAD-TIME NOISE/);
  assert.match(bridge.stderr(), /remote_unreachable|could not connect/);
});
