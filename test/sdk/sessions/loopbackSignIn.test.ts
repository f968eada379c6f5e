/**
 * The browser opener of `auth login`: `BROWSER` as one executable gets the URL as its one argument; a
 * `BROWSER` command line with `%s` is split into words (no shell) and `%s` replaced by the URL.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openInBrowser } from '../../../packages/sdk/src/sessions/loopbackSignIn.js';

/** A "browser" that writes its arguments, one a line, to `out`. */
function recordingBrowser(t: import('node:test').TestContext): { script: string; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'se-browser-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'writesItsArgs.sh');
  const out = join(dir, 'args.txt');
  writeFileSync(script, `#!/bin/sh\nprintf '%s\\n' "$@" > "${out}.tmp" && mv "${out}.tmp" "${out}"\n`);
  chmodSync(script, 0o700);
  return { script, out };
}

async function argsWritten(out: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  while (!existsSync(out)) {
    if (Date.now() > deadline) assert.fail('the browser never ran');
    await sleep(20);
  }
  return readFileSync(out, 'utf8').split('\n').slice(0, -1);
}

const URL_TO_OPEN = new URL('https://auth.example/authorize?state=s1&code_challenge=c1');

test('BROWSER as one executable gets the URL as its one argument', async (t) => {
  const { script, out } = recordingBrowser(t);
  await openInBrowser(URL_TO_OPEN, { BROWSER: script });
  assert.deepEqual(await argsWritten(out), [URL_TO_OPEN.href]);
});

test('BROWSER with %s is a command line: its words, %s replaced by the URL', async (t) => {
  const { script, out } = recordingBrowser(t);
  await openInBrowser(URL_TO_OPEN, { BROWSER: `${script} --new-tab %s` });
  assert.deepEqual(await argsWritten(out), ['--new-tab', URL_TO_OPEN.href]);
});
