import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyWorkflow } from '../../../packages/sdk/src/reconfigure/applyWorkflow.ts';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { listVersions, readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';

const SERVER = "require('node:process').stdin.resume();";

function base(allow = true, orchestration: Record<string, unknown> = {}) {
  return {
    orchestration: {
      allowMainReconfiguration: allow,
      allowedRemoteUrls: ['http://127.0.0.1:9/'],
      ...orchestration,
    } as Record<string, unknown>,
    agents: {
      main: { mcpServers: [{ name: 'tools', project: 'tools' }] },
      analyst: { mcpServers: [] as Array<Record<string, string>> },
    },
    mcpDefinitions: { tools: { entrypoint: 'server.cjs', files: { 'server.cjs': SERVER } } },
  };
}

async function project(
  t: { after: (fn: () => Promise<void>) => void },
  allow = true,
  orchestration: Record<string, unknown> = {},
) {
  const dataDir = await mkdtemp(join(tmpdir(), 'se-apply-'));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  await loadWorkflow({ dataDir, project: 'p', workflow: base(allow, orchestration) });
  return openProject(dataDir, 'p');
}

/** An operator setting that lets Main add agents (SPEC §9): each new agent gets this harness. */
const SCRIPTED_DEFAULT = { defaultHarness: { type: 'scripted' } };

function errorsOf(error: unknown): Array<{ code: string; path: string }> {
  return ((error as { data?: { errors?: Array<{ code: string; path: string }> } }).data?.errors ?? []).map((e) => ({
    code: e.code,
    path: e.path,
  }));
}

test('Main adds a new service and assigns it: one new version with what changed', async (t) => {
  const paths = await project(t);
  const next = base();
  (next.mcpDefinitions as Record<string, unknown>).search = { entrypoint: 's.cjs', files: { 's.cjs': SERVER } };
  next.agents.analyst.mcpServers.push({ name: 'search', project: 'search' });
  const result = await applyWorkflow(paths, next);
  assert.deepEqual(result, { version: 2, changedMcps: ['search'], changedAgents: ['analyst'] });
  assert.equal((await readAccepted(paths))?.by, 'main');
  assert.deepEqual(await listVersions(paths), [1, 2]);
});

test('omitting mcpDefinitions keeps the accepted table', async (t) => {
  const paths = await project(t);
  const next: Record<string, unknown> = base();
  delete next.mcpDefinitions;
  (next.agents as ReturnType<typeof base>['agents']).analyst.mcpServers.push({ name: 'tools2', project: 'tools' });
  const result = await applyWorkflow(paths, next);
  assert.deepEqual(result.changedAgents, ['analyst']);
  assert.ok((await readAccepted(paths))?.workflow.mcpDefinitions.tools);
});

test('an unchanged snapshot keeps the version', async (t) => {
  const paths = await project(t);
  assert.deepEqual(await applyWorkflow(paths, base()), { version: 1, changedMcps: [], changedAgents: [] });
});

test('refused cases, each with its code and path, nothing written', async (t) => {
  const cases: Array<{
    name: string;
    mutate: (w: ReturnType<typeof base>) => void;
    expect: Array<{ code: string; path: string }>;
  }> = [
    {
      name: 'rewriting an accepted definition',
      mutate: (w) => {
        w.mcpDefinitions.tools.files['server.cjs'] = `${SERVER}\n// v2`;
      },
      expect: [{ code: 'immutable_definition', path: '$.mcpDefinitions.tools' }],
    },
    {
      name: 'removing an accepted definition (and its reference)',
      mutate: (w) => {
        (w as { mcpDefinitions: Record<string, unknown> }).mcpDefinitions = {};
        w.agents.main.mcpServers = [];
      },
      expect: [{ code: 'immutable_definition', path: '$.mcpDefinitions.tools' }],
    },
    {
      name: 'a remote URL outside allowedRemoteUrls',
      mutate: (w) => {
        w.agents.analyst.mcpServers.push({ name: 'far', url: 'http://example.com/mcp' });
      },
      expect: [{ code: 'remote_not_allowed', path: '$.agents.analyst.mcpServers[0].url' }],
    },
    {
      name: 'changing orchestration',
      mutate: (w) => {
        (w.orchestration.allowedRemoteUrls as string[]).push('http://evil.example/');
      },
      expect: [{ code: 'reconfiguration_not_allowed', path: '$.orchestration' }],
    },
    {
      name: 'a reference to a definition that does not exist',
      mutate: (w) => {
        w.agents.analyst.mcpServers.push({ name: 'x', project: 'nope' });
      },
      expect: [{ code: 'unknown_reference', path: '$.agents.analyst.mcpServers[0].project' }],
    },
    {
      name: 'the reserved catalog name',
      mutate: (w) => {
        w.agents.analyst.mcpServers.push({ name: 'scienceevolve', project: 'tools' });
      },
      expect: [{ code: 'reserved_name', path: '$.agents.analyst.mcpServers[0].name' }],
    },
  ];
  const paths = await project(t);
  for (const c of cases) {
    const next = base();
    c.mutate(next);
    await assert.rejects(applyWorkflow(paths, next), (error: unknown) => {
      assert.equal((error as { code: string }).code, 'invalid_workflow', c.name);
      assert.deepEqual(errorsOf(error), c.expect, c.name);
      return true;
    });
  }
  assert.deepEqual(await listVersions(paths), [1]);
});

test('a remote URL matching allowedRemoteUrls is accepted', async (t) => {
  const paths = await project(t);
  const next = base();
  next.agents.analyst.mcpServers.push({ name: 'near', url: 'http://127.0.0.1:9/mcp' });
  assert.equal((await applyWorkflow(paths, next)).version, 2);
});

test('Main may not apply when the workflow does not allow it', async (t) => {
  const paths = await project(t, false);
  await assert.rejects(applyWorkflow(paths, base(false)), { code: 'reconfiguration_not_allowed' });
});

test('the operator may rewrite and remove definitions within the general rules', async (t) => {
  const paths = await project(t);
  const next = base();
  next.mcpDefinitions.tools.files['server.cjs'] = `${SERVER}\n// v2`;
  assert.deepEqual(await applyWorkflow(paths, next, { by: 'operator' }), {
    version: 2,
    changedMcps: ['tools'],
    changedAgents: ['main'],
  });
});

test('two concurrent applies by Main: one lands, the other answers workflow_conflict with the version it lost to', async (t) => {
  const paths = await project(t);
  const proposal = (name: string) => {
    const next = base();
    (next.mcpDefinitions as Record<string, unknown>)[name] = {
      entrypoint: 's.cjs',
      files: { 's.cjs': `${SERVER}//${name}` },
    };
    next.agents.analyst.mcpServers.push({ name, project: name });
    return next;
  };
  const results = await Promise.allSettled([
    applyWorkflow(paths, proposal('left')),
    applyWorkflow(paths, proposal('right')),
  ]);
  const won = results.filter((r) => r.status === 'fulfilled');
  const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  assert.equal(won.length, 1);
  assert.equal(lost.length, 1);
  assert.equal(lost[0]!.reason.code, 'workflow_conflict');
  assert.equal(lost[0]!.reason.data.version, 2);
  assert.match(lost[0]!.reason.message, /changed to version 2 while this snapshot was prepared from version 1/);
  assert.deepEqual(await listVersions(paths), [1, 2]);
});

test('Main adds a service and an agent named "constructor" (valid names): a new version, never internal', async (t) => {
  const paths = await project(t, true, SCRIPTED_DEFAULT);
  const next = base(true, SCRIPTED_DEFAULT);
  // Object literals: own properties named "constructor".
  const snapshot = {
    ...next,
    agents: { ...next.agents, constructor: { mcpServers: [{ name: 'c', project: 'constructor' }] } },
    mcpDefinitions: { ...next.mcpDefinitions, constructor: { entrypoint: 's.cjs', files: { 's.cjs': SERVER } } },
  };
  const result = await applyWorkflow(paths, snapshot);
  assert.deepEqual(result, { version: 2, changedMcps: ['constructor'], changedAgents: ['constructor'] });
});
