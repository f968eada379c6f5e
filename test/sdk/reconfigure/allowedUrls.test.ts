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
    // Issue 13, item 1: each reproduction of the string-prefix match.
    { url: 'http://localhost.evil.example/mcp', allowed: ['http://localhost'], ok: false },
    { url: 'https://api.example.com.evil.example/mcp', allowed: ['https://api.example.com'], ok: false },
    { url: 'http://127.0.0.1:8000@evil.example/mcp', allowed: ['http://127.0.0.1:8000'], ok: false },
    { url: 'http://127.0.0.1:80.evil.example/mcp', allowed: ['http://127.0.0.1:80'], ok: false },
    // Default ports: `http://h` is `http://h:80`, `https://h` is `https://h:443`, and no other.
    { url: 'http://h.example:80/mcp', allowed: ['http://h.example'], ok: true },
    { url: 'https://h.example/mcp', allowed: ['https://h.example:443'], ok: true },
    { url: 'http://h.example:443/mcp', allowed: ['https://h.example'], ok: false },
    { url: 'http://h.example:8080/mcp', allowed: ['http://h.example'], ok: false },
    // IPv6: the bracketed address and its port compare as parsed (::1 and 0:0:…:1 are one address).
    { url: 'http://[::1]:8000/mcp', allowed: ['http://[::1]:8000'], ok: true },
    { url: 'http://[0:0:0:0:0:0:0:1]:8000/mcp', allowed: ['http://[::1]:8000/'], ok: true },
    { url: 'http://[::1]:8001/mcp', allowed: ['http://[::1]:8000'], ok: false },
    { url: 'http://[::2]:8000/mcp', allowed: ['http://[::1]:8000'], ok: false },
    // Paths on a segment boundary, after the parser's normalisation (no escape through `..`).
    { url: 'http://h.example/api/../admin', allowed: ['http://h.example/api'], ok: false },
    { url: 'http://h.example/api/%2e%2e/admin', allowed: ['http://h.example/api'], ok: false },
    { url: 'http://h.example/api/', allowed: ['http://h.example/api/'], ok: true },
    { url: 'http://h.example/api', allowed: ['http://h.example/api/'], ok: false },
    // Userinfo is refused even when the host matches, and an allowed entry with userinfo matches nothing.
    { url: 'http://u@h.example/mcp', allowed: ['http://h.example'], ok: false, message: /user information/ },
    { url: 'http://h.example/mcp', allowed: ['http://u:p@h.example'], ok: false },
    { url: 'not a url', allowed: ['http://h.example'], ok: false, message: /not a valid URL/ },
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
