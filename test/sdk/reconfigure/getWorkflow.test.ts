/**
 * `get_workflow` through Main's surface (SPEC §9): without sources each definition is its digest, launch
 * settings and file sizes; with `sources: true` its full files. And the point of it: a Main adding one
 * service to a workflow of over 200 KB of services sends a snapshot under 5 KB.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { createSurface } from '../../../packages/sdk/src/surface/surface.ts';
import { fixedCatalog } from '../../../packages/sdk/src/engine/fixedCatalog.ts';
import { type ProjectPaths, openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';
import { readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { definitionDigest } from '../../../packages/sdk/src/workflow/digest.ts';

const SERVER = "require('node:process').stdin.resume();";
/** A marker in every file's content: get_workflow without sources must not show any of it. */
const MARK = 'CONTENT-MARKER';

function definitions() {
  return {
    tools: {
      entrypoint: 'server.cjs',
      files: { 'server.cjs': `${SERVER}// ${MARK} tools`, 'data/é.txt': `${MARK} café ünïcode` },
      envFrom: { API_KEY: 'TASK_MCP_API_KEY' },
    },
    notes: { entrypoint: 'notes.cjs', command: 'python3', args: ['-u'], files: { 'notes.cjs': `# ${MARK} notes` } },
  };
}

async function catalogOver(
  t: TestContext,
  workflow: Record<string, unknown> | undefined,
): Promise<{ paths: ProjectPaths; call: (tool: string, args: Record<string, unknown>) => Promise<CallToolResult> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'se-getwf-'));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  if (workflow !== undefined) await loadWorkflow({ dataDir, project: 'p', workflow });
  const paths = await openProject(dataDir, 'p');
  const surface = createSurface([fixedCatalog({ paths, allowReconfiguration: true })]);
  return { paths, call: (tool, args) => surface.callTool(`scienceevolve__${tool}`, args) };
}

function answerOf(result: CallToolResult): Record<string, unknown> {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const text = (result.content[0] as { type: string; text: string }).text;
  assert.equal(result.content.length, 1);
  assert.deepEqual(JSON.parse(text), result.structuredContent, 'the text item is the JSON of structuredContent');
  return result.structuredContent as Record<string, unknown>;
}

test('get_workflow without sources: digests, launch settings and file sizes in bytes, no file contents', async (t) => {
  const { paths, call } = await catalogOver(t, {
    orchestration: { allowMainReconfiguration: true },
    agents: { main: { mcpServers: [{ name: 'tools', project: 'tools' }] } },
    mcpDefinitions: definitions(),
  });
  for (const args of [{}, { sources: false }]) {
    const result = await call('get_workflow', args);
    const text = (result.content[0] as { text: string }).text;
    assert.ok(!text.includes(MARK), 'no file content in the answer');
    const answer = answerOf(result) as {
      version: number;
      workflow: { mcpDefinitions: Record<string, Record<string, unknown>>; agents: unknown; orchestration: unknown };
    };
    assert.equal(answer.version, 1);
    const defs = definitions();
    assert.deepEqual(answer.workflow.mcpDefinitions, {
      tools: {
        digest: definitionDigest(defs.tools),
        entrypoint: 'server.cjs',
        command: 'node',
        args: [],
        envFrom: { API_KEY: 'TASK_MCP_API_KEY' },
        fileBytes: {
          'server.cjs': Buffer.byteLength(defs.tools.files['server.cjs']),
          'data/é.txt': Buffer.byteLength(defs.tools.files['data/é.txt']),
        },
      },
      notes: {
        digest: definitionDigest(defs.notes),
        entrypoint: 'notes.cjs',
        command: 'python3',
        args: ['-u'],
        envFrom: {},
        fileBytes: { 'notes.cjs': Buffer.byteLength(defs.notes.files['notes.cjs']) },
      },
    });
    // Sizes are UTF-8 bytes, not characters.
    assert.notEqual(defs.tools.files['data/é.txt'].length, Buffer.byteLength(defs.tools.files['data/é.txt']));
    // The digests are the ones the store recorded, and the rest of the workflow is as accepted.
    const accepted = await readAccepted(paths);
    assert.deepEqual(
      Object.fromEntries(Object.entries(answer.workflow.mcpDefinitions).map(([n, d]) => [n, d.digest])),
      accepted?.digests,
    );
    assert.deepEqual(answer.workflow.agents, accepted?.workflow.agents);
    assert.deepEqual(answer.workflow.orchestration, accepted?.workflow.orchestration);
  }
});

test('get_workflow with sources: every definition in full, with its digest', async (t) => {
  const { paths, call } = await catalogOver(t, {
    orchestration: { allowMainReconfiguration: true },
    agents: { main: { mcpServers: [{ name: 'tools', project: 'tools' }] } },
    mcpDefinitions: definitions(),
  });
  const answer = answerOf(await call('get_workflow', { sources: true })) as {
    workflow: { mcpDefinitions: Record<string, Record<string, unknown>> };
  };
  const accepted = await readAccepted(paths);
  for (const [name, definition] of Object.entries(accepted!.workflow.mcpDefinitions)) {
    assert.deepEqual(answer.workflow.mcpDefinitions[name], { digest: accepted!.digests[name], ...definition });
  }
  assert.deepEqual(Object.keys(answer.workflow.mcpDefinitions).sort(), ['notes', 'tools']);
});

test('get_workflow: a non-boolean sources is refused by the surface; no accepted version answers version 0', async (t) => {
  const { call } = await catalogOver(t, undefined);
  assert.deepEqual(answerOf(await call('get_workflow', {})), { version: 0, workflow: null });
  const refused = await call('get_workflow', { sources: 'yes' });
  assert.equal(refused.isError, true);
  assert.match((refused.content[0] as { text: string }).text, /sources/);
});

test('apply_workflow through the surface: a bad reference is a tool error naming its code and path', async (t) => {
  const { call } = await catalogOver(t, {
    orchestration: { allowMainReconfiguration: true },
    agents: { main: { mcpServers: [{ name: 'tools', project: 'tools' }] } },
    mcpDefinitions: definitions(),
  });
  const view = answerOf(await call('get_workflow', {})) as {
    workflow: { mcpDefinitions: Record<string, { digest: string }> } & Record<string, unknown>;
  };
  const snapshot = {
    ...view.workflow,
    mcpDefinitions: { tools: { accepted: view.workflow.mcpDefinitions.notes!.digest }, notes: { accepted: 'f00' } },
  };
  const refused = await call('apply_workflow', { workflow: snapshot });
  assert.equal(refused.isError, true);
  const text = (refused.content[0] as { text: string }).text;
  assert.match(text, /^2 errors; nothing was applied:/);
  assert.match(text, /- invalid_workflow at \$\.mcpDefinitions\.notes\.accepted: must be the 64-character hex digest/);
  assert.match(text, /- unknown_reference at \$\.mcpDefinitions\.tools\.accepted: "[0-9a-f]{64}" is the digest of/);
});

test('adding one service to a workflow of over 200 KB of services takes a snapshot under 5 KB', async (t) => {
  // Four accepted services of six 10 KB files each: about 240 KB of sources.
  const big: Record<string, { entrypoint: string; files: Record<string, string> }> = {};
  for (const name of ['search', 'materials', 'plots', 'chem']) {
    const files: Record<string, string> = { 'server.cjs': `${SERVER}// ${name}` };
    for (let i = 0; i < 6; i++) files[`lib/part${i}.cjs`] = `// ${name} ${i}\n`.padEnd(10_000, 'x');
    big[name] = { entrypoint: 'server.cjs', files };
  }
  const sourcesBytes = Buffer.byteLength(JSON.stringify(big));
  assert.ok(sourcesBytes > 200_000, `the existing services total ${sourcesBytes} bytes`);
  const { paths, call } = await catalogOver(t, {
    orchestration: { allowMainReconfiguration: true },
    agents: {
      main: { mcpServers: Object.keys(big).map((name) => ({ name, project: name })) },
      analyst: { mcpServers: [{ name: 'search', project: 'search' }] },
    },
    mcpDefinitions: big,
  });

  // What a model does: read the summary, keep every service by reference, add one in full.
  const got = await call('get_workflow', {});
  const view = answerOf(got) as {
    version: number;
    workflow: {
      agents: Record<string, { mcpServers: Array<Record<string, string>> }>;
      mcpDefinitions: Record<string, { digest: string }>;
    } & Record<string, unknown>;
  };
  const mcpDefinitions: Record<string, unknown> = {};
  for (const [name, summary] of Object.entries(view.workflow.mcpDefinitions)) {
    mcpDefinitions[name] = { accepted: summary.digest };
  }
  mcpDefinitions.units = {
    entrypoint: 'server.cjs',
    files: {
      'server.cjs': [
        "const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');",
        "const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');",
        "const { z } = require('zod');",
        "const server = new McpServer({ name: 'units', version: '1.0.0' });",
        "server.registerTool('kelvin', { inputSchema: { celsius: z.number() } }, async ({ celsius }) => ({",
        "  content: [{ type: 'text', text: String(celsius + 273.15) }],",
        '}));',
        'server.connect(new StdioServerTransport());',
      ].join('\n'),
    },
  };
  const agents = structuredClone(view.workflow.agents);
  agents.analyst!.mcpServers.push({ name: 'units', project: 'units' });
  const args = { workflow: { ...view.workflow, agents, mcpDefinitions } };
  const snapshotBytes = Buffer.byteLength(JSON.stringify(args));
  const viewBytes = Buffer.byteLength((got.content[0] as { text: string }).text);
  t.diagnostic(`existing sources ${sourcesBytes} B; get_workflow summary ${viewBytes} B; snapshot ${snapshotBytes} B`);
  assert.ok(snapshotBytes < 5_000, `the snapshot is ${snapshotBytes} bytes`);

  const applied = answerOf(await call('apply_workflow', args));
  assert.deepEqual([applied.version, applied.changedMcps, applied.changedAgents], [2, ['units'], ['analyst']]);
  const accepted = await readAccepted(paths);
  for (const [name, definition] of Object.entries(big)) {
    assert.deepEqual(accepted?.workflow.mcpDefinitions[name]?.files, definition.files, `${name} kept in full`);
  }
});
