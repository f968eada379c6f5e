/**
 * Services that misbehave at start, one fixture each: the state and error each must give, and after it,
 * proof that none of its processes survives. Budgets are short (options) so the suite stays fast.
 */
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { test } from 'node:test';
import { isSdkError } from '../../../packages/sdk/src/errors.js';
import { buildServiceEnv } from '../../../packages/sdk/src/processes/serviceEnv.js';
import { assertAllGone, eventTypes, fixtureSpec, startMustFail, startService, states, waitFor } from './helpers.js';

/** The fields every start failure carries in `data` (SPEC §5 "Diagnostics"). */
function assertDiagnostics(error: unknown, spec: { serviceName: string; stderrLogPath: string }): void {
  assert.ok(isSdkError(error), `expected an SdkError, got ${String(error)}`);
  assert.equal(error.data.service, spec.serviceName);
  assert.equal(error.data.definition, `${spec.serviceName}-def`);
  assert.equal(error.data.digest, 'f'.repeat(64));
  assert.equal(error.data.log, spec.stderrLogPath);
  const launch = error.data.launch as { command: string; entrypoint: string; args: string[] };
  assert.ok(launch.entrypoint.endsWith('.cjs'));
  assert.ok(Array.isArray(error.data.stderrTail));
  assert.ok(error.message.includes(`service "${spec.serviceName}"`), error.message);
  assert.ok(error.message.includes(spec.stderrLogPath), error.message);
  assert.ok(error.remedy);
}

test('printsBannerOnStdout: banner and JSON log lines are skipped, counted, warned once, reported at close', async (t) => {
  const spec = fixtureSpec(t, 'printsBannerOnStdout.cjs');
  const { session, events } = await startService(t, spec);
  assert.equal(session.state, 'ready');
  assert.equal(session.pollutedLines, 3);
  const chatty = await session.callTool('chatty', {});
  assert.deepEqual(chatty.content, [{ type: 'text', text: 'done' }]);
  assert.equal(session.pollutedLines, 5);
  const invalid = await session.callTool('emitInvalid', {});
  assert.deepEqual(invalid.content, [{ type: 'text', text: 'done' }]);
  assert.equal(session.invalidLines, 1);
  await session.close();
  const pollution = events.filter((e) => e.type === 'service.protocol_pollution');
  assert.deepEqual(
    pollution.map((e) => e.type === 'service.protocol_pollution' && [e.phase, e.pollutedLines, e.invalidLines]),
    [
      ['first', 1, 0],
      ['close', 5, 1],
    ],
  );
  const exited = events.find((e) => e.type === 'service.exited');
  assert.ok(exited?.type === 'service.exited' && exited.pollutedLines === 5 && exited.invalidLines === 1);
  // The events report counts, never the lines themselves.
  assert.ok(!JSON.stringify(events).includes('Banner Service'));
  await assertAllGone([session.pid]);
});

test('progressBarBeforeAnswer: the answer after the last \\r is read during setup, but never guessed at after it', async (t) => {
  const spec = fixtureSpec(t, 'progressBarBeforeAnswer.cjs');
  const { session } = await startService(t, spec);
  assert.equal(session.state, 'ready');
  assert.deepEqual(session.catalog.tools.map((x) => x.name).sort(), ['echo', 'gluedAnswer']);
  await assert.rejects(session.callTool('gluedAnswer', {}, { timeoutMs: 400 }), (error) => {
    assert.ok(isSdkError(error));
    assert.equal(error.code, 'forward_timeout');
    return true;
  });
  assert.equal(session.invalidLines, 1, 'the glued answer is reported as an invalid line');
  // The connection is intact: the next call is answered.
  const echo = await session.callTool('echo', { text: 'still here' });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'still here' }]);
  await session.close();
  await assertAllGone([session.pid]);
});

test('floodsStderr: 10 MiB of stderr during start is drained; the log keeps 1 MiB and says what was dropped', async (t) => {
  const spec = fixtureSpec(t, 'floodsStderr.cjs');
  const { session } = await startService(t, spec);
  assert.equal(session.state, 'ready');
  // stdout and stderr are separate pipes: the last stderr line may arrive just after the ready answer.
  await waitFor(() => session.stderrTail().at(-1) === 'flood done');
  await session.close();
  const log = readFileSync(spec.stderrLogPath, 'utf8');
  const total = 160 * 64 * 1024 + 'flood done\n'.length;
  const dropped = total - 1024 * 1024;
  assert.ok(log.endsWith(`\n[scienceevolve] dropped ${dropped} bytes of stderr after the first 1048576\n`));
  assert.ok(statSync(spec.stderrLogPath).size < 1024 * 1024 + 200);
  await assertAllGone([session.pid]);
});

test('exitsAtStart: failed with service_exited, exit code 3 and the stderr tail', async (t) => {
  const spec = fixtureSpec(t, 'exitsAtStart.cjs');
  const { error, events } = await startMustFail(spec);
  assertDiagnostics(error, spec);
  assert.equal(error.code, 'service_exited');
  assert.equal(error.data.exitCode, 3);
  assert.deepEqual(error.data.stderrTail, ['fatal: cannot read config.json']);
  assert.match(error.message, /exited with code 3 during initialize/);
  assert.deepEqual(states(events), ['starting', 'initializing', 'failed', 'stopping', 'exited']);
  assert.deepEqual(eventTypes(events), ['service.failed', 'service.exited']);
  const failed = events.find((e) => e.type === 'service.failed');
  assert.ok(failed?.type === 'service.failed' && failed.error.code === 'service_exited');
  assert.ok(!JSON.stringify(events).includes('cannot read config.json'), 'events never carry log content');
  await assertAllGone([error.data.pid as number]);
});

test('neverAnswersInitialize: startup_timeout when the deadline passes, and the process is collected', async (t) => {
  const spec = fixtureSpec(t, 'neverAnswersInitialize.cjs');
  const started = Date.now();
  const { error } = await startMustFail(spec, { budgetMs: 500 });
  assertDiagnostics(error, spec);
  assert.equal(error.code, 'startup_timeout');
  assert.match(error.message, /did not finish initialize within/);
  // Far below the 35 s default budget, with room for a loaded machine's collection.
  assert.ok(Date.now() - started < 8000, 'fails at the deadline, not later');
  await assertAllGone([error.data.pid as number]);
});

test('neverAnswersInitialize: an aborted signal ends the start as startup_timeout (cancelled)', async (t) => {
  const spec = fixtureSpec(t, 'neverAnswersInitialize.cjs');
  const controller = new AbortController();
  const failing = startMustFail(spec, { signal: controller.signal, budgetMs: 10_000 });
  setTimeout(() => controller.abort(), 300);
  const { error } = await failing;
  assert.equal(error.code, 'startup_timeout');
  assert.equal(error.data.cancelled, true);
  assert.match(error.message, /start was cancelled during initialize/);
  await assertAllGone([error.data.pid as number]);
});

test('needsEnv: a missing host variable is missing_env naming it (never a value); mapped, it is seen', async (t) => {
  assert.throws(
    () =>
      buildServiceEnv({
        serviceName: 'needs-env',
        hostEnv: { PATH: '/usr/bin', OTHER: 'hunter2' },
        envFrom: { API_KEY: 'SE_TEST_API_KEY' },
        workspace: '/w',
        sourceDir: '/s',
        projectRoot: '/p',
        marker: 'm',
      }),
    (error) => {
      assert.ok(isSdkError(error));
      assert.equal(error.code, 'missing_env');
      assert.match(error.message, /service "needs-env".*SE_TEST_API_KEY \(for API_KEY\)/);
      assert.ok(!JSON.stringify(error).includes('hunter2'));
      return true;
    },
  );
  const spec = fixtureSpec(t, 'needsEnv.cjs', {
    hostEnv: { ...process.env, SE_TEST_API_KEY: 'k-123' },
    envFrom: { API_KEY: 'SE_TEST_API_KEY' },
  });
  const { session } = await startService(t, spec);
  const env = JSON.parse(((await session.callTool('env', {})).content[0] as { text: string }).text);
  assert.equal(env.API_KEY, 'k-123');
  assert.equal(env.SE_TEST_API_KEY, undefined);
});

test('needsEnv without its variable in the env: service_exited with code 2 and the reason on stderr', async (t) => {
  const spec = fixtureSpec(t, 'needsEnv.cjs');
  const { error } = await startMustFail(spec);
  assert.equal(error.code, 'service_exited');
  assert.equal(error.data.exitCode, 2);
  assert.deepEqual(error.data.stderrTail, ['API_KEY is not set']);
});

test('writesInvalidUtf8: protocol_error naming the bytes, and the (still running) process is collected', async (t) => {
  const spec = fixtureSpec(t, 'writesInvalidUtf8.cjs');
  const { error } = await startMustFail(spec);
  assertDiagnostics(error, spec);
  assert.equal(error.code, 'protocol_error');
  assert.match(error.message, /stdout is not UTF-8/);
  await assertAllGone([error.data.pid as number]);
});

test('a command that does not exist: command_not_found before anything is spawned', async (t) => {
  const spec = fixtureSpec(t, 'plain.cjs', { command: 'scienceevolve-no-such-command' });
  const { error, events } = await startMustFail(spec);
  assertDiagnostics(error, spec);
  assert.equal(error.code, 'command_not_found');
  assert.match(error.message, /command "scienceevolve-no-such-command" is not on the service's PATH/);
  assert.equal(error.data.pid, undefined);
  assert.deepEqual(states(events), ['starting', 'failed', 'stopping', 'exited']);
  const asPath = fixtureSpec(t, 'plain.cjs', { command: './no/such/node' });
  const second = await startMustFail(asPath);
  assert.equal(second.error.code, 'command_not_found');
  assert.match(second.error.message, /does not exist or is not executable/);
});

test('a command found on the service PATH is launched', async (t) => {
  const nodeDir = process.execPath.slice(0, process.execPath.lastIndexOf('/'));
  const spec = fixtureSpec(t, 'plain.cjs', { command: 'node', hostEnv: { PATH: nodeDir } });
  const viaPath = { ...spec, command: process.execPath.slice(nodeDir.length + 1) };
  const { session } = await startService(t, viaPath);
  assert.equal(session.state, 'ready');
  await waitFor(() => session.catalog.tools.length > 0);
});
