/** Bounded directory creation (issue 27, item 2): never Node's recursive mkdir, which loops for ever under /proc. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAX_NEW_DIR_LEVELS, makeDirs, makePrivateDir, pseudoFilesystemOf } from '../../packages/sdk/src/fileModes.js';

function temp(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'se-mkdirs-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('makePrivateDir makes every missing level 0700 and leaves an existing one', async (t) => {
  const dir = temp(t);
  await makePrivateDir(join(dir, 'a', 'b', 'c'));
  for (const level of ['a', 'a/b', 'a/b/c']) assert.equal(statSync(join(dir, level)).mode & 0o777, 0o700);
  await makePrivateDir(join(dir, 'a', 'b', 'c'));
});

const refusals: [string, (dir: string) => string, RegExp][] = [
  ['a file in the way', (dir) => join(dir, 'file', 'x'), /\/file is a file, not a directory \(ENOTDIR\)/],
  ['the path is a file', (dir) => join(dir, 'file'), /\/file is a file, not a directory/],
  ['under /proc (refused before any mkdir)', () => '/proc/se-test/a/b', /\/proc is on a pseudo-filesystem \(proc\)/],
  ['under /sys', () => '/sys/se-test', /\/sys is on a pseudo-filesystem \(sysfs\)/],
  [
    `more than ${MAX_NEW_DIR_LEVELS} missing levels`,
    (dir) => join(dir, ...Array.from({ length: MAX_NEW_DIR_LEVELS + 2 }, () => 'd')),
    /over 64 of its levels are missing/,
  ],
];
for (const [name, path, message] of refusals) {
  test(`makeDirs refuses ${name} as io_error, at once`, (t) => {
    const dir = temp(t);
    writeFileSync(join(dir, 'file'), 'x');
    const started = Date.now();
    assert.throws(
      () => makeDirs(path(dir)),
      (error: { code?: string; message?: string; remedy?: string }) => {
        assert.equal(error.code, 'io_error');
        assert.match(error.message!, message);
        assert.ok(error.remedy);
        return true;
      },
    );
    assert.ok(Date.now() - started < 1000);
  });
}

test('pseudoFilesystemOf knows /proc and /sys by place and by statfs type, and a real disk as none', () => {
  assert.equal(pseudoFilesystemOf('/proc'), 'proc');
  assert.equal(pseudoFilesystemOf('/proc/self'), 'proc');
  assert.equal(pseudoFilesystemOf('/sys/kernel'), 'sysfs');
  assert.equal(pseudoFilesystemOf('/procfoo'), undefined);
  assert.equal(pseudoFilesystemOf(tmpdir()), undefined);
});
