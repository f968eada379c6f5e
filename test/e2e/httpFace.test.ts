/**
 * The HTTP face end to end: `services serve --http` as a real process, driven by the MCP Inspector's CLI
 * over Streamable HTTP with the bearer token, and by the inspector through `bridge http-to-stdio` (the
 * HTTP → stdio bridge a stdio-only harness would launch).
 *
 * Slow (about 10–20 s on 2 cores): the serve process, then six inspector runs, two of them starting the bridge.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  assertGone,
  assertNothingLeft,
  labServeArgs,
  BIN,
  firstText,
  inspector,
  labProject,
  spawnNode,
} from './helpers.js';

test('the inspector lists, calls, reads and gets through the HTTP face, directly and through http-to-stdio', async (t) => {
  const lab = await labProject(t);
  const tokenFile = join(lab.dir, 'token');
  const serve = spawnNode(t, labServeArgs(lab, ['--http', '--port', '0', '--token-file', tokenFile, '--json']));
  const served = await serve.json<{ url: string; tokenFile: string }>();
  assert.match(served.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const token = readFileSync(tokenFile, 'utf8');
  assert.ok(!serve.stdout().includes(token), 'the token never goes to stdout');
  const auth = `Authorization: Bearer ${token}`;
  const http = [served.url, '--transport', 'http', '--header', auth];
  // The bridge takes the credential from a variable (never its command line); the inspector sets it with -e.
  const bridge = [
    '-e',
    `SE_LAB_AUTH=Bearer ${token}`,
    '--',
    process.execPath,
    BIN,
    'bridge',
    'http-to-stdio',
    '--url',
    served.url,
    '--header-env',
    'Authorization=SE_LAB_AUTH',
  ];

  const [list, call, read, prompt, bridgedList, bridgedCall] = await Promise.all([
    inspector(t, [...http, '--method', 'tools/list'], lab.dir),
    inspector(
      t,
      [...http, '--method', 'tools/call', '--tool-name', 'lab__echo', '--tool-arg', 'text=over http'],
      lab.dir,
    ),
    inspector(t, [...http, '--method', 'resources/read', '--uri', 'lab://notes'], lab.dir),
    inspector(
      t,
      [...http, '--method', 'prompts/get', '--prompt-name', 'lab__greet', '--prompt-args', 'who=Grace'],
      lab.dir,
    ),
    inspector(t, ['--method', 'tools/list', ...bridge], lab.dir),
    inspector(
      t,
      ['--method', 'tools/call', '--tool-name', 'lab__echo', '--tool-arg', 'text=bridged', ...bridge],
      lab.dir,
    ),
  ]);

  const names = (result: Record<string, unknown>) =>
    (result.tools as { name: string }[]).map((tool) => tool.name).sort();
  assert.deepEqual(names(list), ['lab__echo', 'lab__whoami', 'scienceevolve__get_workflow']);
  assert.equal(firstText(call), 'echo: over http');
  assert.deepEqual(read.contents, [{ uri: 'lab://notes', mimeType: 'text/plain', text: 'lab notes: all calibrated' }]);
  const messages = prompt.messages as { content: { text: string } }[];
  assert.equal(messages[0]?.content.text, 'Hello Grace, welcome to the lab');
  // The bridge renames nothing: the same surface, reached over stdio.
  assert.deepEqual(names(bridgedList), names(list));
  assert.equal(firstText(bridgedCall), 'echo: bridged');

  serve.child.kill('SIGTERM');
  assert.deepEqual(await serve.exited, { code: 0, signal: null });
  await assertGone(serve.pid);
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});
