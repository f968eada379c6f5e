/**
 * apply_workflow as a real model loop uses it (issue 11 item 5): Main runs on the `openai` Chat Completions
 * loop against the local model server, in a workflow whose accepted services total over 200 KB. The
 * "model" reads `get_workflow` (summaries: no sources), keeps every accepted service by reference, adds
 * one small service for a worker in a snapshot under 5 KB, and delegates to that worker, whose next
 * invocation starts the new service and calls it. Starts one real Node service (about 1–2 s on 2 cores).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runWorkflow } from '../../packages/sdk/src/engine/engine.js';
import { openProject } from '../../packages/sdk/src/store/projectStore.js';
import { readAccepted } from '../../packages/sdk/src/store/workflowVersions.js';
import {
  type ModelReply,
  type ModelRequest,
  type SeenToolCall,
  type SeenToolResult,
  startModelServer,
} from '../fixtures/modelServer/index.js';
import { assertNothingLeft, sandbox } from '../sdk/engine/helpers.js';

/** In every file of the accepted services: the model must never be shown any of it without asking for sources. */
const MARK = 'ACCEPTED-SOURCE-MARKER';

/** A new service as a model would write it: the MCP SDK (v1) and zod, which every Node service can require. */
const UNITS_SERVER = [
  "const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');",
  "const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');",
  "const { z } = require('zod');",
  "const server = new McpServer({ name: 'units', version: '1.0.0' });",
  "server.registerTool('kelvin', { description: 'Celsius to kelvin', inputSchema: { celsius: z.number() } },",
  "  async ({ celsius }) => ({ content: [{ type: 'text', text: celsius + ' C = ' + (celsius + 273.15) + ' K' }] }));",
  'server.connect(new StdioServerTransport());',
].join('\n');

function bigDefinitions(): Record<string, { entrypoint: string; files: Record<string, string> }> {
  const definitions: Record<string, { entrypoint: string; files: Record<string, string> }> = {};
  for (const name of ['literature', 'materials', 'spectra', 'plots']) {
    const files: Record<string, string> = { 'server.cjs': `process.stdin.resume(); // ${MARK} ${name}` };
    for (let i = 0; i < 6; i++) files[`lib/part${i}.cjs`] = `// ${MARK} ${name} ${i}\n`.padEnd(10_000, '/');
    definitions[name] = { entrypoint: 'server.cjs', files };
  }
  return definitions;
}

function callsOf(request: ModelRequest): SeenToolCall[] {
  return request.messages.flatMap((m) => m.toolCalls ?? []);
}

function resultsOf(request: ModelRequest): SeenToolResult[] {
  return request.messages.flatMap((m) => m.toolResults ?? []);
}

/** What the model does for Main, from the conversation so far: read, apply with references, delegate, answer. */
function mainReply(request: ModelRequest): ModelReply {
  const calls = callsOf(request);
  const results = resultsOf(request);
  const resultOf = (name: string) => {
    const call = calls.find((c) => c.name === name);
    return call === undefined ? undefined : results.find((r) => r.id === call.id);
  };
  const got = resultOf('scienceevolve__get_workflow');
  if (got === undefined) return { toolCalls: [{ name: 'scienceevolve__get_workflow', arguments: {} }] };
  const applied = resultOf('scienceevolve__apply_workflow');
  if (applied === undefined) {
    const view = JSON.parse(got.text) as {
      workflow: {
        agents: Record<string, { mcpServers: Array<Record<string, string>> }>;
        mcpDefinitions: Record<string, { digest: string }>;
      } & Record<string, unknown>;
    };
    const mcpDefinitions: Record<string, unknown> = {};
    for (const [name, summary] of Object.entries(view.workflow.mcpDefinitions)) {
      mcpDefinitions[name] = { accepted: summary.digest };
    }
    mcpDefinitions.units = { entrypoint: 'server.cjs', files: { 'server.cjs': UNITS_SERVER } };
    const agents = view.workflow.agents;
    agents.analyst!.mcpServers.push({ name: 'units', project: 'units' });
    return {
      toolCalls: [
        {
          name: 'scienceevolve__apply_workflow',
          arguments: { workflow: { ...view.workflow, agents, mcpDefinitions } },
        },
      ],
    };
  }
  const delegated = resultOf('scienceevolve__delegate');
  if (delegated === undefined) {
    return {
      toolCalls: [{ name: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'convert 25 C to kelvin' } }],
    };
  }
  return { text: `analyst says: ${delegated.text}` };
}

/** The analyst: call the new service once, then answer with its result. */
function analystReply(request: ModelRequest): ModelReply {
  const result = resultsOf(request)[0];
  if (result === undefined) return { toolCalls: [{ name: 'units__kelvin', arguments: { celsius: 25 } }] };
  return { text: result.text };
}

test('a model-loop Main adds a service to a 240 KB workflow with a snapshot under 5 KB; the worker then uses it', async (t) => {
  const box = await sandbox(t);
  const model = await startModelServer({
    respond: (request) => (/You are the analyst/.test(request.system) ? analystReply(request) : mainReply(request)),
  });
  t.after(() => model.close());

  const definitions = bigDefinitions();
  const sourcesBytes = Buffer.byteLength(JSON.stringify(definitions));
  assert.ok(sourcesBytes > 200_000, `the accepted services total ${sourcesBytes} bytes`);
  const harness = { type: 'openai', model: 'test-model', baseUrl: `${model.url}/v1`, apiKeyEnv: 'LAB_OPENAI_KEY' };
  const result = await runWorkflow({
    ...box,
    workflow: {
      orchestration: { allowMainReconfiguration: true },
      agents: {
        main: { instructions: 'You are Main.', harness },
        analyst: { instructions: 'You are the analyst.', harness, mcpServers: [] },
        // Holds the big services; never invoked in this run, so they never start.
        archivist: {
          instructions: 'You are the archivist.',
          harness,
          mcpServers: Object.keys(definitions).map((name) => ({ name, project: name })),
        },
      },
      mcpDefinitions: definitions,
    },
    requirement: 'get 25 C in kelvin from the analyst, with a units service',
    hostEnv: { ...process.env, LAB_OPENAI_KEY: 'sk-local' },
    graceMs: 500,
  });
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(result.output, 'analyst says: 25 C = 298.15 K');

  // What went over the wire: get_workflow's answer carried no source, the apply_workflow call was small.
  const last = model.requests.filter((r) => /You are Main/.test(r.system)).at(-1)!;
  const calls = callsOf(last);
  assert.deepEqual(
    calls.map((c) => c.name),
    ['scienceevolve__get_workflow', 'scienceevolve__apply_workflow', 'scienceevolve__delegate'],
  );
  const seen = resultsOf(last);
  const viewText = seen.find((r) => r.id === calls[0]!.id)!.text;
  assert.ok(!viewText.includes(MARK), 'get_workflow showed no file contents');
  const snapshotBytes = Buffer.byteLength(JSON.stringify(calls[1]!.arguments));
  t.diagnostic(
    `accepted sources ${sourcesBytes} B; get_workflow answer ${Buffer.byteLength(viewText)} B; apply_workflow arguments ${snapshotBytes} B`,
  );
  assert.ok(snapshotBytes < 5_000, `the apply_workflow snapshot is ${snapshotBytes} bytes`);
  const applied = JSON.parse(seen.find((r) => r.id === calls[1]!.id)!.text) as Record<string, unknown>;
  assert.deepEqual([applied.version, applied.changedMcps, applied.changedAgents], [2, ['units'], ['analyst']]);
  const reconfigured = result.events.filter((e) => e.type === 'workflow.reconfigured');
  assert.equal(reconfigured.length, 1);

  // The accepted version 2 holds every big service in full and the new one.
  const accepted = await readAccepted(await openProject(box.dataDir, box.project));
  assert.equal(accepted?.version, 2);
  assert.equal(accepted?.by, 'main');
  for (const [name, definition] of Object.entries(definitions)) {
    assert.deepEqual(accepted?.workflow.mcpDefinitions[name]?.files, definition.files, `${name} kept in full`);
  }
  assert.equal(accepted?.workflow.mcpDefinitions.units?.files['server.cjs'], UNITS_SERVER);

  await assertNothingLeft(box.project, result.events);
});
