/**
 * An invocation at the limit of 32 services: every start listens on the invocation's one cancel signal
 * (its wait at the admission gate, then its budget), which passes Node's default of 10 listeners per
 * signal. That is expected, not a leak, and must not print a `MaxListenersExceededWarning` on the host's
 * stderr (the scale benchmark showed it). The 32 starts queue behind a held gate place and are cancelled
 * there, so nothing is launched; the test proves that no process of the project exists afterwards.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startInvocationServices } from '../../../packages/sdk/src/invocation/invocation.ts';
import { StartGate } from '../../../packages/sdk/src/processes/admission.ts';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';
import { readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { LIMITS } from '../../../packages/sdk/src/workflow/limits.ts';
import { assertNoMarkedProcess, fixtureDefinition, killMarked, tempDir } from './helpers.ts';

test('32 services queued on one invocation print no MaxListenersExceededWarning; cancelled, none launches', {
  timeout: 30_000,
}, async (t) => {
  const count = LIMITS.serversPerAgent;
  const project = `many${Date.now()}${Math.floor(Math.random() * 1000)}`;
  const dataDir = tempDir(t);
  const workspace = tempDir(t, 'se-ws-');
  t.after(() => killMarked(project));
  const mcpDefinitions: Record<string, unknown> = {};
  const mcpServers: Array<{ name: string; project: string }> = [];
  for (let i = 1; i <= count; i++) {
    mcpDefinitions[`s${i}`] = fixtureDefinition('plain.cjs', { args: [String(i)] });
    mcpServers.push({ name: `s${i}`, project: `s${i}` });
  }
  await loadWorkflow({ dataDir, project, workflow: { agents: { main: { mcpServers } }, mcpDefinitions } });
  const paths = await openProject(dataDir, project);
  const version = (await readAccepted(paths))!;

  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));

  const gate = new StartGate(1);
  const held = await gate.admit();
  t.after(() => held.release());
  const abort = new AbortController();
  const starting = startInvocationServices({
    paths,
    version,
    agent: 'main',
    runId: 'r-many',
    workspace,
    graceMs: 200,
    startGate: gate,
    signal: abort.signal,
  });
  // Every start copies its source, then queues behind the held place.
  const until = Date.now() + 20_000;
  while (gate.waiting < count && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  assert.equal(gate.waiting, count, 'every start waits at the gate');
  abort.abort(new Error('the test cancels'));
  const services = await starting;
  t.after(() => services.close());
  assert.equal(services.sessions.length, 0);
  assert.equal(services.failures.length, count);
  assert.ok(services.failures.every((f) => f.code === 'startup_timeout' && f.data.cancelled === true));
  // Node emits its warning on a later tick.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(
    warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
    [],
  );
  await services.close();
  await assertNoMarkedProcess(project);
});
