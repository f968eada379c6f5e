/**
 * A model's first try at apply_workflow works (issue 27): through Main's stdio face (`services serve
 * --agent main`), a standard MCP client calls get_workflow and sends the answer back with one service added
 * — as summaries (no sources), then in full (sources), `digest` fields included. Both apply; a summary whose
 * digest is not the accepted one is `immutable_definition` naming the definition and the fix. The next
 * probe of the agent runs the services added. Nothing is left running.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadWorkflow } from '../../packages/sdk/src/store/workflowLoad.js';
import {
  BIN,
  LAB_SERVICE,
  assertGone,
  assertNothingLeft,
  labProject,
  labServeArgs,
  labWorkflow,
  spawnNode,
} from './helpers.js';

type Workflow = {
  orchestration?: Record<string, unknown>;
  agents: Record<string, { mcpServers: Array<Record<string, string>> }>;
  mcpDefinitions: Record<string, Record<string, unknown>>;
};
type Answer = { isError?: boolean; structuredContent: Record<string, unknown>; content: Array<{ text: string }> };

/** A lab service under a new name (its own source, so its own digest). */
function labService(note: string) {
  return { entrypoint: 'server.cjs', files: { 'server.cjs': `${readFileSync(LAB_SERVICE, 'utf8')}\n// ${note}\n` } };
}

// 120 s: a serve (supervisor, the lab service), three applies and a probe of two services on a shared 2-core machine.
test('get_workflow echoed back with one service added applies, with or without sources; a wrong digest is immutable_definition', {
  timeout: 120_000,
}, async (t) => {
  const lab = await labProject(t);
  const workflow = labWorkflow() as Workflow;
  workflow.orchestration = { allowMainReconfiguration: true };
  workflow.agents.analyst = { mcpServers: [] };
  const loaded = await loadWorkflow({ dataDir: lab.dataDir, project: lab.project, workflow });

  const [command, ...args] = [process.execPath, ...labServeArgs(lab)];
  const transport = new StdioClientTransport({ command: command!, args, stderr: 'pipe', cwd: lab.dir });
  const client = new Client({ name: 'echo-e2e', version: '1.0.0' });
  await client.connect(transport);
  const servePid = transport.pid!;
  t.after(async () => {
    await client.close();
    await assertGone(servePid);
  });
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name: `scienceevolve__${name}`, arguments: args })) as unknown as Answer;

  // 1. Without sources: every definition a summary with its digest; sent back as it is, plus a service.
  const summaries = (await call('get_workflow', {})).structuredContent.workflow as Workflow;
  assert.match(String(summaries.mcpDefinitions.lab!.digest), /^[0-9a-f]{64}$/);
  assert.equal(summaries.mcpDefinitions.lab!.files, undefined);
  summaries.mcpDefinitions.instruments = labService('instruments');
  summaries.agents.analyst!.mcpServers.push({ name: 'instruments', project: 'instruments' });
  const first = await call('apply_workflow', { workflow: summaries });
  assert.notEqual(first.isError, true, first.content[0]?.text);
  assert.deepEqual(
    [first.structuredContent.version, first.structuredContent.changedMcps],
    [loaded.version + 1, ['instruments']],
  );

  // 2. With sources: every definition in full with its digest; sent back as it is, plus a service.
  const full = (await call('get_workflow', { sources: true })).structuredContent.workflow as Workflow;
  assert.match(String(full.mcpDefinitions.instruments!.digest), /^[0-9a-f]{64}$/);
  assert.equal(typeof (full.mcpDefinitions.instruments!.files as Record<string, string>)['server.cjs'], 'string');
  full.mcpDefinitions.gauges = labService('gauges');
  full.agents.analyst!.mcpServers.push({ name: 'gauges', project: 'gauges' });
  const second = await call('apply_workflow', { workflow: full });
  assert.notEqual(second.isError, true, second.content[0]?.text);
  assert.deepEqual(
    [second.structuredContent.version, second.structuredContent.changedMcps],
    [loaded.version + 2, ['gauges']],
  );

  // 3. A summary whose digest is not the accepted one: immutable_definition, naming it and the fix.
  const stale = (await call('get_workflow', {})).structuredContent.workflow as Workflow;
  const labDigest = String(stale.mcpDefinitions.lab!.digest);
  stale.mcpDefinitions.lab!.digest = 'ab'.repeat(32);
  const refused = await call('apply_workflow', { workflow: stale });
  assert.equal(refused.isError, true);
  assert.match(
    refused.content[0]!.text,
    new RegExp(
      `immutable_definition at \\$\\.mcpDefinitions\\.lab\\.digest: "digest" "${'ab'.repeat(32)}" is not the digest of the accepted definition "lab" \\(${labDigest}\\).*\\{"accepted": "${labDigest}"\\}; to change the service, add the new version under a new name`,
    ),
  );
  await client.close();
  await assertGone(servePid);

  // The next probe of the analyst starts both services the applies added.
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
  probe.child.stdin?.end();
  const report = await probe.json<{ services: Array<{ name: string; state: string }> }>(60_000);
  assert.deepEqual(
    report.services.map((s) => [s.name, s.state]),
    [
      ['instruments', 'ready'],
      ['gauges', 'ready'],
    ],
  );
  assert.equal((await probe.exited).code, 0, probe.stderr());
  await assertNothingLeft({ dir: lab.dir, projectId: lab.project });
});
