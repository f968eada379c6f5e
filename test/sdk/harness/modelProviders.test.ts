/**
 * The model loops' provider helpers, case by case: the delay a failed call asks for (`retry-after-ms`,
 * `retry-after` in seconds or as a date, Gemini's RetryInfo), how each failure is classified, and that no
 * message carries the key.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { APICallError } from 'ai';
import type { ModelLoopConfig } from '../../../packages/sdk/src/harness/modelLoop.js';
import {
  classifyFailure,
  readApiKey,
  retryAfterMs,
  retryInfoDelayMs,
} from '../../../packages/sdk/src/harness/modelProviders.js';

const KEY = 'sk-secret-key-42';
const config = { type: 'gemini', model: 'gemini-x', maxTurns: 50, requestTimeoutMs: 600_000 } as ModelLoopConfig;
const context = { agent: 'main', config, label: 'Gemini API at https://example.test', apiKey: KEY };

function apiError(statusCode: number | undefined, body: string, headers: Record<string, string> = {}): APICallError {
  return new APICallError({
    message: 'the SDK message',
    url: 'https://example.test/v1beta/models/gemini-x:generateContent',
    requestBodyValues: {},
    ...(statusCode === undefined ? {} : { statusCode }),
    responseHeaders: headers,
    responseBody: body,
  });
}

test('retryAfterMs: retry-after-ms first, then retry-after in seconds or as an HTTP date', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const cases: Array<[Record<string, string> | undefined, number | undefined]> = [
    [undefined, undefined],
    [{}, undefined],
    [{ 'retry-after-ms': '250' }, 250],
    [{ 'retry-after-ms': '12.4', 'retry-after': '9' }, 13],
    [{ 'retry-after': '2' }, 2000],
    [{ 'retry-after': '0.05' }, 50],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, 3000],
    [{ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }, 0],
    [{ 'retry-after': 'soon' }, undefined],
    [{ 'retry-after-ms': '0x10' }, undefined],
    [{ 'retry-after': '1e3' }, undefined],
  ];
  for (const [headers, expected] of cases) assert.equal(retryAfterMs(headers, now), expected, JSON.stringify(headers));
});

test("retryInfoDelayMs: Gemini's RetryInfo in the error body", () => {
  const body = (retryDelay: unknown) =>
    JSON.stringify({
      error: {
        code: 429,
        status: 'RESOURCE_EXHAUSTED',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure' },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
        ],
      },
    });
  assert.equal(retryInfoDelayMs(body('37s')), 37_000);
  assert.equal(retryInfoDelayMs(body('0.5s')), 500);
  assert.equal(retryInfoDelayMs(body('soon')), undefined);
  assert.equal(retryInfoDelayMs(body(5)), undefined);
  assert.equal(retryInfoDelayMs('RetryInfo but not JSON'), undefined);
  assert.equal(retryInfoDelayMs(undefined), undefined);
  assert.equal(retryInfoDelayMs(JSON.stringify([JSON.parse(body('2s'))])), 2000, 'a streamed JSON array');
});

test('classifyFailure: retried, auth, request and unreadable failures, each named without the key', () => {
  const rateLimited = classifyFailure(
    apiError(
      429,
      JSON.stringify({
        error: {
          message: 'Resource has been exhausted',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' }],
        },
      }),
    ),
    context,
  );
  assert.deepEqual(rateLimited, {
    retry: true,
    status: 429,
    message: 'Gemini API at https://example.test answered HTTP 429: Resource has been exhausted',
    retryAfterMs: 3000,
  });

  const down = classifyFailure(apiError(503, 'upstream down'), context);
  assert.equal(down.retry, true);
  assert.equal(down.retry && down.retryAfterMs, undefined);

  const unreachable = classifyFailure(apiError(undefined, ''), context);
  assert.equal(unreachable.retry, true);
  assert.match(unreachable.retry ? unreachable.message : '', /^could not reach Gemini API at https:\/\/example\.test/);

  const cases: Array<[number, string, RegExp]> = [
    [401, 'model_auth_failed', /refused the API key \(HTTP 401\): key sk-\.\.\.42 is wrong/],
    [403, 'model_auth_failed', /refused the API key \(HTTP 403\)/],
    [400, 'model_request_failed', /refused the request for model "gemini-x" \(HTTP 400\)/],
    [404, 'model_request_failed', /\(HTTP 404\)/],
    [422, 'model_request_failed', /\(HTTP 422\)/],
  ];
  for (const [status, code, message] of cases) {
    const verdict = classifyFailure(
      apiError(status, JSON.stringify({ error: { message: `key sk-...42 is wrong; you sent ${KEY}` } })),
      context,
    );
    assert.equal(verdict.retry, false);
    if (verdict.retry) continue;
    assert.equal(verdict.error.code, code);
    assert.match(verdict.error.message, message);
    assert.ok(verdict.error.message.includes('[redacted]'), 'the key the provider echoed is redacted');
    assert.ok(!JSON.stringify(verdict.error.toJSON()).includes(KEY));
    assert.equal(verdict.error.data.status, status);
  }

  const unreadable = classifyFailure(new Error(`could not parse ${KEY}`), context);
  assert.equal(unreadable.retry, false);
  if (!unreadable.retry) {
    assert.equal(unreadable.error.code, 'model_request_failed');
    assert.match(unreadable.error.message, /gave an answer that could not be used: could not parse \[redacted\]/);
  }
});

test('readApiKey: the named or default variable, never a value in the error; Object.prototype names are not variables', () => {
  assert.equal(readApiKey('main', config, { GEMINI_API_KEY: 'k' }), 'k');
  assert.throws(() => readApiKey('main', config, {}), { code: 'missing_env', message: /GEMINI_API_KEY/ });
  const named = { ...config, apiKeyEnv: 'constructor' } as ModelLoopConfig;
  assert.throws(() => readApiKey('main', named, {}), { code: 'missing_env', message: /constructor/ });
  assert.equal(readApiKey('main', named, { constructor: 'c' } as Record<string, string>), 'c');
});
