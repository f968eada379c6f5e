/** `orchestration.allowedRemoteUrls` matching (SPEC §3.3): parsed URLs, never string prefixes. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { remoteUrlRefusal } from '../../../packages/sdk/src/reconfigure/allowedUrls.ts';

test('a remote URL matches an allowed URL only by scheme, host, port and a path on a / boundary', () => {
  const cases: Array<{ url: string; allowed: string[]; ok: boolean; message?: RegExp }> = [
    { url: 'http://127.0.0.1:80/mcp', allowed: ['http://127.0.0.1:80'], ok: true },
    { url: 'http://127.0.0.1/mcp', allowed: ['http://127.0.0.1:80/'], ok: true },
    { url: 'http://127.0.0.1:8099/mcp', allowed: ['http://127.0.0.1:80'], ok: false },
    { url: 'http://127.0.0.1:80@evil.example/mcp', allowed: ['http://127.0.0.1:80'], ok: false },
    {
      url: 'http://user:secret@127.0.0.1:80/mcp',
      allowed: ['http://127.0.0.1:80'],
      ok: false,
      message: /user information/,
    },
    { url: 'https://127.0.0.1:80/mcp', allowed: ['http://127.0.0.1:80'], ok: false },
    { url: 'http://127.0.0.2:80/mcp', allowed: ['http://127.0.0.1:80'], ok: false },
    { url: 'http://HOST.example/api/mcp', allowed: ['http://host.example/api'], ok: true },
    { url: 'http://host.example/api', allowed: ['http://host.example/api'], ok: true },
    { url: 'http://host.example/apiary/mcp', allowed: ['http://host.example/api'], ok: false },
    { url: 'http://host.example/api/mcp', allowed: ['http://host.example/api/'], ok: true },
    { url: 'http://host.example/other', allowed: ['http://a.example/', 'http://host.example/'], ok: true },
    { url: 'http://host.example/mcp', allowed: [], ok: false, message: /allowedRemoteUrls is empty/ },
    {
      url: 'http://host.example/mcp',
      allowed: ['http://op:token@other.example/x?k=v'],
      ok: false,
      message: /must match one of: http:\/\/other\.example\/x \(/,
    },
  ];
  for (const c of cases) {
    const refusal = remoteUrlRefusal(c.url, c.allowed);
    assert.equal(refusal === undefined, c.ok, `${c.url} against ${c.allowed.join(' ')}: ${refusal}`);
    if (c.message) assert.match(refusal ?? '', c.message, c.url);
    assert.ok(!(refusal ?? '').includes('secret') && !(refusal ?? '').includes('token'), 'no credentials in messages');
  }
});
