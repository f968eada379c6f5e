/**
 * A remote service's client secret or private key from a file (`oauth.clientSecretFile`, `privateKeyFile`):
 * read through the one reader of secret files (`readPrivateFileSync`, fileModes.ts, which the queue's
 * `--queue-file` uses too). Case by case: what is read, and each refusal with its code, never the secret.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSdkError } from '../../../packages/sdk/src/errors.ts';
import { readSecretFile } from '../../../packages/sdk/src/invocation/remoteCredentials.ts';

const SECRET = 's3cr3t-do-not-print';

/** A file in a fresh directory, written with `mode` (and `text`); the directory is removed after the test. */
function fileIn(t: { after(fn: () => void): void }, text: string, mode = 0o600): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'se-secret-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'secret');
  writeFileSync(path, text, { mode });
  chmodSync(path, mode);
  return { dir, path };
}

test('a 0600 file of this user: its text, less one final line break', (t) => {
  assert.equal(readSecretFile('api', 'client secret', fileIn(t, `${SECRET}\n`).path), SECRET);
  assert.equal(readSecretFile('api', 'client secret', fileIn(t, SECRET, 0o400).path), SECRET);
  const pem = '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----';
  assert.equal(readSecretFile('api', 'private key', fileIn(t, `${pem}\n`).path), pem);
});

const refusals: { name: string; make: (t: Parameters<typeof fileIn>[0]) => string; code: string; message: RegExp }[] = [
  {
    name: 'readable by others (0644)',
    make: (t) => fileIn(t, SECRET, 0o644).path,
    code: 'insecure_file',
    message: /has mode 0644: others than its owner may read or change it/,
  },
  {
    name: 'a symbolic link to a good file',
    make: (t) => {
      const { dir, path } = fileIn(t, SECRET);
      symlinkSync(path, join(dir, 'link'));
      return join(dir, 'link');
    },
    code: 'insecure_file',
    message: /is a symbolic link \(links are not followed\)/,
  },
  {
    name: 'a named pipe (never blocks)',
    make: (t) => {
      const { dir } = fileIn(t, SECRET);
      execFileSync('mkfifo', ['-m', '600', join(dir, 'fifo')]);
      return join(dir, 'fifo');
    },
    code: 'insecure_file',
    message: /is not a regular file/,
  },
  {
    name: "another user's file",
    make: (t) => {
      const { path } = fileIn(t, SECRET);
      if (process.getuid?.() === 0) chownSync(path, 65534, 65534);
      return path;
    },
    code: 'insecure_file',
    message: /is owned by uid 65534, not by this user/,
  },
  { name: 'empty', make: (t) => fileIn(t, '\n').path, code: 'usage', message: /is empty/ },
  {
    name: 'longer than 64 KiB',
    make: (t) => fileIn(t, 'x'.repeat(65_537)).path,
    code: 'usage',
    message: /is longer than 65536 bytes/,
  },
  {
    name: 'missing',
    make: (t) => join(fileIn(t, SECRET).dir, 'nothing-here'),
    code: 'io_error',
    message: /cannot be opened \(ENOENT\)/,
  },
];

for (const c of refusals) {
  test(`refused: ${c.name} — ${c.code}, naming the file and the service, never the secret`, (t) => {
    if (c.name === "another user's file" && process.getuid?.() !== 0) {
      t.skip('needs root to give the file to another user');
      return;
    }
    const path = c.make(t);
    assert.throws(
      () => readSecretFile('api', 'client secret', path),
      (error: unknown) => {
        assert.ok(isSdkError(error), String(error));
        assert.equal(error.code, c.code);
        assert.match(error.message, c.message);
        assert.ok(error.message.includes(path) && error.message.includes('remote service "api"'), error.message);
        assert.doesNotMatch(`${error.message} ${error.remedy ?? ''} ${JSON.stringify(error.data)}`, new RegExp(SECRET));
        return true;
      },
    );
  });
}
