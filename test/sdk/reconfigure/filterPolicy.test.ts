/**
 * Main never widens the operator's tool filters (security finding 5): a snapshot that drops the exclude of
 * Main's own entry or of a worker's, or adds an unfiltered alias of a filtered service (in the same agent,
 * in another, through a copy of the definition, through a respelled remote URL), is refused with
 * `filter_not_allowed` at the entry's `tools`; a narrowing change is accepted. The run-level proof (the
 * worker never offers the excluded tool) is in test/sdk/engine/toolFilters.test.ts.
 */
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
const REMOTE = 'https://tools.example/mcp?token=t0';

type Entry = { name: string; project?: string; url?: string; tools?: Record<string, string[]> };
type Doc = {
  orchestration: Record<string, unknown>;
  agents: Record<string, { harness?: unknown; mcpServers: Entry[] }>;
  mcpDefinitions: Record<string, Record<string, unknown>>;
};

/** Main may use every tool but `secret*`; the analyst neither those nor `write`; the reporter has none. */
function base(): Doc {
  return {
    orchestration: {
      allowMainReconfiguration: true,
      defaultHarness: { type: 'scripted' },
      allowedRemoteUrls: ['https://tools.example/mcp'],
    },
    agents: {
      main: { mcpServers: [{ name: 'tools', project: 'tools', tools: { exclude: ['secret*'] } }] },
      analyst: {
        harness: { type: 'scripted' },
        mcpServers: [
          { name: 'tools', project: 'tools', tools: { exclude: ['secret*', 'write'] } },
          { name: 'far', url: REMOTE, tools: { include: ['read_*'] } },
        ],
      },
      reporter: { harness: { type: 'scripted' }, mcpServers: [] },
    },
    mcpDefinitions: { tools: { entrypoint: 'server.cjs', files: { 'server.cjs': SERVER } } },
  };
}

async function project(t: { after: (fn: () => Promise<void>) => void }) {
  const dataDir = await mkdtemp(join(tmpdir(), 'se-filters-'));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  await loadWorkflow({ dataDir, project: 'p', workflow: base() });
  return openProject(dataDir, 'p');
}

/** The `{code, path}` of each issue of the `invalid_workflow` error `promise` rejects with. */
async function refusal(promise: Promise<unknown>): Promise<Array<{ code: string; path: string; message: string }>> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: string; data?: { errors?: Array<{ code: string; path: string; message: string }> } };
    assert.equal(e.code, 'invalid_workflow', String(error));
    return e.data?.errors ?? [];
  }
  assert.fail('the snapshot was accepted');
}

async function refusedAt(promise: Promise<unknown>): Promise<string[]> {
  const issues = await refusal(promise);
  for (const issue of issues) assert.equal(issue.code, 'filter_not_allowed', issue.message);
  return issues.map((i) => i.path);
}

test("Main dropping its own entry's exclude is refused, naming the rule and the path", async (t) => {
  const paths = await project(t);
  const widened: Array<Record<string, string[]> | undefined> = [
    undefined,
    { exclude: [] },
    { exclude: ['secret_key'] },
    { include: ['*'] },
  ];
  for (const tools of widened) {
    const next = base();
    const entry = next.agents.main!.mcpServers[0]!;
    if (tools === undefined) delete entry.tools;
    else entry.tools = tools;
    const issues = await refusal(applyWorkflow(paths, next));
    assert.deepEqual(
      issues.map(({ code, path }) => ({ code, path })),
      [{ code: 'filter_not_allowed', path: '$.agents.main.mcpServers[0].tools' }],
      JSON.stringify(tools),
    );
    assert.match(issues[0]!.message, /operator's filter of "tools" .*secret\*.*never widened/);
  }
  assert.deepEqual(await listVersions(paths), [1]);
});

test("Main dropping a worker's exclude (or a remote's include) is refused", async (t) => {
  const paths = await project(t);
  const next = base();
  next.agents.analyst!.mcpServers[0]!.tools = { exclude: ['secret*'] };
  next.agents.analyst!.mcpServers[1]!.tools = { include: ['read_*', 'delete'] };
  assert.deepEqual(await refusedAt(applyWorkflow(paths, next)), [
    '$.agents.analyst.mcpServers[0].tools',
    '$.agents.analyst.mcpServers[1].tools',
  ]);
  assert.deepEqual(await listVersions(paths), [1]);
});

test('an added alias without a filter is refused: same agent, another agent, a copy, a respelled URL', async (t) => {
  const paths = await project(t);
  const cases: Array<[string, (doc: Doc) => void, string]> = [
    [
      'alias in the same agent',
      (d) => d.agents.analyst!.mcpServers.push({ name: 'again', project: 'tools' }),
      '$.agents.analyst.mcpServers[2].tools',
    ],
    [
      'alias in an agent without it',
      (d) => d.agents.reporter!.mcpServers.push({ name: 'tools', project: 'tools' }),
      '$.agents.reporter.mcpServers[0].tools',
    ],
    [
      'alias in a new agent',
      (d) => (d.agents.helper = { mcpServers: [{ name: 't', project: 'tools' }] }),
      '$.agents.helper.mcpServers[0].tools',
    ],
    [
      'alias of a byte-for-byte copy under a new name',
      (d) => {
        d.mcpDefinitions.copy = { entrypoint: 'server.cjs', files: { 'server.cjs': SERVER } };
        d.agents.reporter!.mcpServers.push({ name: 'copy', project: 'copy' });
      },
      '$.agents.reporter.mcpServers[0].tools',
    ],
    [
      'the remote under another query',
      (d) => d.agents.reporter!.mcpServers.push({ name: 'far', url: 'https://tools.example/mcp?token=REDACTED' }),
      '$.agents.reporter.mcpServers[0].tools',
    ],
    [
      'the same name moved to another definition of equal content',
      (d) => {
        d.mcpDefinitions.copy = { entrypoint: 'server.cjs', files: { 'server.cjs': SERVER } };
        d.agents.main!.mcpServers[0] = { name: 'tools', project: 'copy' };
      },
      '$.agents.main.mcpServers[0].tools',
    ],
  ];
  for (const [what, change, path] of cases) {
    const next = base();
    change(next);
    assert.deepEqual(await refusedAt(applyWorkflow(paths, next)), [path], what);
  }
  // A new agent gets the narrowest: Main's filter is not enough where the analyst's is narrower.
  const next = base();
  next.agents.helper = { mcpServers: [{ name: 't', project: 'tools', tools: { exclude: ['secret*'] } }] };
  const [issue] = await refusal(applyWorkflow(paths, next));
  assert.match(issue!.message, /not as narrow as "analyst"'s "tools"/);
  assert.deepEqual(await listVersions(paths), [1]);
});

test('a narrowing change is accepted, and so are aliases as narrow as the rule asks', async (t) => {
  const paths = await project(t);
  const next = base();
  next.agents.main!.mcpServers[0]!.tools = { include: ['read', 'list_*'] };
  next.agents.analyst!.mcpServers[0]!.tools = { exclude: ['secret*', 'write', 'delete'] };
  next.agents.analyst!.mcpServers[1]!.tools = { include: ['read_one'] };
  next.agents.analyst!.mcpServers.push({ name: 'again', project: 'tools', tools: { exclude: ['write', 'secret*'] } });
  next.agents.reporter!.mcpServers.push({ name: 'tools', project: 'tools', tools: { exclude: ['*'] } });
  next.agents.helper = { mcpServers: [{ name: 't', project: 'tools', tools: { include: ['read'] } }] };
  // Main's own new service is Main's to filter or not.
  next.mcpDefinitions.mine = { entrypoint: 'server.cjs', files: { 'server.cjs': `${SERVER}//mine` } };
  next.agents.reporter!.mcpServers.push({ name: 'mine', project: 'mine' });
  const result = await applyWorkflow(paths, next);
  assert.equal(result.version, 2);
  const accepted = await readAccepted(paths);
  assert.deepEqual(accepted?.workflow.agents.main?.mcpServers[0]?.tools, { include: ['read', 'list_*'] });

  // Narrowed is now the operator's allowance: widening back to the first version is refused.
  const back = { ...next, agents: { ...next.agents, main: base().agents.main!, analyst: base().agents.analyst! } };
  assert.deepEqual(await refusedAt(applyWorkflow(paths, back)), [
    '$.agents.analyst.mcpServers[0].tools',
    '$.agents.analyst.mcpServers[1].tools',
    '$.agents.main.mcpServers[0].tools',
  ]);
});

test('the operator may widen a filter', async (t) => {
  const paths = await project(t);
  const next = base();
  delete next.agents.analyst!.mcpServers[0]!.tools;
  assert.equal((await applyWorkflow(paths, next, { by: 'operator' })).version, 2);
});
