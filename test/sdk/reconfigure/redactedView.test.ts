/**
 * Issue 13, item 7 (secrets printed), for the model: `get_workflow` never shows a token held in an
 * operator's URL (a remote entry's query, a model endpoint, allowedRemoteUrls), and a snapshot that
 * echoes the redacted view keeps the operator's real URLs.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { applyWorkflow } from '../../../packages/sdk/src/reconfigure/applyWorkflow.ts';
import { readWorkflowView } from '../../../packages/sdk/src/reconfigure/workflowView.ts';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';
import { readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';

const SERVER = "require('node:process').stdin.resume();";
const SECRET = 'sekrit-token-4711';

function operatorWorkflow() {
  return {
    orchestration: {
      allowMainReconfiguration: true,
      allowedRemoteUrls: [`http://127.0.0.1:9/base?key=${SECRET}`],
      defaultHarness: { type: 'openai', model: 'm', baseUrl: `http://127.0.0.1:9/v1?api_key=${SECRET}` },
    },
    agents: {
      main: { mcpServers: [{ name: 'tools', project: 'tools' }] },
      analyst: {
        harness: { type: 'openai', model: 'm', baseUrl: `http://127.0.0.1:9/v1?api_key=${SECRET}` },
        mcpServers: [{ name: 'materials', url: `http://127.0.0.1:9/mcp?token=${SECRET}&x=1` }],
      },
    },
    mcpDefinitions: { tools: { entrypoint: 'server.cjs', files: { 'server.cjs': SERVER } } },
  };
}

test('get_workflow shows no URL token, and echoing its view back keeps the real URLs', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'se-redact-view-'));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  await loadWorkflow({ dataDir, project: 'p', workflow: operatorWorkflow() });
  const paths = await openProject(dataDir, 'p');

  for (const sources of [false, true]) {
    const view = await readWorkflowView(paths, { sources });
    const text = JSON.stringify(view);
    assert.ok(!text.includes(SECRET), `the view shows the token: ${text}`);
    assert.match(text, /http:\/\/127\.0\.0\.1:9\/mcp\?token=REDACTED&x=REDACTED/);
  }

  // Main adds a service and sends everything else back as get_workflow showed it.
  const view = (await readWorkflowView(paths)).workflow as Record<string, Record<string, unknown>>;
  const snapshot = {
    orchestration: view.orchestration,
    agents: view.agents,
    mcpDefinitions: {
      tools: { accepted: (view.mcpDefinitions?.tools as { digest: string } | undefined)?.digest },
      search: { entrypoint: 's.cjs', files: { 's.cjs': SERVER } },
    },
  };
  const result = await applyWorkflow(paths, snapshot);
  assert.deepEqual(result, { version: 2, changedMcps: ['search'], changedAgents: [] });
  const accepted = await readAccepted(paths);
  assert.equal(accepted?.workflow.agents.analyst?.mcpServers[0]?.url, `http://127.0.0.1:9/mcp?token=${SECRET}&x=1`);
  const filled = { api: 'chat', maxTurns: 50, requestTimeoutMs: 600_000 };
  const { orchestration } = operatorWorkflow();
  assert.deepEqual(accepted?.workflow.orchestration, {
    ...orchestration,
    git: false,
    invocationRetries: 1,
    defaultHarness: { ...orchestration.defaultHarness, ...filled },
  });
  assert.deepEqual(accepted?.workflow.agents.analyst?.harness, {
    ...operatorWorkflow().agents.analyst.harness,
    ...filled,
  });
  assert.equal(accepted?.workflow.orchestration.allowedRemoteUrls[0], `http://127.0.0.1:9/base?key=${SECRET}`);
});

test('a redacted URL copied to another entry is not turned back into the secret one', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'se-redact-view-'));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  await loadWorkflow({ dataDir, project: 'p', workflow: operatorWorkflow() });
  const paths = await openProject(dataDir, 'p');
  const view = (await readWorkflowView(paths)).workflow as Record<string, Record<string, Record<string, unknown>>>;
  const analyst = view.agents?.analyst as { mcpServers: Array<{ name: string; url: string }> };
  analyst.mcpServers.push({ name: 'copy', url: analyst.mcpServers[0]?.url ?? '' });
  const snapshot = { orchestration: view.orchestration, agents: view.agents };
  await assert.rejects(
    applyWorkflow(paths, snapshot),
    (error: { data?: { errors?: Array<{ code: string; path: string }> } }) => {
      assert.deepEqual(
        error.data?.errors?.map((e) => [e.code, e.path]),
        [['remote_not_allowed', '$.agents.analyst.mcpServers[1].url']],
      );
      return true;
    },
  );
});
