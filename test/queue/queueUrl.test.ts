/** The queue address: parsed strictly, TLS for rediss://, and credentials never in any text it gives out. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseQueueUrl, redactUrlsIn } from '../../packages/sdk/src/queue/queueUrl.js';
import { redactUrlsIn as redactUrlsInOwner } from '../../packages/sdk/src/redact.js';

test('redis://, rediss:// and unix:// addresses become connection options; the public form has no credentials', () => {
  const plain = parseQueueUrl('redis://10.0.0.5:6380/2');
  assert.deepEqual(plain.connection, { host: '10.0.0.5', port: 6380, db: 2 });
  assert.equal(plain.publicUrl, 'redis://10.0.0.5:6380/2');

  const tls = parseQueueUrl('rediss://worker:s3cr%40t@redis.example:6390');
  assert.deepEqual(tls.connection, {
    host: 'redis.example',
    port: 6390,
    username: 'worker',
    password: 's3cr@t',
    tls: {},
  });
  assert.equal(tls.publicUrl, 'rediss://redis.example:6390');
  assert.doesNotMatch(tls.publicUrl, /s3cr|worker/);

  const socket = parseQueueUrl('unix:///run/redis/redis.sock');
  assert.deepEqual(socket.connection, { path: '/run/redis/redis.sock' });
  assert.equal(parseQueueUrl('redis://h').connection.port, 6379);
});

test('bad queue addresses are usage errors that never quote the password', () => {
  const cases: Array<[string, RegExp]> = [
    ['not a url', /is not a URL/],
    ['http://u:hunter2@h:1', /scheme "http:"/],
    ['redis://u:hunter2@h:1/x', /database "x"/],
    ['unix://', /no socket path/],
    ['redis://u:hunter2%zz@h:1', /its password has a "%" not followed by two hex digits/],
    ['redis://hunter2%g0@h:1', /its user name has a "%"/],
    ['unix:///tmp/%zz.sock', /its socket path has a "%"/],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => parseQueueUrl(text),
      (error: { code: string; message: string }) => {
        assert.equal(error.code, 'usage', text);
        assert.match(error.message, message);
        assert.doesNotMatch(error.message, /hunter2/);
        return true;
      },
    );
  }
});

test('redactUrlsIn (owned by redact.ts) removes the userinfo and query values of every URL in a message', () => {
  assert.equal(redactUrlsIn, redactUrlsInOwner, 'queueUrl re-exports the one owner');
  assert.equal(
    redactUrlsIn('connect ECONNREFUSED rediss://admin:pw@10.0.0.1:6379 (and redis://x@h)'),
    'connect ECONNREFUSED rediss://10.0.0.1:6379 (and redis://h)',
  );
  assert.equal(
    redactUrlsIn("fatal: unable to access 'https://x-access-token:ghp_T0KEN@git.example/r.git/?sig=abc'"),
    "fatal: unable to access 'https://git.example/r.git/?sig=REDACTED'",
  );
  // Not a URL once parsed (a port with a trailing dot): its user information still goes.
  assert.equal(redactUrlsIn('at redis://u:pw@h:12x.'), 'at redis://h:12x.');
  assert.equal(redactUrlsIn('no url here'), 'no url here');
});
