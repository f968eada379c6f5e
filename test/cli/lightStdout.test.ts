/**
 * The light commands write stdout through its descriptor (`writeSync(1, …)`), not `process.stdout`
 * (docs/decisions/cli-light-bundle.md). When the descriptor refuses a write — here a non-blocking FIFO that
 * is full, so `writeSync` fails with EAGAIN, at once or after part of the text — the rest goes through
 * `process.stdout`, which waits for the reader: every byte arrives, in order, and the command exits 0.
 *
 * libuv makes a child's stdio descriptors blocking before it runs the program, so the child's side of the
 * FIFO is made non-blocking again after the spawn: a `net.Socket` on the test's descriptor of that side sets
 * O_NONBLOCK on the open file description both processes share (the child is still starting Node, tens of
 * milliseconds from its first write). The test reads through a description of its own.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, openSync, readSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertGone } from '../fixtures/store/children.js';
import { tempDir } from '../fixtures/store/tempDir.js';
import { BIN, ROOT } from './runCli.js';

/** Reads what is in the non-blocking `fd` now; an empty buffer when nothing is. */
function drain(fd: number): Buffer {
  const chunks: Buffer[] = [];
  const chunk = Buffer.alloc(65536);
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, chunk, 0, chunk.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
      throw error;
    }
    if (n === 0) break;
    chunks.push(Buffer.from(chunk.subarray(0, n)));
  }
  return Buffer.concat(chunks);
}

for (const [name, free] of [
  ['full: the first write is refused', 0],
  ['with 8 KiB free: the first write goes in part', 8192],
] as const) {
  test(`a light command whose stdout is a non-blocking pipe ${name}, still writes all of it, in order`, {
    timeout: 60_000,
  }, async (t) => {
    await fullPipeRun(t, free);
  });
}

async function fullPipeRun(t: import('node:test').TestContext, free: number): Promise<void> {
  const expected = spawnSync(process.execPath, [BIN, 'schema'], { cwd: ROOT, encoding: 'buffer' });
  assert.equal(expected.status, 0, expected.stderr.toString());
  assert.ok(expected.stdout.length > 10_000, 'the schema is long enough to need several writes');

  const dir = await tempDir(t);
  const fifo = join(dir, 'stdout.fifo');
  const made = spawnSync('mkfifo', ['-m', '0600', fifo]);
  assert.equal(made.status, 0, `mkfifo: ${made.stderr}`);
  // Two open file descriptions of the FIFO: the test reads from its own, always non-blocking; the child
  // writes to the other. O_NONBLOCK lives on a description, so what the child's side is set to (libuv
  // makes it blocking before the child runs; Node puts back at exit what it found at start) never makes
  // the test's reads wait.
  const readFd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  t.after(() => closeSync(readFd));
  const writeFd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
  let socket: Socket | undefined;
  t.after(() => (socket === undefined ? closeSync(writeFd) : socket.destroy()));
  // Fill the pipe so the command's very first write is refused.
  const filler = Buffer.alloc(4096, 0x2e);
  let filled = 0;
  for (;;) {
    try {
      filled += writeSync(writeFd, filler);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'EAGAIN');
      break;
    }
  }
  assert.ok(filled > 0);
  // Take `free` bytes back out, so that much room is left.
  const taken = free === 0 ? Buffer.alloc(0) : readExactly(readFd, free);

  const child = spawn(process.execPath, [BIN, 'schema'], { cwd: ROOT, stdio: ['ignore', writeFd, 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  // The child's side is made non-blocking again now that libuv made it blocking (a net.Socket on a pipe
  // sets O_NONBLOCK): the child is still starting Node, tens of milliseconds from its first write.
  socket = new Socket({ fd: writeFd, readable: false, writable: false });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Let the command meet the full pipe before anything is read.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const received: Buffer[] = [];
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const deadline = Date.now() + 30_000;
  while (!done && Date.now() < deadline) {
    received.push(drain(readFd));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const code = await exited;
  received.push(drain(readFd));
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  assert.equal(code, 0, stderr);
  assert.equal(stderr, '');
  const all = Buffer.concat([taken, ...received]);
  assert.equal(all.length, filled + expected.stdout.length);
  assert.ok(
    all.subarray(0, filled).every((byte) => byte === 0x2e),
    'the filler comes first, untouched',
  );
  assert.ok(all.subarray(filled).equals(expected.stdout), 'the command wrote every byte, in order');
}

/** Reads exactly `n` bytes that are already in the non-blocking `fd`. */
function readExactly(fd: number, n: number): Buffer {
  const out = Buffer.alloc(n);
  let got = 0;
  while (got < n) got += readSync(fd, out, got, n - got, null);
  return out;
}
