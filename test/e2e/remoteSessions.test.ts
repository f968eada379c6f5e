/**
 * Remote sessions end with their clients, proved with supergateway `--stateful` (which starts one stdio
 * server process per session and keeps it until the session ends): after several `services probe` runs
 * against it as a remote service, and a `bridge http-to-stdio` that came and went, no server process of
 * theirs is left — each close sent the session's DELETE.
 *
 * Slow (a few seconds): the gateway (CLI, supervisor, supergateway) and one CLI per probe.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseMarker } from '@scienceevolve/supervisor/protocol';
import { scanMarkedProcesses } from '@scienceevolve/supervisor/procfs';
import { assertGone, assertNothingLeft, BIN, LAB_SERVICE, processesMentioning, spawnNode, tempDir } from './helpers.js';

const PROBES = 4;

/** Polls (to `timeoutMs`) until `count()` is `want`; asserts it then. */
async function settlesAt(count: () => number, want: number, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let now = count();
  while (now !== want && Date.now() < deadline) {
    await sleep(25);
    now = count();
  }
  assert.equal(now, want, what);
}

test(`${PROBES} probes and a bridge against supergateway --stateful leave no server process behind`, async (t: TestContext) => {
  const dir = tempDir(t, 'se-remote-');
  // A tag on the server's command line tells this test's server processes from any other test's.
  const tag = `--tag=${randomUUID()}`;
  // The gateway's and supergateway's own command lines hold the launch command, tag included: a server
  // process is one whose first argument is the lab service (or the shell that runs it).
  const servers = () =>
    processesMentioning(tag).filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv[1] === LAB_SERVICE || /(^|\/)sh$/.test(argv[0] ?? '');
      } catch {
        return false;
      }
    }).length;
  t.after(() => {
    for (const pid of processesMentioning(tag)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  const gateway = spawnNode(t, [
    BIN,
    'gateway',
    '--stdio',
    `${JSON.stringify(process.execPath)} ${JSON.stringify(LAB_SERVICE)} ${tag}`,
    '--port',
    '0',
    '--log-dir',
    dir,
    '--grace-ms',
    '300',
    '--json',
  ]);
  const doc = await gateway.json<{ url: string; pid: number; pgid: number }>(60_000);
  t.after(() => {
    try {
      process.kill(-doc.pgid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  // The gateway's own check ended its session.
  await settlesAt(servers, 0, 'the gateway check left a server process');

  const workflow = join(dir, 'workflow.json');
  writeFileSync(
    workflow,
    JSON.stringify({ agents: { main: { instructions: 'Use the lab.', mcpServers: [{ name: 'gw', url: doc.url }] } } }),
  );
  for (let i = 1; i <= PROBES; i++) {
    const probe = spawnNode(t, [
      BIN,
      'services',
      'probe',
      '--data-dir',
      join(dir, 'data'),
      '--workflow',
      workflow,
      '--workspace',
      dir,
      '--agent',
      'main',
      '--json',
    ]);
    const code = (await probe.exited).code;
    assert.equal(code, 0, `probe ${i}: ${probe.stderr()}`);
    const report = JSON.parse(probe.stdout()) as { services: { name: string; tools?: unknown }[] };
    assert.equal(report.services[0]?.name, 'gw');
    await assertGone(probe.pid);
    await settlesAt(servers, 0, `probe ${i} left its session's server process at supergateway`);
  }

  // bridge http-to-stdio: one session while it runs, none once its stdin closed.
  const bridge = spawnNode(t, [BIN, 'bridge', 'http-to-stdio', '--url', doc.url]);
  const holding = Date.now() + 30_000;
  while (servers() === 0 && Date.now() < holding) await sleep(25);
  assert.ok(servers() > 0, 'the bridge holds a session, with its server process');
  bridge.child.stdin?.end();
  assert.deepEqual(await bridge.exited, { code: 0, signal: null });
  await settlesAt(servers, 0, 'the bridge left its session behind');

  gateway.child.kill('SIGTERM');
  assert.deepEqual(await gateway.exited, { code: 0, signal: null });
  await assertGone(doc.pid);
  await assertNothingLeft({ dir: tag });
  assert.deepEqual(
    scanMarkedProcesses((m) => parseMarker(m)?.hostPid === gateway.pid).map((p) => p.pid),
    [],
  );
});
