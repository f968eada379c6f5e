/**
 * A reader that goes away before a command's output ends (`scienceevolve schema | head -c 100`) ends the
 * output quietly: no unhandled EPIPE, no stack trace, the command's own exit code. The read end of the
 * pipe is closed right after the spawn, long before Node has started in the child, so its first write
 * meets no reader. Light commands (written by descriptor, then through process.stdout) and the others
 * (through process.stdout) alike.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { assertGone } from '../fixtures/store/children.js';
import { BIN, ROOT } from './runCli.js';

for (const args of [['schema'], ['validate', '--help'], ['--help'], ['services', '--help']]) {
  test(`\`${args.join(' ')}\` whose reader is gone ends quietly with exit 0`, async (t) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => child.kill('SIGKILL'));
    child.stdout?.destroy();
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (c, s) => resolve([c, s])),
    );
    assert.ok(child.pid !== undefined);
    await assertGone(child.pid);
    assert.equal(stderr, '', 'nothing on stderr: no EPIPE, no stack');
    assert.deepEqual([code, signal], [0, null]);
  });
}
