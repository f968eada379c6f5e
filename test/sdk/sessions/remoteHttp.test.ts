/** The one place messages about a remote quote an underlying error: the URL's query never comes through. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { networkMessage, publicUrl } from '../../../packages/sdk/src/sessions/remoteHttp.js';

test('networkMessage replaces every spelling of the URL by its public form and keeps the cause code', () => {
  const url = 'http://127.0.0.1:9/mcp?token=s3cret';
  const error = new TypeError(`fetch failed for ${url} (also ${new URL(url).href})`, {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });
  const text = networkMessage(error, url);
  assert.doesNotMatch(text, /s3cret/);
  assert.equal(text, `fetch failed for ${publicUrl(url)} (also ${publicUrl(url)}) (ECONNREFUSED)`);
  assert.equal(networkMessage('plain', url), 'plain');
  // An invalid URL is replaced as given.
  assert.equal(networkMessage(new Error('bad :not a url?x=1'), ':not a url?x=1'), 'bad (invalid URL)');
});
