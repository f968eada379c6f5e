/**
 * Services get `NODE_COMPILE_CACHE=<dataDir>/cache/compile` (issue 14): outside the invocation's copy, not
 * mappable or overridable through `envFrom`; on a runtime with a compile cache (Node ≥ 22.1) the service
 * fills it, and on one without (Node 20) the variable is ignored and the service starts as before.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import nodeModule from 'node:module';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { startInvocation } from '../../../packages/sdk/src/invocation/invocation.ts';
import { buildServiceEnv, serviceCompileCacheDir } from '../../../packages/sdk/src/processes/serviceEnv.ts';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';
import { readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { validateWorkflow } from '../../../packages/sdk/src/workflow/validate.ts';
import { assertAllGone, assertNoMarkedProcess, fixtureDefinition, killMarked, tempDir } from './helpers.ts';

/** Whether this runtime has a module compile cache (Node ≥ 22.1). */
const HAS_COMPILE_CACHE = typeof (nodeModule as { enableCompileCache?: unknown }).enableCompileCache === 'function';

/** Every file under `dir` (recursive), or [] when it does not exist. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
}

test('buildServiceEnv: envFrom cannot set or override NODE_COMPILE_CACHE', () => {
  const base = { serviceName: 'svc', workspace: '/ws', sourceDir: '/src', projectRoot: '/proj', marker: 'se1:p:1:2:i' };
  const hostEnv = { EVIL: '/tmp/evil-cache', NODE_COMPILE_CACHE: '/tmp/host-cache' };
  const envFrom = { NODE_COMPILE_CACHE: 'EVIL' };
  const given = buildServiceEnv({ ...base, hostEnv, envFrom, compileCacheDir: '/data/cache/compile' });
  assert.equal(given.NODE_COMPILE_CACHE, '/data/cache/compile');
  // Without a directory the variable stays unset: neither envFrom nor the host's own value gets through.
  const unset = buildServiceEnv({ ...base, hostEnv, envFrom });
  assert.equal(unset.NODE_COMPILE_CACHE, undefined);
  assert.equal(serviceCompileCacheDir('/data'), join('/data', 'cache', 'compile'));
});

test('validation refuses envFrom NODE_COMPILE_CACHE as a reserved name', () => {
  const result = validateWorkflow({
    agents: { main: { mcpServers: [{ name: 's', project: 's' }] } },
    mcpDefinitions: {
      s: { entrypoint: 'server.cjs', files: { 'server.cjs': '//\n' }, envFrom: { NODE_COMPILE_CACHE: 'X' } },
    },
  });
  assert.equal(result.ok, false);
  assert.ok(
    result.errors.some((e) => e.code === 'reserved_name' && e.path === '$.mcpDefinitions.s.envFrom.NODE_COMPILE_CACHE'),
    JSON.stringify(result.errors),
  );
});

test(`a service gets the data dir's compile cache, outside its copy (${HAS_COMPILE_CACHE ? 'filled on this runtime' : 'ignored on this runtime'})`, async (t) => {
  const dataDir = tempDir(t);
  const workspace = tempDir(t, 'se-ws-');
  const project = `cc${Date.now()}`;
  t.after(() => killMarked(project));
  await loadWorkflow({
    dataDir,
    project,
    workflow: {
      agents: { main: { mcpServers: [{ name: 'plain', project: 'plain' }] } },
      // Opted out of the sandbox: a sandboxed service gets the cache read-only (so one service cannot plant
      // compiled code another loads) and never fills it; this test is about an unsandboxed one filling it.
      mcpDefinitions: { plain: { ...fixtureDefinition('plain.cjs'), sandbox: false } },
    },
  });
  const paths = await openProject(dataDir, project);
  const version = (await readAccepted(paths))!;
  const cacheDir = serviceCompileCacheDir(paths.dataDir);

  const pids: number[] = [];
  for (const runId of ['r1', 'r2']) {
    const inv = await startInvocation({ paths, version, agent: 'main', runId, workspace, graceMs: 300 });
    t.after(() => inv.close());
    const session = inv.sessions[0]!;
    pids.push((session as unknown as { pid: number }).pid);
    const result = await session.callTool('whereAmI', {});
    const seen = JSON.parse((result.content[0] as { text: string }).text) as { env: Record<string, string> };
    assert.equal(seen.env.NODE_COMPILE_CACHE, cacheDir);
    assert.ok(relative(inv.runtimePath, cacheDir).startsWith('..'), 'the cache is outside the invocation');
    await inv.close();
  }
  await assertAllGone(pids);
  await assertNoMarkedProcess(project);

  const cached = filesUnder(cacheDir);
  if (HAS_COMPILE_CACHE) {
    assert.ok(cached.length > 0, `the services wrote their compile cache under ${cacheDir}`);
  } else {
    // Node 20 has no compile cache: the variable is inert, and the services above started as ever.
    assert.deepEqual(cached, []);
  }
});
