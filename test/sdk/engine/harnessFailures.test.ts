/**
 * Harness failures that another attempt would only repeat are not retried (SPEC §10.3 retries a harness
 * that crashed): a missing key, a refused key and a refused request fail the invocation after ONE attempt —
 * one set of service processes, one model request at most — even with `invocationRetries: 2`; every code of
 * `NOT_RETRIED_HARNESS_CODES` does the same, while a crash (`harness_failed`) or an unreachable model is
 * still retried. The model-loop cases run the real loop against the local model server and start one real
 * Node service each (under 1 s); the code table uses a test's own harness and no service.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { NOT_RETRIED_HARNESS_CODES } from '../../../packages/sdk/src/engine/attempt.js';
import { runWorkflow } from '../../../packages/sdk/src/engine/runs.js';
import { type ErrorCode, SdkError } from '../../../packages/sdk/src/errors.js';
import { fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { startModelServer } from '../../fixtures/modelServer/index.js';
import { assertNothingLeft, ofType, sandbox } from './helpers.js';

const MODEL_CASES: ReadonlyArray<{
  title: string;
  code: string;
  /** The harness's `baseUrl` path under the server and its `apiKeyEnv` value on the host (undefined: unset). */
  path: string;
  key: string | undefined;
  /** HTTP requests the one attempt makes to the model server (model requests and refused paths). */
  requests: number;
  message: RegExp;
}> = [
  {
    title: 'a missing API key variable',
    code: 'missing_env',
    path: '/v1',
    key: undefined,
    requests: 0,
    message: /SE_FAILURES_KEY is not set/,
  },
  {
    title: 'a refused key (401)',
    code: 'model_auth_failed',
    path: '/v1',
    key: 'sk-wrong',
    requests: 1,
    message: /refused the API key \(HTTP 401\)/,
  },
  {
    title: 'a refused request (404: no such endpoint)',
    code: 'model_request_failed',
    path: '/nowhere',
    key: 'sk-right',
    requests: 1,
    message: /HTTP 404/,
  },
];

for (const c of MODEL_CASES) {
  test(`${c.title}: ${c.code} after one attempt, no retry with fresh services`, async (t) => {
    const box = await sandbox(t);
    const model = await startModelServer({ requireApiKey: 'sk-right' });
    t.after(() => model.close());
    const hostEnv: Record<string, string | undefined> = { ...process.env };
    delete hostEnv.SE_FAILURES_KEY;
    if (c.key !== undefined) hostEnv.SE_FAILURES_KEY = c.key;
    const result = await runWorkflow({
      ...box,
      workflow: {
        orchestration: { invocationRetries: 2 },
        agents: {
          main: {
            harness: { type: 'openai', model: 'test-model', baseUrl: model.url + c.path, apiKeyEnv: 'SE_FAILURES_KEY' },
            mcpServers: [{ name: 'counts', project: 'counts' }],
          },
        },
        mcpDefinitions: { counts: fixtureDefinition('countsCalls.cjs') },
      },
      requirement: 'anything',
      hostEnv,
      graceMs: 500,
    });
    assert.equal(result.status, 'failed');
    assert.equal(result.error?.code, c.code);
    assert.match(result.error!.message, c.message);
    assert.deepEqual(
      ofType(result.events, 'invocation.attempt_failed').map((e) => [e.attempt, e.willRetry, e.error?.code]),
      [[1, false, c.code]],
    );
    assert.equal(ofType(result.events, 'invocation.started').length, 1);
    assert.equal(ofType(result.events, 'service.ready').length, 1, 'one set of service processes');
    assert.equal(model.requests.length + model.rejected.length, c.requests, 'one model call, not retried');
    await assertNothingLeft(box.project, result.events);
  });
}

/** Attempts a harness that always throws `code` gets, with `invocationRetries: 2`. */
async function attemptsFor(t: TestContext, code: ErrorCode): Promise<number> {
  const box = await sandbox(t);
  const result = await runWorkflow({
    ...box,
    workflow: {
      orchestration: { invocationRetries: 2 },
      agents: { main: { harness: { type: 'openai', model: 'm' } } },
    },
    requirement: 'anything',
    graceMs: 500,
    harnessFactories: {
      openai: () => ({
        run: async () => {
          throw new SdkError(code, `the fake harness failed with ${code}`, { remedy: 'none needed: a test' });
        },
      }),
    },
  });
  assert.equal(result.status, 'failed');
  assert.equal(result.error?.code, code);
  const failed = ofType(result.events, 'invocation.attempt_failed');
  assert.deepEqual(
    failed.map((e) => e.willRetry),
    [...failed.map(() => true).slice(1), false],
    'only the last failure is final',
  );
  return failed.length;
}

test('every code of NOT_RETRIED_HARNESS_CODES fails after one attempt', async (t) => {
  assert.ok(NOT_RETRIED_HARNESS_CODES.size >= 4);
  for (const code of NOT_RETRIED_HARNESS_CODES) assert.equal(await attemptsFor(t, code), 1, code);
});

test('a model loop whose optional packages are missing (missing_dependency) fails after one attempt', async (t) => {
  assert.equal(await attemptsFor(t, 'missing_dependency'), 1);
});

test('a crash, a timeout or an unreachable model is retried up to invocationRetries', async (t) => {
  for (const code of ['harness_failed', 'harness_timeout', 'model_unreachable', 'unknown_tool'] as const) {
    assert.equal(await attemptsFor(t, code), 3, code);
  }
});

test('a harness that throws an uncoded error fails the attempt with harness_failed (never internal), retried', async (t) => {
  const box = await sandbox(t);
  const result = await runWorkflow({
    ...box,
    workflow: {
      orchestration: { invocationRetries: 1 },
      agents: { main: { harness: { type: 'openai', model: 'm' } } },
    },
    requirement: 'anything',
    graceMs: 500,
    harnessFactories: {
      openai: () => ({
        run: async () => {
          throw new TypeError('undefined is not a function (in a harness)');
        },
      }),
    },
  });
  assert.equal(result.status, 'failed');
  assert.equal(result.error?.code, 'harness_failed');
  assert.match(result.error!.message, /undefined is not a function/);
  assert.deepEqual(
    ofType(result.events, 'invocation.attempt_failed').map((e) => [e.willRetry, e.error?.code]),
    [
      [true, 'harness_failed'],
      [false, 'harness_failed'],
    ],
  );
});

test('a remote that needs a sign-in (remote_auth_required) fails the invocation after one attempt', async (t) => {
  const { createServer } = await import('node:http');
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    req.resume();
    res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'text/plain' });
    res.end('no');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const url = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}/mcp`;
  const box = await sandbox(t);
  let harnessRuns = 0;
  const result = await runWorkflow({
    ...box,
    workflow: {
      orchestration: { invocationRetries: 2, allowedRemoteUrls: [url] },
      agents: { main: { harness: { type: 'openai', model: 'm' }, mcpServers: [{ name: 'hub', url }] } },
    },
    requirement: 'anything',
    graceMs: 500,
    harnessFactories: {
      openai: () => ({
        run: async () => {
          harnessRuns += 1;
          return { output: 'never' };
        },
      }),
    },
  });
  assert.equal(result.status, 'failed');
  assert.equal(result.error?.code, 'remote_auth_required', result.error?.message);
  assert.deepEqual(
    ofType(result.events, 'invocation.attempt_failed').map((e) => [e.willRetry, e.error?.code]),
    [[false, 'remote_auth_required']],
  );
  assert.equal(harnessRuns, 0, 'the agent never started');
  assert.ok(requests >= 1);
});
