/**
 * Lists through the CLI: `services probe` reports a list the service does not implement (`missingLists`,
 * and a note in the text), and `services serve` (the stdio face) offers every page of a paged list and an
 * empty template list. Real services, started by the CLI; nothing of them survives.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.js';
import { assertGone, BIN } from '../../e2e/helpers.js';
import { runCliToEnd } from '../../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../../fixtures/engine/workflows.js';
import { assertNothingLeft, type EngineSandbox, markedProcesses, sandbox } from '../engine/helpers.js';

/** A sandbox with agent `main` using `notes` (no templates/list) and `pages` (3 pages of tools), loaded. */
async function project(t: TestContext): Promise<EngineSandbox> {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  await writeFile(
    workflowPath,
    JSON.stringify({
      agents: {
        main: agent([
          ['notes', 'notes'],
          ['pages', 'pages'],
        ]),
      },
      mcpDefinitions: {
        notes: fixtureDefinition('../services/noTemplatesList.cjs'),
        pages: fixtureDefinition('../services/pagesItsTools.cjs'),
      },
    }),
  );
  await loadWorkflow({ dataDir: box.dataDir, project: box.project, workflow: workflowPath });
  return box;
}

function commonArgs(box: EngineSandbox): string[] {
  return ['--data-dir', box.dataDir, '--project', box.project, '--workspace', box.workspace, '--agent', 'main'];
}

test('services probe reports a declared list the service answers "method not found" as missingLists', async (t) => {
  const box = await project(t);
  const probe = await runCliToEnd(t, ['services', 'probe', ...commonArgs(box), '--grace-ms', '300', '--json']);
  assert.equal(probe.code, 0, probe.stderr);
  const services = (probe.json as { services: Array<Record<string, unknown>> }).services;
  const notes = services.find((s) => s.name === 'notes');
  const pages = services.find((s) => s.name === 'pages');
  assert.deepEqual(notes?.missingLists, ['resources/templates/list']);
  assert.deepEqual(notes?.resourceTemplates, []);
  assert.deepEqual(notes?.resources, ['fixture://note']);
  assert.deepEqual(pages?.missingLists, []);
  assert.deepEqual(pages?.tools, ['tool1', 'tool2', 'tool3', 'tool4', 'tool5', 'tool6']);

  const text = await runCliToEnd(t, ['services', 'probe', ...commonArgs(box), '--grace-ms', '300']);
  assert.equal(text.code, 0, text.stderr);
  // Each service's block: its lists, then what it declared but did not implement.
  const block = (name: string) => text.stdout.split(/\n(?= {2}\S)/).find((b) => b.startsWith(`  ${name}: ready`)) ?? '';
  assert.match(block('notes'), /\n {4}not implemented, counted empty: resources\/templates\/list\n/);
  assert.doesNotMatch(block('pages'), /not implemented/);
  assert.match(block('pages'), /tools: tool1, tool2/);
  await assertNothingLeft(box.project, []);
});

test('services serve (stdio face) offers every page of tools and an empty template list', {
  timeout: 60_000,
}, async (t) => {
  const box = await project(t);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'services', 'serve', ...commonArgs(box), '--grace-ms', '300'],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'lists-cli-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid!;
  t.after(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  // Main also has the SDK's own catalog (`scienceevolve__…`); the services' tools are what is checked here.
  const names = (await client.listTools()).tools
    .map((tool) => tool.name)
    .filter((name) => !name.startsWith('scienceevolve__'))
    .sort();
  assert.deepEqual(names, [
    'notes__hello',
    'pages__tool1',
    'pages__tool2',
    'pages__tool3',
    'pages__tool4',
    'pages__tool5',
    'pages__tool6',
  ]);
  assert.deepEqual((await client.listResourceTemplates()).resourceTemplates, []);
  const result = await client.callTool({ name: 'pages__tool5', arguments: {} });
  assert.deepEqual(result.content, [{ type: 'text', text: 'called tool5' }]);
  assert.ok(markedProcesses(box.project).length >= 2, 'the two services run while the face is served');
  await client.close();
  await assertGone(pid);
  await assertNothingLeft(box.project, []);
});
