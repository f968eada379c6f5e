import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { assertAllGone, assertNoMarkedProcess, fixtureDefinition, killMarked, tempDir } from '../invocation/helpers.ts';

const BIN = new URL('../../../packages/cli/bin/scienceevolve.js', import.meta.url).pathname;

function cli(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
}

test('through `services serve --agent main`, a standard client reads the workflow, applies a new service, sees refusals; the next probe runs it', async (t) => {
  const dir = tempDir(t);
  const project = `apply-e2e-${process.pid}`;
  t.after(() => killMarked(project));
  const dataDir = join(dir, 'data');
  const workspace = join(dir, 'ws');
  const workflowPath = join(dir, 'workflow.json');
  writeFileSync(
    workflowPath,
    JSON.stringify({
      orchestration: { allowMainReconfiguration: true },
      agents: { main: { mcpServers: [{ name: 'tools', project: 'tools' }] }, analyst: {} },
      mcpDefinitions: { tools: fixtureDefinition('plain.cjs') },
    }),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      BIN,
      'services',
      'serve',
      '--data-dir',
      dataDir,
      '--project',
      project,
      '--workflow',
      workflowPath,
      '--workspace',
      workspace,
      '--agent',
      'main',
      '--grace-ms',
      '300',
    ],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'apply-e2e', version: '1.0.0' });
  await client.connect(transport);
  const servePid = transport.pid!;
  t.after(() => client.close());

  const tools = (await client.listTools()).tools.map((t) => t.name);
  assert.ok(tools.includes('scienceevolve__get_workflow'));
  assert.ok(tools.includes('scienceevolve__apply_workflow'));
  assert.ok(tools.some((name) => name.startsWith('tools__')));

  type View = {
    structuredContent: {
      version: number;
      workflow: { agents: Record<string, { mcpServers: unknown[] }>; mcpDefinitions: Record<string, unknown> };
    };
    content: Array<{ text: string }>;
  };
  // Without sources (the default): digests, launch settings and file sizes.
  const got = (await client.callTool({ name: 'scienceevolve__get_workflow', arguments: {} })) as unknown as View;
  assert.equal(got.structuredContent.version, 1);
  assert.deepEqual(JSON.parse(got.content[0]!.text), got.structuredContent);
  const summary = got.structuredContent.workflow.mcpDefinitions.tools as {
    digest: string;
    fileBytes: Record<string, number>;
    files?: unknown;
  };
  assert.match(summary.digest, /^[0-9a-f]{64}$/);
  assert.equal(summary.files, undefined);
  assert.deepEqual(Object.keys(summary.fileBytes).sort(), ['lib/makeServer.cjs', 'server.cjs']);

  // A refusal: rewriting the accepted definition (its files read with sources), and a reference to nothing —
  // every error at once.
  const full = (await client.callTool({
    name: 'scienceevolve__get_workflow',
    arguments: { sources: true },
  })) as unknown as View;
  const bad = structuredClone(full.structuredContent.workflow);
  const rewritten = bad.mcpDefinitions.tools as { digest?: string; files: Record<string, string> };
  delete rewritten.digest;
  rewritten.files['server.cjs'] += '\n// changed';
  bad.agents.analyst!.mcpServers.push({ name: 'ghost', project: 'ghost' });
  const refused = (await client.callTool({ name: 'scienceevolve__apply_workflow', arguments: { workflow: bad } })) as {
    isError: boolean;
    content: Array<{ text: string }>;
  };
  assert.equal(refused.isError, true);
  assert.match(refused.content[0]!.text, /unknown_reference at \$\.agents\.analyst\.mcpServers\[0\]\.project/);

  // The good snapshot: the accepted service kept by reference, a new service for the analyst.
  const next = structuredClone(got.structuredContent.workflow);
  next.mcpDefinitions.tools = { accepted: summary.digest };
  next.mcpDefinitions.stats = fixtureDefinition('printsBannerOnStdout.cjs');
  next.agents.analyst!.mcpServers.push({ name: 'stats', project: 'stats' });
  const applied = (await client.callTool({
    name: 'scienceevolve__apply_workflow',
    arguments: { workflow: next },
  })) as unknown as {
    isError?: boolean;
    structuredContent: { version: number; changedMcps: string[]; changedAgents: string[] };
  };
  assert.notEqual(applied.isError, true);
  assert.deepEqual(
    {
      version: applied.structuredContent.version,
      changedMcps: applied.structuredContent.changedMcps,
      changedAgents: applied.structuredContent.changedAgents,
    },
    { version: 2, changedMcps: ['stats'], changedAgents: ['analyst'] },
  );
  await client.close();
  await assertAllGone([servePid]);
  await assertNoMarkedProcess(project);

  // The next probe of the analyst starts the new service.
  const probe = cli([
    'services',
    'probe',
    '--data-dir',
    dataDir,
    '--project',
    project,
    '--workspace',
    workspace,
    '--agent',
    'analyst',
    '--grace-ms',
    '300',
    '--json',
  ]);
  assert.equal(probe.status, 0, probe.stderr);
  const report = JSON.parse(probe.stdout) as { services: Array<{ name: string; state: string; tools: string[] }> };
  assert.deepEqual(
    report.services.map((s) => [s.name, s.state]),
    [['stats', 'ready']],
  );
  await assertNoMarkedProcess(project);

  const history = cli(['workflow', 'history', '--data-dir', dataDir, '--project', project, '--json']);
  assert.equal(history.status, 0, history.stderr);
  const versions = (JSON.parse(history.stdout) as { versions: Array<{ version: number; by: string }> }).versions;
  assert.deepEqual(
    versions.map((v) => [v.version, v.by]),
    [
      [1, 'operator'],
      [2, 'main'],
    ],
  );

  const diff = cli(['workflow', 'diff', '1', '2', '--data-dir', dataDir, '--project', project, '--json']);
  assert.equal(diff.status, 0, diff.stderr);
  assert.deepEqual((JSON.parse(diff.stdout) as { changedMcps: string[] }).changedMcps, ['stats']);
});

test('a worker served alone never sees the fixed catalog', async (t) => {
  const dir = tempDir(t);
  const project = `apply-worker-${process.pid}`;
  t.after(() => killMarked(project));
  const workflowPath = join(dir, 'workflow.json');
  writeFileSync(
    workflowPath,
    JSON.stringify({
      orchestration: { allowMainReconfiguration: true },
      agents: { main: {}, analyst: { mcpServers: [{ name: 'tools', project: 'tools' }] } },
      mcpDefinitions: { tools: fixtureDefinition('plain.cjs') },
    }),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      BIN,
      'services',
      'serve',
      '--data-dir',
      join(dir, 'data'),
      '--project',
      project,
      '--workflow',
      workflowPath,
      '--workspace',
      join(dir, 'ws'),
      '--agent',
      'analyst',
      '--grace-ms',
      '300',
    ],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'worker-e2e', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  const tools = (await client.listTools()).tools.map((x) => x.name);
  assert.ok(tools.length > 0);
  assert.ok(
    tools.every((name) => !name.startsWith('scienceevolve__')),
    tools.join(', '),
  );
  await client.close();
  await assertNoMarkedProcess(project);
});
