/**
 * SIGTERM always ends the CLI (issue 27, item 2): a command told to stop that never returns exits once its
 * bound after the first signal has passed, and at once on a further signal (the queue worker's third).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type TestContext, test } from 'node:test';
import { assertGone } from '../fixtures/store/children.js';

const STUCK = fileURLToPath(new URL('../fixtures/cli/stuckAfterSignal.ts', import.meta.url));

/** Starts the stuck command; resolves once its handlers are installed. */
async function stuck(t: TestContext, args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', STUCK, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid!;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    await assertGone(pid);
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
      if (stdout.includes('waiting\n')) resolve();
    });
    child.once('exit', () => reject(new Error(`exited before waiting: ${stderr}`)));
  });
  /** Resolves once stdout holds `text`; fails after 10 s. */
  const printed = async (text: string) => {
    const deadline = Date.now() + 10_000;
    while (!stdout.includes(text)) {
      if (Date.now() > deadline) assert.fail(`never printed ${text}: ${stdout} ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, exited, printed, stdout: () => stdout, stderr: () => stderr };
}

// Each case: ~1 s to start tsx, then well under a second; 30 s on a loaded machine.
test('a command stuck after SIGTERM exits 143 once its bound has passed', { timeout: 30_000 }, async (t) => {
  const s = await stuck(t, ['300']);
  const sent = Date.now();
  s.child.kill('SIGTERM');
  const { code } = await s.exited;
  assert.equal(code, 143);
  assert.ok(Date.now() - sent >= 300, 'not before the bound');
  assert.match(s.stderr(), /still not stopped 300 ms after SIGTERM: exiting now/);
});

test('a second signal ends a stuck command at once', { timeout: 30_000 }, async (t) => {
  const s = await stuck(t, ['null']);
  s.child.kill('SIGTERM');
  // The first signal reached the wait: the command is now stuck with no time bound.
  await s.printed('got SIGTERM');
  s.child.kill('SIGINT');
  const { code } = await s.exited;
  assert.equal(code, 130);
  assert.match(s.stderr(), /received SIGINT again: exiting now/);
});

test('with exitOnSignal 3 (the worker), the second signal does not end it; the third does', {
  timeout: 30_000,
}, async (t) => {
  const s = await stuck(t, ['null', '3']);
  s.child.kill('SIGTERM');
  await s.printed('got SIGTERM');
  s.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(s.child.exitCode, null, 'still running after the second signal');
  s.child.kill('SIGTERM');
  const { code } = await s.exited;
  assert.equal(code, 143);
});
