/**
 * Both protocol eras (SPEC §7): a service written with the v2 SDK that speaks only 2026-07-28 lists and
 * calls through the stdio and HTTP faces; the era of a digest is negotiated once, remembered in the data
 * dir, and later starts connect in it without a probe; a damaged cache file is ignored and rewritten.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { createSurface } from '../../../packages/sdk/src/surface/surface.js';
import { fileEraMemory } from '../../../packages/sdk/src/invocation/eraFile.js';
import type { ServiceEvent } from '../../../packages/sdk/src/sessions/serviceEvents.js';
import type { StdioServiceSpec } from '../../../packages/sdk/src/sessions/stdioLaunch.js';
import { faceClient } from '../faces/faceClients.js';
import { assertAllGone, fixture, fixtureSpec, startMustFail, startService, tempDir, waitFor } from './helpers.js';

/** `spec` with its era remembered in the file `path`. */
function remembering(spec: StdioServiceSpec, path: string): StdioServiceSpec & { eraPath: string } {
  return { ...spec, eraMemory: fileEraMemory(path, spec.digest), eraPath: path };
}

/** A spec whose entry imports the v2 server and zod by absolute path and serves the modern fixture. */
function modernSpec(
  t: TestContext,
  extraArgs: string[] = [],
): { spec: StdioServiceSpec & { eraPath: string }; log: string } {
  const dir = tempDir(t);
  const entry = join(dir, 'entry.mjs');
  const log = join(dir, 'starts.log');
  writeFileSync(log, '');
  writeFileSync(
    entry,
    [
      `import { McpServer } from ${JSON.stringify(import.meta.resolve('@modelcontextprotocol/server'))};`,
      `import { serveStdio } from ${JSON.stringify(import.meta.resolve('@modelcontextprotocol/server/stdio'))};`,
      `import { z } from ${JSON.stringify(import.meta.resolve('zod'))};`,
      `import { serveModern } from ${JSON.stringify(new URL(`file://${fixture('speaksModernEra.mjs')}`).href)};`,
      'serveModern({ McpServer, serveStdio, z });',
      '',
    ].join('\n'),
  );
  const base = fixtureSpec(t, 'plain.cjs', { serviceName: 'modern', args: [log, ...extraArgs] });
  return {
    spec: remembering({ ...base, entrypointPath: entry }, join(dir, 'cache', 'eras', `${base.digest}.json`)),
    log,
  };
}

function readyOf(events: ServiceEvent[]): Extract<ServiceEvent, { type: 'service.ready' }> {
  const ready = events.find((e) => e.type === 'service.ready');
  assert.ok(ready, 'a service.ready event');
  return ready as Extract<ServiceEvent, { type: 'service.ready' }>;
}

function textOf(result: { content?: unknown }): string {
  const block = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  return block?.type === 'text' ? (block.text ?? '') : '';
}

test('a 2026-07-28 service lists and calls through both faces; its second start connects without a probe', async (t) => {
  const { spec, log } = modernSpec(t);
  const first = await startService(t, spec);
  assert.equal(first.session.catalog.protocolVersion, '2026-07-28');
  assert.deepEqual(
    first.session.catalog.tools.map((tool) => tool.name),
    ['echo', 'add_tool'],
  );
  assert.equal(readyOf(first.events).era, 'modern');
  assert.equal(readyOf(first.events).eraSource, 'negotiated');
  const cached = JSON.parse(readFileSync(spec.eraPath, 'utf8'));
  assert.equal(cached.era, 'modern');
  assert.equal(cached.digest, spec.digest);

  const surface = createSurface([first.session]);
  for (const kind of ['stdio 2025-11-25', 'stdio 2026-07-28', 'http 2026-07-28'] as const) {
    const client = await faceClient(t, surface, kind);
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((tool) => [tool.name, tool.title]),
      [
        ['modern__echo', 'Echo'],
        ['modern__add_tool', undefined],
      ],
      kind,
    );
    const result = await client.callTool({ name: 'modern__echo', arguments: { text: kind } });
    assert.equal(textOf(result), `echo: ${kind}`, kind);
    await client.close();
  }
  await first.session.close();
  await assertAllGone([first.session.pid]);
  assert.deepEqual(readFileSync(log, 'utf8').split('\n').filter(Boolean), ['start', 'discover']);

  const second = await startService(t, spec);
  assert.equal(readyOf(second.events).era, 'modern');
  assert.equal(readyOf(second.events).eraSource, 'remembered');
  const called = await second.session.callTool('echo', { text: 'again' });
  assert.equal(textOf(called as { content?: unknown }), 'echo: again');
  await second.session.close();
  await assertAllGone([second.session.pid]);
  // One spawn per start and no second probe: the remembered verdict was adopted.
  assert.deepEqual(readFileSync(log, 'utf8').split('\n').filter(Boolean), ['start', 'discover', 'start']);
});

test('a 2026-07-28 service that adds a tool is heard on its subscriptions/listen stream', async (t) => {
  const { spec } = modernSpec(t);
  const { session, events } = await startService(t, spec, { listChangeDebounceMs: 0 });
  assert.equal(session.catalog.protocolVersion, '2026-07-28');
  assert.equal(
    events.some((e) => e.type === 'service.catalog_refresh_failed'),
    false,
    'the listen stream was accepted',
  );
  const surface = createSurface([session]);
  t.after(() => surface.close());
  const added = await session.callTool('add_tool', { name: 'late' });
  assert.equal(textOf(added as { content?: unknown }), 'added late');
  const change = await waitFor(() =>
    events.find(
      (e): e is Extract<ServiceEvent, { type: 'service.catalog_changed' }> => e.type === 'service.catalog_changed',
    ),
  );
  assert.deepEqual(change.added.tools, ['late']);
  assert.ok(surface.tools.some((tool) => tool.name === 'modern__late'));
  const called = await surface.callTool('modern__late', {});
  assert.equal(textOf(called), 'I am late');
  await surface.close();
  await session.close();
  await assertAllGone([session.pid]);
});

test("a 2026-07-28 service's lists are listed again when their ttlMs has passed", async (t) => {
  const { spec, log } = modernSpec(t, ['200']);
  const { session } = await startService(t, spec, { listTtlFloorMs: 50 });
  assert.deepEqual(session.catalog.freshness?.tools, { ttlMs: 200, cacheScope: 'private' });
  const lists = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line === 'tools/list').length;
  // Listed at start, then again each time the 200 ms have passed.
  await waitFor(() => (lists() >= 3 ? true : undefined), 5000);
  await session.close();
  await assertAllGone([session.pid]);
});

test('a 2025-11-25 service is negotiated once, then started in the legacy era without a probe', async (t) => {
  const base = fixtureSpec(t, 'plain.cjs');
  const spec = remembering(base, join(tempDir(t), 'eras', `${base.digest}.json`));
  const first = await startService(t, spec);
  assert.equal(first.session.catalog.protocolVersion, '2025-11-25');
  assert.equal(readyOf(first.events).era, 'legacy');
  assert.equal(readyOf(first.events).eraSource, 'negotiated');
  assert.equal(JSON.parse(readFileSync(spec.eraPath, 'utf8')).era, 'legacy');
  await first.session.close();

  const second = await startService(t, spec);
  assert.equal(readyOf(second.events).eraSource, 'remembered');
  assert.equal(second.session.catalog.protocolVersion, '2025-11-25');
  await second.session.close();
  await assertAllGone([first.session.pid, second.session.pid]);
});

test('a damaged era file is ignored, noted in service.ready, and rewritten', async (t) => {
  const { spec } = modernSpec(t);
  mkdirSync(dirname(spec.eraPath), { recursive: true });
  for (const damage of ['{"format":1,', JSON.stringify({ format: 1, digest: spec.digest, era: 'modern' })]) {
    writeFileSync(spec.eraPath, damage);
    const { session, events } = await startService(t, spec);
    assert.equal(readyOf(events).eraSource, 'damaged_cache');
    assert.equal(readyOf(events).era, 'modern');
    assert.equal(JSON.parse(readFileSync(spec.eraPath, 'utf8')).era, 'modern');
    await session.close();
    await assertAllGone([session.pid]);
  }
});

test('a 2025-11-25 service that never answers the probe is started in the legacy era after the probe timeout', async (t) => {
  const log = join(tempDir(t), 'starts.log');
  const base = fixtureSpec(t, 'reactsToDiscover.cjs', { args: ['silent', log] });
  const spec = remembering(base, join(tempDir(t), 'eras', `${base.digest}.json`));
  const first = await startService(t, spec, { eraProbeTimeoutMs: 300 });
  assert.equal(readyOf(first.events).era, 'legacy');
  assert.equal(first.session.catalog.protocolVersion, '2025-11-25');
  assert.equal(JSON.parse(readFileSync(spec.eraPath, 'utf8')).era, 'legacy');
  await first.session.close();
  await assertAllGone([first.session.pid]);
});

test('a service that exits at the probe is started again in the legacy era within the same start', async (t) => {
  const log = join(tempDir(t), 'starts.log');
  const base = fixtureSpec(t, 'reactsToDiscover.cjs', { args: ['exit', log] });
  const spec = remembering(base, join(tempDir(t), 'eras', `${base.digest}.json`));
  const first = await startService(t, spec);
  // Two processes in one start: the first exited at `server/discover`, the second got `initialize`.
  assert.deepEqual(readFileSync(log, 'utf8').split('\n').filter(Boolean), ['start', 'start']);
  assert.equal(first.session.catalog.protocolVersion, '2025-11-25');
  assert.equal(readyOf(first.events).era, 'legacy');
  assert.equal(readyOf(first.events).eraSource, 'negotiated');
  assert.equal(JSON.parse(readFileSync(spec.eraPath, 'utf8')).era, 'legacy');
  const exited = first.events.filter((e) => e.type === 'service.exited');
  assert.equal(exited.length, 1, 'the first process is journaled as exited');
  const firstPid = exited[0]!.pid!;
  assert.notEqual(firstPid, first.session.pid);
  await first.session.close();
  await assertAllGone([firstPid, first.session.pid]);

  // The next start sends `initialize` at once: one process.
  const second = await startService(t, spec);
  assert.equal(readyOf(second.events).eraSource, 'remembered');
  await second.session.close();
  await assertAllGone([second.session.pid]);
  assert.deepEqual(readFileSync(log, 'utf8').split('\n').filter(Boolean), ['start', 'start', 'start']);
});

test('a remembered era that no longer connects is forgotten', async (t) => {
  const { spec } = modernSpec(t);
  mkdirSync(dirname(spec.eraPath), { recursive: true });
  // A wrong verdict (the service refuses a 2025-era opening): this start fails, the next negotiates.
  writeFileSync(
    spec.eraPath,
    JSON.stringify({
      format: 2,
      digest: spec.digest,
      era: 'legacy',
      listed: { tools: 0, resources: 0, resourceTemplates: 0, prompts: 0 },
    }),
  );
  const { error } = await startMustFail(spec);
  await assertAllGone([(error.data as { pid: number }).pid]);
  assert.equal(existsSync(spec.eraPath), false);
  const { session, events } = await startService(t, spec);
  assert.equal(readyOf(events).eraSource, 'negotiated');
  assert.equal(readyOf(events).era, 'modern');
  await session.close();
  await assertAllGone([session.pid]);
});

test('a false era record (modern, no capabilities) is a hint: the start that lists less negotiates again, the tools come back, and the record is rewritten', async (t) => {
  const { spec, log } = modernSpec(t);
  const first = await startService(t, spec);
  const tools = first.session.catalog.tools.map((tool) => tool.name);
  assert.deepEqual(tools, ['echo', 'add_tool']);
  await first.session.close();
  await assertAllGone([first.session.pid]);
  const negotiated = JSON.parse(readFileSync(spec.eraPath, 'utf8'));
  assert.deepEqual(negotiated.listed, { tools: 2, resources: 0, resourceTemplates: 0, prompts: 0 });

  // A well-formed false verdict, as a service running as the user can write it: `modern` with empty
  // capabilities, so a start that believed it would list nothing and "succeed" with 0 tools for good.
  writeFileSync(
    spec.eraPath,
    JSON.stringify({ ...negotiated, era: 'modern', discover: { ...negotiated.discover, capabilities: {} } }),
  );
  const second = await startService(t, spec);
  assert.deepEqual(
    second.session.catalog.tools.map((tool) => tool.name),
    tools,
    'the tools come back',
  );
  assert.equal(readyOf(second.events).eraSource, 'damaged_cache');
  // The process that believed the record was collected (no failure reported), and a second one negotiated.
  const collected = second.events.filter((e) => e.type === 'service.exited');
  assert.equal(collected.length, 1);
  assert.equal((collected[0] as { expected: boolean }).expected, true);
  assert.equal(
    second.events.some((e) => e.type === 'service.failed'),
    false,
  );
  const rewritten = JSON.parse(readFileSync(spec.eraPath, 'utf8'));
  assert.deepEqual(rewritten.discover.capabilities, negotiated.discover.capabilities, 'the record is rewritten');
  assert.deepEqual(rewritten.listed, negotiated.listed);
  await second.session.close();

  // The second start probed once more (the process that believed the record sent nothing: it may be
  // collected before it even logged its start).
  const lines = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  assert.equal(lines().filter((line) => line === 'discover').length, 2);
  const before = lines().length;

  // The next start believes the rewritten record again: one spawn, no probe.
  const third = await startService(t, spec);
  assert.equal(readyOf(third.events).eraSource, 'remembered');
  assert.equal(third.session.catalog.tools.length, 2);
  await third.session.close();
  assert.deepEqual(lines().slice(before), ['start']);
  await assertAllGone([
    first.session.pid,
    (collected[0] as { pid: number }).pid,
    second.session.pid,
    third.session.pid,
  ]);
});
