/**
 * OpenCode loads the plugins of a workspace's `.opencode/plugin(s)/` whatever its switches say (1.18.33:
 * neither OPENCODE_DISABLE_PROJECT_CONFIG nor --pure stops it). So, where an agent runs the `opencode` preset:
 * a sandboxed service cannot plant a plugin there (the workspace's `.opencode` is made and bound read-only
 * in every sandbox), and the preset refuses to start OpenCode in a workspace whose `.opencode` holds plugins
 * or is not a plain directory (`workspace_config_refused`; the CLI never runs). The stand-in CLI here is
 * `node -e`: what is tested is whether it starts. The real CLI's case is test/clis/opencode.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startRun } from '../../../packages/sdk/src/engine/engine.js';
import { startInvocationServices } from '../../../packages/sdk/src/invocation/invocation.js';
import { sandboxAvailability } from '../../../packages/sdk/src/processes/sandbox.js';
import { openProject } from '../../../packages/sdk/src/store/projectStore.js';
import { acceptWorkflow, readAccepted } from '../../../packages/sdk/src/store/workflowVersions.js';
import { fixtureDefinition as engineFixture } from '../../fixtures/engine/workflows.js';
import { assertNoMarkedProcess, fixtureDefinition, killMarked } from '../invocation/helpers.ts';
import { assertNothingLeft, ofType, sandbox } from '../engine/helpers.js';

const available = await sandboxAvailability(process.env);
const noSandbox = available.ok ? false : `no working bubblewrap here (${(available as { detail: string }).detail})`;

/** Main runs the `opencode` preset with a stand-in command that leaves `cli-ran` in the workspace. */
function opencodeWorkflow() {
  return {
    orchestration: { invocationRetries: 0 },
    agents: {
      main: {
        harness: {
          type: 'command',
          preset: 'opencode',
          command: 'node',
          args: ['-e', "require('node:fs').writeFileSync('cli-ran', ''); console.log('done')"],
        },
        mcpServers: [{ name: 'adds', project: 'adds' }],
      },
    },
    mcpDefinitions: { adds: engineFixture('addsNumbers.cjs') },
  };
}

const cases: { name: string; plant: (ws: string) => void; path: string }[] = [
  {
    name: 'a file in .opencode/plugins/',
    plant: (ws) => {
      mkdirSync(join(ws, '.opencode', 'plugins'), { recursive: true });
      writeFileSync(join(ws, '.opencode', 'plugins', 'planted.js'), 'export default async () => ({})\n');
    },
    path: '.opencode/plugins',
  },
  {
    name: 'a file in .opencode/plugin/',
    plant: (ws) => {
      mkdirSync(join(ws, '.opencode', 'plugin'), { recursive: true });
      writeFileSync(join(ws, '.opencode', 'plugin', 'planted.ts'), 'export default async () => ({})\n');
    },
    path: '.opencode/plugin',
  },
  {
    name: '.opencode as a link',
    plant: (ws) => {
      mkdirSync(join(ws, '..', 'elsewhere'), { recursive: true });
      symlinkSync(join(ws, '..', 'elsewhere'), join(ws, '.opencode'));
    },
    path: '.opencode',
  },
];

for (const c of cases) {
  test(`the opencode preset refuses a workspace with ${c.name}: workspace_config_refused, the CLI never starts`, {
    timeout: 60_000,
  }, async (t) => {
    const box = await sandbox(t);
    c.plant(box.workspace);
    const result = await startRun({ ...box, workflow: opencodeWorkflow(), requirement: 'x', graceMs: 300 }).result;
    assert.equal(result.status, 'failed');
    const error = ofType(result.events, 'invocation.finished')[0]?.error as { code: string; message: string };
    assert.equal(error?.code, 'workspace_config_refused', JSON.stringify(error));
    assert.ok(error.message.includes(join(box.workspace, ...c.path.split('/'))), error.message);
    assert.equal(existsSync(join(box.workspace, 'cli-ran')), false, 'the CLI was not started');
    await assertNothingLeft(box.project, result.events);
  });
}

test('the opencode preset starts in a clean workspace; its .opencode is left an empty directory', {
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  const result = await startRun({ ...box, workflow: opencodeWorkflow(), requirement: 'x', graceMs: 300 }).result;
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(existsSync(join(box.workspace, 'cli-ran')), true);
  assert.ok(lstatSync(join(box.workspace, '.opencode')).isDirectory());
  assert.deepEqual(readdirSync(join(box.workspace, '.opencode')), []);
  await assertNothingLeft(box.project, result.events);
});

test("where an agent runs the opencode preset, a sandboxed service cannot plant a plugin in the workspace's .opencode", {
  skip: noSandbox,
  timeout: 60_000,
}, async (t) => {
  const box = await sandbox(t);
  t.after(() => killMarked(box.project));
  const paths = await openProject(box.dataDir, box.project);
  const workflow = opencodeWorkflow();
  await acceptWorkflow(
    paths,
    {
      ...workflow,
      agents: { main: { ...workflow.agents.main, mcpServers: [{ name: 'prober', project: 'prober' }] } },
      mcpDefinitions: { prober: fixtureDefinition('probesTheSandbox.cjs') },
    },
    { by: 'operator' },
  );
  const services = await startInvocationServices({
    paths,
    version: (await readAccepted(paths))!,
    agent: 'main',
    runId: 'r1',
    workspace: box.workspace,
    graceMs: 300,
    startupBudgetMs: 60_000,
  });
  t.after(() => services.close());
  const prober = services.sessions.find((s) => s.name === 'prober');
  assert.ok(prober, services.failures.map((f) => f.message).join('; '));
  assert.equal(services.outcomes[0]?.sandbox?.sandboxed, true);
  const plant = async (path: string) =>
    (
      (await prober.callTool('plant', { path, text: 'export default async () => ({})' })).content as { text: string }[]
    )[0]!.text;
  for (const dir of ['plugin', 'plugins']) {
    // Refused by the read-only mount (Node's recursive mkdir reports it as EROFS or ENOENT).
    assert.match(await plant(join(box.workspace, '.opencode', dir, 'planted.js')), /^(EROFS|ENOENT)$/, dir);
  }
  // The rest of the workspace stays the service's to write.
  assert.equal(await plant(join(box.workspace, 'notes', 'ok.txt')), 'ok');
  await services.close();
  await assertNoMarkedProcess(box.project);
  assert.deepEqual(readdirSync(join(box.workspace, '.opencode')), []);
});
