/**
 * Issue 13, item 7: `bridge http-to-stdio` never prints a header value or a URL's user information or
 * query token — not in a usage error, not in a connection failure, with or without `--json` — and a
 * header value with a line break is refused with `invalid_header` before any request is made.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { assertErrorJson, runCli } from './runCli.js';

const SECRET = 'sekrit-4711';

/** A 127.0.0.1 port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(typeof address === 'object' && address !== null);
  return address.port;
}

test('no secret of a header or URL reaches stdout or stderr, whatever goes wrong', async () => {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}/mcp`;
  const cases: Array<{ args: string[]; code: number; error: string }> = [
    // The reproduction: an Authorization value with an embedded newline (from its variable).
    { args: ['--url', url, '--header-env', 'Authorization=SE_H_NEWLINE'], code: 1, error: 'invalid_header' },
    { args: ['--url', url, '--header-env', 'Authorization=SE_H_CR'], code: 1, error: 'invalid_header' },
    // A well-formed header, and the server is not there.
    { args: ['--url', url, '--header-env', 'Authorization=SE_H_GOOD'], code: 1, error: 'remote_unreachable' },
    // A token in the query, from a variable.
    { args: ['--url-env', 'SE_URL_TOKEN'], code: 1, error: 'remote_unreachable' },
    // User information, in an http and in a non-http URL.
    { args: ['--url', `http://user:${SECRET}@127.0.0.1:${port}/mcp`], code: 2, error: 'usage' },
    { args: ['--url', `ftp://user:${SECRET}@127.0.0.1:${port}/mcp`], code: 2, error: 'usage' },
    // A header given without its name: the text is the secret itself.
    { args: ['--url', url, '--header', `Bearer ${SECRET}`], code: 2, error: 'usage' },
    // Credentials on the command line are refused before anything is sent.
    { args: ['--url', url, '--header', `Authorization: Bearer ${SECRET}`], code: 2, error: 'usage' },
    { args: ['--url', `${url}?token=${SECRET}`], code: 2, error: 'usage' },
  ];
  const env = {
    ...process.env,
    SE_H_NEWLINE: `Bearer ${SECRET}\nX-Injected: 1`,
    SE_H_CR: `Bearer\r${SECRET}`,
    SE_H_GOOD: `Bearer ${SECRET}`,
    SE_URL_TOKEN: `${url}?token=${SECRET}`,
  };
  for (const c of cases) {
    for (const json of [false, true]) {
      const result = await runCli(['bridge', 'http-to-stdio', ...c.args, ...(json ? ['--json'] : [])], { env });
      const shown = `${c.args.join(' ')}${json ? ' --json' : ''}`;
      assert.equal(result.code, c.code, `${shown}: ${result.stderr}`);
      assert.ok(
        !result.stdout.includes(SECRET) && !result.stderr.includes(SECRET),
        `${shown} printed the secret:\n${result.stdout}${result.stderr}`,
      );
      // Once the bridge has taken stdout for the protocol, an error goes to stderr, with or without --json.
      if (result.json !== undefined) assertErrorJson(result.json, c.error);
      else assert.match(result.stderr, new RegExp(`\\[${c.error}\\]`), shown);
    }
  }
});
