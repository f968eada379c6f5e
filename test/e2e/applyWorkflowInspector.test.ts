/**
 * apply_workflow end to end with a standard client: the MCP Inspector's CLI calls
 * `scienceevolve__apply_workflow` on Main's stdio face (`services serve --agent main`), then a new
 * `services probe` of the affected agent starts the service the apply added.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadWorkflow } from '../../packages/sdk/src/store/workflowLoad.js';
import {
  assertNothingLeft,
  labServeArgs,
  BIN,
  inspector,
  LAB_SERVICE,
  labProject,
  labWorkflow,
  spawnNode,
} from './helpers.js';

test('the inspector adds a service through apply_workflow; the next probe of the agent runs it', async (t) => {
  const lab = await labProject(t);
  const workflow = labWorkflow() as {
    orchestration?: Record<string, unknown>;
    agents: Record<string, { mcpServers: Array<Record<string, string>> }>;
    mcpDefinitions: Record<string, unknown>;
  };
  workflow.orchestration = { allowMainReconfiguration: true };
  workflow.agents.analyst = { mcpServers: [] };
  const loaded = await loadWorkflow({ dataDir: lab.dataDir, project: lab.project, workflow });
  const serve = ['--', process.execPath, ...labServeArgs(lab)];

  const proposal = structuredClone(workflow);
  proposal.mcpDefinitions.instruments = {
    entrypoint: 'server.cjs',
    files: { 'server.cjs': `${readFileSync(LAB_SERVICE, 'utf8')}\n// the instruments service\n` },
  };
  proposal.agents.analyst!.mcpServers.push({ name: 'instruments', project: 'instruments' });
  const applied = await inspector(
    t,
    [
      '--method',
      'tools/call',
      '--tool-name',
      'scienceevolve__apply_workflow',
      '--tool-arg',
      `workflow=${JSON.stringify(proposal)}`,
      ...serve,
    ],
    lab.dir,
  );
  assert.notEqual(applied.isError, true, JSON.stringify(applied));
  const answer = applied.structuredContent as { version: number; changedMcps: string[]; changedAgents: string[] };
  assert.equal(answer.version, loaded.version + 1);
  assert.deepEqual(answer.changedMcps, ['instruments']);
  assert.deepEqual(answer.changedAgents, ['analyst']);

  const probe = spawnNode(t, [
    BIN,
    'services',
    'probe',
    '--data-dir',
    lab.dataDir,
    '--project',
    lab.project,
    '--workspace',
    lab.workspace,
    '--agent',
    'analyst',
    '--grace-ms',
    '300',
    '--json',
  ]);
  const { code } = await probe.exited;
  assert.equal(code, 0, probe.stderr());
  const report = JSON.parse(probe.stdout()) as { services: Array<{ name: string; state: string; tools: string[] }> };
  assert.deepEqual(
    report.services.map((s) => [s.name, s.state]),
    [['instruments', 'ready']],
  );
  assert.ok(report.services[0]!.tools.includes('echo'));
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});
