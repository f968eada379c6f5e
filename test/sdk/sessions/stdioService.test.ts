/**
 * A project service's life with real processes: start to ready with its catalog, calls, the place and
 * environment SPEC §5 promises, stop, and proof that nothing survives.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { MARKER_ENV } from '@scienceevolve/supervisor/procfs';
import { DEFAULT_GRACE_MS } from '@scienceevolve/supervisor/terminate';
import type { ProcessRegistry } from '../../../packages/sdk/src/processes/processRegistry.js';
import { DEFAULT_FORWARD_TIMEOUT_MS } from '../../../packages/sdk/src/sessions/forwarding.js';
import { serviceNodePath } from '../../../packages/sdk/src/processes/serviceEnv.js';
import { DEFAULT_STARTUP_BUDGET_MS } from '../../../packages/sdk/src/sessions/startBudget.js';
import { STDERR_LOG_CAP_BYTES } from '../../../packages/sdk/src/processes/stderrLog.js';
import { startStdioService } from '../../../packages/sdk/src/sessions/stdioService.js';
import { assertAllGone, eventTypes, fixtureSpec, startService, states } from './helpers.js';

test('plain: ready with every list, serves calls, stops, and its leader is gone', async (t) => {
  const spec = fixtureSpec(t, 'plain.cjs', { serviceName: 'search' });
  const { session, events } = await startService(t, { ...spec, aliases: ['search', 'search-alias'] });

  assert.equal(session.state, 'ready');
  assert.equal(session.kind, 'project');
  assert.deepEqual(session.aliases, ['search', 'search-alias']);
  assert.equal(session.pgid, session.pid, 'the leader leads its own group');
  assert.deepEqual(session.catalog.tools.map((x) => x.name).sort(), ['echo', 'whereAmI']);
  assert.deepEqual(
    session.catalog.resources.map((r) => r.uri),
    ['fixture://readme'],
  );
  assert.deepEqual(
    session.catalog.resourceTemplates.map((r) => r.uriTemplate),
    ['fixture://items/{id}'],
  );
  assert.deepEqual(
    session.catalog.prompts.map((p) => p.name),
    ['greet'],
  );
  assert.equal(session.catalog.serverInfo?.name, 'plain');
  assert.ok(session.catalog.protocolVersion);

  const echo = await session.callTool('echo', { text: 'hi' });
  assert.deepEqual(echo.content, [{ type: 'text', text: 'hi' }]);
  const readme = await session.readResource('fixture://readme');
  assert.equal((readme.contents[0] as { text: string }).text, 'readme of plain');
  const item = await session.readResource('fixture://items/42');
  assert.equal((item.contents[0] as { text: string }).text, 'item 42');
  const prompt = await session.getPrompt('greet', { who: 'Ada' });
  assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'Hello Ada' });

  assert.deepEqual(states(events), ['starting', 'initializing', 'listing', 'ready']);
  const ready = events.find((e) => e.type === 'service.ready');
  assert.ok(ready && ready.type === 'service.ready');
  assert.equal(ready.tools, 2);
  assert.equal(ready.pid, session.pid);
  assert.equal(ready.log, spec.stderrLogPath);

  await session.close();
  await session.close(); // idempotent
  assert.equal(session.state, 'exited');
  await assertAllGone([session.pid]);
  assert.deepEqual(states(events), ['starting', 'initializing', 'listing', 'ready', 'stopping', 'exited']);
  const exited = events.find((e) => e.type === 'service.exited');
  assert.ok(exited && exited.type === 'service.exited');
  assert.equal(exited.expected, true);
  assert.equal(exited.forced, false);
  assert.deepEqual(exited.survivors, []);
  assert.deepEqual(eventTypes(events), ['service.ready', 'service.exited']);
  // Events carry ids and paths, never environment values.
  assert.ok(!JSON.stringify(events).includes(spec.env.PATH ?? '\0'));
});

test('plain: cwd, __dirname, SCIENCEEVOLVE_*, NODE_PATH are as SPEC §5.3 says; an unmapped host variable is invisible', async (t) => {
  const hostEnv = { ...process.env, SE_TEST_UNMAPPED: 'secret-unmapped', SE_TEST_MAPPED: 'mapped-value' };
  const spec = fixtureSpec(t, 'plain.cjs', { hostEnv, envFrom: { MAPPED: 'SE_TEST_MAPPED' } });
  const { session } = await startService(t, spec);
  const result = await session.callTool('whereAmI', {});
  const seen = JSON.parse((result.content[0] as { text: string }).text) as {
    cwd: string;
    dirname: string;
    env: Record<string, string>;
  };
  assert.equal(seen.cwd, spec.cwd);
  assert.equal(seen.dirname, dirname(spec.entrypointPath));
  assert.equal(seen.env.SCIENCEEVOLVE_WORKSPACE, spec.cwd);
  assert.equal(seen.env.SCIENCEEVOLVE_MCP_SOURCE_DIR, spec.env.SCIENCEEVOLVE_MCP_SOURCE_DIR);
  assert.equal(seen.env.SCIENCEEVOLVE_PROJECT_ROOT, spec.env.SCIENCEEVOLVE_PROJECT_ROOT);
  assert.equal(seen.env[MARKER_ENV], spec.marker);
  assert.equal(seen.env.NODE_PATH, serviceNodePath());
  assert.equal(seen.env.MAPPED, 'mapped-value');
  assert.equal(seen.env.SE_TEST_UNMAPPED, undefined);
  assert.equal(seen.env.SE_TEST_MAPPED, undefined);
  const allowed = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'MAPPED', 'NODE_PATH', MARKER_ENV]);
  const extra = Object.keys(seen.env).filter((k) => !allowed.has(k) && !k.startsWith('SCIENCEEVOLVE_'));
  assert.deepEqual(extra, []);
});

test('the defaults are pinned: 2 s grace, 60 s forwarding, 35 s startup budget, 1 MiB stderr log', () => {
  assert.equal(DEFAULT_GRACE_MS, 2000);
  assert.equal(DEFAULT_FORWARD_TIMEOUT_MS, 60_000);
  assert.equal(DEFAULT_STARTUP_BUDGET_MS, 35_000);
  assert.equal(STDERR_LOG_CAP_BYTES, 1024 * 1024);
});

// Slow on purpose (about 2 s): it waits out the default grace once.
test('without graceMs, a service that ignores SIGTERM gets the default 2 s grace, then SIGKILL', async (t) => {
  const { graceMs: _omitted, ...spec } = fixtureSpec(t, 'ignoresSigterm.cjs');
  const { session, events } = await startService(t, spec);
  const started = Date.now();
  await session.close();
  const took = Date.now() - started;
  assert.ok(took >= 1900 && took < 4000, `close took ${took} ms`);
  await assertAllGone([session.pid]);
  const exited = events.find((e) => e.type === 'service.exited');
  assert.ok(exited?.type === 'service.exited' && exited.forced && exited.signal === 'SIGKILL');
});

test('a start without deadline or signal has the 35 s default budget', async (t) => {
  const spec = fixtureSpec(t, 'plain.cjs');
  const session = await startStdioService(spec);
  t.after(() => session.close());
  assert.equal(session.state, 'ready');
});

test('the registry hears intent before the spawn, the group right after, release after collection', async (t) => {
  const calls: string[] = [];
  const registry: ProcessRegistry = {
    intent: async (marker) => {
      calls.push(`intent ${marker === spec.marker}`);
    },
    register: (pgid) => calls.push(`register ${pgid}`),
    release: (pgid) => calls.push(`release ${pgid}`),
  };
  const spec = fixtureSpec(t, 'plain.cjs');
  const { session } = await startService(t, { ...spec, registry });
  assert.deepEqual(calls, ['intent true', `register ${session.pgid}`]);
  await session.close();
  assert.deepEqual(calls, ['intent true', `register ${session.pgid}`, `release ${session.pgid}`]);
});

test('stderr goes to the log file, and its last lines are kept', async (t) => {
  const spec = fixtureSpec(t, 'ignoresSigterm.cjs');
  const { session } = await startService(t, spec);
  await session.close();
  assert.match(readFileSync(spec.stderrLogPath, 'utf8'), /SIGTERM ignored/);
  assert.deepEqual(session.stderrTail(), ['SIGTERM ignored']);
});
