/**
 * The HTTP face's token file: written through the store's atomic write with mode 0600, over an existing
 * wider file or a symlink without exposing the token through either; a file that cannot be written is an
 * `io_error` naming it.
 */
import assert from 'node:assert/strict';
import { lstatSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createBridgeToken, writeBridgeTokenFile } from '../../../packages/sdk/src/faces/httpFace.js';
import { writeFileAtomic } from '../../../packages/sdk/src/store/atomicFile.js';
import { tempDir } from '../../fixtures/store/tempDir.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

test('the token file is 0600 even over an existing 0644 file, and leaves no temporary file', async (t) => {
  const dir = await tempDir(t, 'se-token-');
  const path = join(dir, 'token');
  writeFileSync(path, 'old', { mode: 0o644 });
  const token = createBridgeToken();
  await writeBridgeTokenFile(path, token);
  assert.equal(readFileSync(path, 'utf8'), token);
  assert.equal(modeOf(path), 0o600);
  assert.deepEqual(readdirSync(dir), ['token']);
});

test('a symlink at the path is replaced, never written through', async (t) => {
  const dir = await tempDir(t, 'se-token-');
  const elsewhere = join(dir, 'elsewhere.txt');
  writeFileSync(elsewhere, 'keep', { mode: 0o644 });
  const path = join(dir, 'token');
  symlinkSync(elsewhere, path);
  await writeBridgeTokenFile(path, 'a-token-of-enough-length');
  assert.equal(lstatSync(path).isSymbolicLink(), false);
  assert.equal(modeOf(path), 0o600);
  assert.equal(readFileSync(elsewhere, 'utf8'), 'keep');
});

test('without a mode the store keeps its default; a path that cannot be written is io_error naming it', async (t) => {
  const dir = await tempDir(t, 'se-token-');
  const plain = join(dir, 'plain.json');
  await writeFileAtomic(plain, '{}');
  assert.equal(modeOf(plain) & 0o600, 0o600, 'the owner reads and writes');
  assert.equal(modeOf(plain) & 0o111, 0, 'nothing is executable');
  const blocked = join(dir, 'plain.json', 'token');
  await assert.rejects(
    writeBridgeTokenFile(blocked, 'a-token-of-enough-length'),
    (error: Error & { code?: string }) => {
      assert.equal(error.code, 'io_error');
      assert.match(error.message, /could not write .*plain\.json\/token/);
      return true;
    },
  );
});
