/**
 * Every CLI command's `--json` document, parsed by its zod schema (packages/sdk/src/schemas/cliDocuments.ts,
 * from which docs/cli.md's "`--json` shapes" table is generated): each command is run for real (the built
 * bin, real services, supergateway, a host killed mid-run for `resume`), and its document must have every
 * required key, no key the schema does not list (the schemas are strict), and the stated value types. The
 * last test proves every document was checked.
 *
 * Slow (about 30–60 s on 2 cores): a probe, a serve, a gateway and three runs start real Node services.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { cgroupSupport } from '@scienceevolve/supervisor/cgroup';
import { parseMarker } from '@scienceevolve/supervisor/protocol';
import { scanMarkedProcesses } from '@scienceevolve/supervisor/procfs';
import { startRun } from '../../packages/sdk/src/engine/runs.js';
import { loadWorkflow } from '../../packages/sdk/src/store/workflowLoad.js';
import { assertGone, BIN, LAB_SERVICE, spawnNode } from '../e2e/helpers.js';
import { runCliToEnd, startCli } from '../fixtures/engine/cli.js';
import { agent, fixtureDefinition } from '../fixtures/engine/workflows.js';
import { assertNothingLeft, type EngineSandbox, markedProcesses, sandbox } from '../sdk/engine/helpers.js';
import { startRedis, startWorker } from '../queue/helpers.js';
import { CLI_DOCUMENTS, type CliDocumentName } from '../../packages/sdk/src/schemas/cliDocuments.js';
import { recordProblem } from '../../packages/sdk/src/schemas/parseRecord.js';

const checked = new Set<string>();

/** Asserts `doc` parses by the schema of `command`'s document, and records the document as checked. */
function assertShape(command: CliDocumentName, doc: unknown): void {
  assert.ok(doc !== undefined, `${command} printed a JSON document`);
  const result = CLI_DOCUMENTS[command].safeParse(doc);
  assert.ok(
    result.success,
    `${command} --json differs from its schema (docs/cli.md): ${result.error?.issues
      .map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`)
      .join('; ')}\n${JSON.stringify(doc, null, 2)}`,
  );
  checked.add(command);
}

/**
 * The workflow of these tests: Main with a notes service and a slow one (runs), and a `checker` agent whose
 * second service exits at start (a probe with a ready and a failed service).
 */
function workflow(instructions = ''): Record<string, unknown> {
  return {
    agents: {
      main: agent(
        [
          ['notes', 'notes'],
          ['slow', 'slow'],
        ],
        instructions,
      ),
      checker: agent([
        ['notes', 'notes'],
        ['broken', 'broken'],
      ]),
    },
    mcpDefinitions: {
      notes: fixtureDefinition('notesService.cjs'),
      slow: fixtureDefinition('sleepsOnCall.cjs'),
      broken: fixtureDefinition('exitsAtStart.cjs'),
    },
  };
}

/** A sandbox with the workflow written to `workflow.json` (and loaded as version 1 when `load`). */
async function project(t: TestContext, load: boolean): Promise<EngineSandbox & { workflowPath: string }> {
  const box = await sandbox(t);
  const workflowPath = join(box.base, 'workflow.json');
  await writeFile(workflowPath, JSON.stringify(workflow()));
  if (load) await loadWorkflow({ dataDir: box.dataDir, project: box.project, workflow: workflowPath });
  return { ...box, workflowPath };
}

test('the document schemas are strict: a missing, unexpected or mistyped key is named', () => {
  const good = { ok: false, errors: [{ code: 'invalid_workflow', path: '$.agents', message: 'm' }] };
  const schema = CLI_DOCUMENTS.validate;
  assert.equal(recordProblem(schema, good), undefined);
  const cases: Array<[unknown, string]> = [
    [{ errors: [] }, 'field "ok" is missing'],
    [{ ...good, extra: 1 }, 'the document has unexpected keys "extra"'],
    [{ ...good, ok: 'yes' }, 'field "ok" is not a boolean'],
    [{ ...good, errors: [{ code: 'c', path: 'p' }] }, 'field "errors.0.message" is missing'],
    [[], 'the document is not an object'],
  ];
  for (const [value, problem] of cases) assert.equal(recordProblem(schema, value), problem, JSON.stringify(value));
  // A key named like an Object.prototype property is not taken as present.
  assert.equal(recordProblem(CLI_DOCUMENTS.version, {}), 'field "version" is missing');
  assert.equal(
    recordProblem(CLI_DOCUMENTS.version, JSON.parse('{"version": "1", "constructor": 1}')),
    'the document has unexpected keys "constructor"',
  );
});

test('validate --json, valid and invalid; --version --json', async (t) => {
  const box = await project(t, false);
  const valid = await runCliToEnd(t, ['validate', box.workflowPath, '--json']);
  assert.equal(valid.code, 0, valid.stderr);
  assertShape('validate', valid.json);
  const faulty = join(box.base, 'faulty.json');
  await writeFile(faulty, JSON.stringify({ agents: { main: { mcpServers: [{ name: 'x', project: 'missing' }] } } }));
  const invalid = await runCliToEnd(t, ['validate', faulty, '--json']);
  assert.equal(invalid.code, 1, invalid.stderr);
  assert.ok((invalid.json as { errors: unknown[] }).errors.length > 0, 'the faulty workflow has errors to check');
  assertShape('validate', invalid.json);
  const version = await runCliToEnd(t, ['--version', '--json']);
  assert.equal(version.code, 0, version.stderr);
  assertShape('version', version.json);
});

test('workflow load / show / history / diff, migrate, harness-config and the error document', async (t) => {
  const box = await project(t, false);
  const common = ['--data-dir', box.dataDir, '--project', box.project];
  const first = await runCliToEnd(t, ['workflow', 'load', box.workflowPath, ...common, '--json']);
  assert.equal(first.code, 0, first.stderr);
  assertShape('workflow load', first.json);
  await writeFile(box.workflowPath, JSON.stringify(workflow('the second version')));
  const second = await runCliToEnd(t, ['workflow', 'load', box.workflowPath, ...common, '--json']);
  assert.equal((second.json as { version: number }).version, 2, second.stderr);
  assertShape('workflow load', second.json);

  const show = await runCliToEnd(t, ['workflow', 'show', ...common, '--json']);
  assert.equal(show.code, 0, show.stderr);
  assertShape('workflow show', show.json);
  const history = await runCliToEnd(t, ['workflow', 'history', ...common, '--json']);
  assert.equal((history.json as { versions: unknown[] }).versions.length, 2, history.stderr);
  assertShape('workflow history', history.json);
  const diff = await runCliToEnd(t, ['workflow', 'diff', '1', '2', ...common, '--json']);
  assert.equal(diff.code, 0, diff.stderr);
  assertShape('workflow diff', diff.json);
  const verify = await runCliToEnd(t, ['workflow', 'verify', ...common, '--json']);
  assert.equal(verify.code, 0, verify.stderr);
  assert.equal((verify.json as { ok: boolean }).ok, true, verify.stdout);
  assertShape('workflow verify', verify.json);
  const migrate = await runCliToEnd(t, ['migrate', '--data-dir', box.dataDir, '--json']);
  assert.equal(migrate.code, 0, migrate.stderr);
  assertShape('migrate', migrate.json);

  const stdio = ['--data-dir', box.dataDir, '--workspace', box.workspace, '--agent', 'main', '--project', box.project];
  for (const args of [
    ['--format', 'claude', ...stdio],
    ['--format', 'codex', '--http', '--url', 'http://127.0.0.1:9/mcp', '--token-env', 'SE_TOKEN'],
  ]) {
    const config = await runCliToEnd(t, ['harness-config', ...args, '--json']);
    assert.equal(config.code, 0, config.stderr);
    assertShape('harness-config', config.json);
  }

  const unknown = await runCliToEnd(t, [
    'workflow',
    'show',
    '--data-dir',
    box.dataDir,
    '--project',
    'nobody',
    '--json',
  ]);
  assert.equal(unknown.code, 1, unknown.stderr);
  assertShape('error', unknown.json);
  const usage = await runCliToEnd(t, ['migrate', '--json']);
  assert.equal(usage.code, 2, usage.stderr);
  assertShape('error', usage.json);
});

test('services probe --json: a ready service and a failed one', async (t) => {
  const box = await project(t, true);
  const probe = await runCliToEnd(t, [
    'services',
    'probe',
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    '--workspace',
    box.workspace,
    '--agent',
    'checker',
    '--grace-ms',
    '300',
    '--json',
  ]);
  assert.equal(probe.code, 1, probe.stderr);
  const states = (probe.json as { services: Array<{ state: string }> }).services.map((s) => s.state).sort();
  assert.deepEqual(states, ['failed', 'ready']);
  assertShape('services probe', probe.json);
  // The mechanism that holds on this host, as the SDK decides it (a control group where it may manage them).
  assert.equal((probe.json as { collection: string }).collection, cgroupSupport().mechanism);
  await assertNothingLeft(box.project, []);
});

test('services serve --http prints its ready document; status --json meanwhile lists its live services', async (t) => {
  const box = await project(t, true);
  const serve = spawnNode(t, [
    BIN,
    'services',
    'serve',
    '--data-dir',
    box.dataDir,
    '--project',
    box.project,
    '--workspace',
    box.workspace,
    '--agent',
    'main',
    '--http',
    '--port',
    '0',
    '--token-file',
    join(box.base, 'token'),
    '--grace-ms',
    '300',
    '--json',
  ]);
  assertShape('services serve --http', await serve.json(60_000));

  const status = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--json']);
  assert.equal(status.code, 0, status.stderr);
  const live =
    (status.json as { projects: Array<{ liveServices: { pgid: number }[] }> }).projects[0]?.liveServices ?? [];
  // One process group per service: sandboxed (the default), a group holds bubblewrap, its init and the service.
  assert.equal(new Set(live.map((l) => l.pgid)).size, 2, 'the two services of the serve are live');
  assertShape('status', status.json);

  serve.child.kill('SIGTERM');
  assert.deepEqual(await serve.exited, { code: 0, signal: null });
  await assertNothingLeft(box.project, []);
});

test('gateway --json: the checked endpoint', async (t) => {
  const box = await sandbox(t);
  const gateway = spawnNode(t, [
    BIN,
    'gateway',
    '--stdio',
    `${JSON.stringify(process.execPath)} ${JSON.stringify(LAB_SERVICE)}`,
    '--port',
    '0',
    '--log-dir',
    join(box.base, 'gateway-logs'),
    '--grace-ms',
    '300',
    '--json',
  ]);
  const doc = await gateway.json<{ pgid: number; pid: number }>(60_000);
  // The safety net for supergateway's group, should the test fail before its proofs.
  t.after(() => {
    try {
      process.kill(-doc.pgid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  assertShape('gateway', doc);
  const ours = () =>
    scanMarkedProcesses((m) => {
      const marker = parseMarker(m);
      return marker?.projectId === 'gateway' && marker.hostPid === gateway.pid;
    }).map((p) => p.pid);
  assert.ok(ours().length > 0, 'the gateway marks what it starts');
  gateway.child.kill('SIGTERM');
  assert.deepEqual(await gateway.exited, { code: 0, signal: null });
  await assertGone(doc.pid);
  const deadline = Date.now() + 10_000;
  while (ours().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.deepEqual(ours(), []);
});

test('run --json, status --json of an interrupted run, resume --json', async (t) => {
  const box = await project(t, true);
  const script = (steps: unknown[]) => {
    const path = join(box.base, `script-${steps.length}-${Date.now()}.json`);
    return writeFile(path, JSON.stringify({ agents: { main: steps } })).then(() => path);
  };
  const common = ['--data-dir', box.dataDir, '--project', box.project, '--grace-ms', '300'];
  const runArgs = ['run', ...common, '--workspace', box.workspace, '--workflow', box.workflowPath];

  const quick = await script([
    { call: 'notes__write', arguments: { name: 'n.txt', text: 'hi' } },
    { final: 'wrote: {{0}}' },
  ]);
  const run = await runCliToEnd(t, [...runArgs, '--script', quick, '--json', 'write a note']);
  assert.equal(run.code, 0, run.stderr);
  assertShape('run', run.json);

  const failing = await script([{ call: 'notes__nope', arguments: {} }]);
  const failed = await runCliToEnd(t, [...runArgs, '--script', failing, '--json', 'call what is not there']);
  assert.equal(failed.code, 1, failed.stderr);
  assertShape('run', failed.json);

  const slow = await script([{ call: 'slow__sleep', arguments: { ms: 1500 } }, { final: 'slept' }]);
  const host = startCli(t, [...runArgs, '--script', slow, 'sleep']);
  await host.waitForStderr(/\[main\] calling slow__sleep/);
  process.kill(host.pid, 'SIGKILL');
  assert.equal(await host.exited, null);
  await assertGone(host.pid);
  // The dead host's supervisor collects its services (SIGTERM, 300 ms grace, SIGKILL).
  const deadline = Date.now() + 10_000;
  while (markedProcesses(box.project).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }

  const status = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--project', box.project, '--json']);
  const runs = (status.json as { projects: Array<{ runs: Array<{ status: string }> }> }).projects[0]!.runs;
  assert.deepEqual(runs.map((r) => r.status).sort(), ['failed', 'interrupted', 'succeeded'], status.stderr);
  assertShape('status', status.json);

  const resumed = await runCliToEnd(t, ['resume', ...common, '--json']);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal((resumed.json as { runs: unknown[] }).runs.length, 1);
  assertShape('resume', resumed.json);
  await assertNothingLeft(box.project, []);
});

test('status --json and human while a run has a prestarted set waiting', async (t) => {
  const box = await sandbox(t);
  const handle = startRun({
    ...box,
    workflow: {
      agents: { main: agent([['slow', 'slow']]), analyst: agent([['notes', 'notes']]) },
      mcpDefinitions: { notes: fixtureDefinition('notesService.cjs'), slow: fixtureDefinition('sleepsOnCall.cjs') },
    },
    script: {
      agents: {
        main: [
          { call: 'scienceevolve__delegate', arguments: { agent: 'analyst', task: 'where' } },
          // Long enough for the set prestarted for the analyst's next invocation to be seen waiting.
          { call: 'slow__sleep', arguments: { ms: 6000 } },
          { final: 'ok' },
        ],
        analyst: [{ call: 'notes__where' }, { final: '{{0}}' }],
      },
    },
    requirement: 'prestart status',
    graceMs: 300,
  });
  let json: unknown;
  let waiting: { invocation: string; agent: string }[] = [];
  const deadline = Date.now() + 30_000;
  while (waiting.length === 0 && Date.now() < deadline) {
    const status = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--project', box.project, '--json']);
    json = status.json;
    const runs = (json as { projects?: Array<{ runs: Array<{ prestarted: typeof waiting }> }> } | undefined)
      ?.projects?.[0]?.runs;
    waiting = runs?.[0]?.prestarted ?? [];
  }
  const human = await runCliToEnd(t, ['status', '--data-dir', box.dataDir, '--project', box.project]);
  const result = await handle.result;
  t.after(() => assertNothingLeft(box.project, result.events));
  assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
  assert.equal(waiting.length, 1, 'status --json listed the waiting set');
  assertShape('status', json);
  assert.equal(waiting[0]!.agent, 'analyst');
  assert.match(
    human.stdout,
    new RegExp(
      `prestarted for analyst ${waiting[0]!.invocation}: since \\S+, services notes \\(pid \\d+\\), collected if unused at \\S+`,
    ),
    human.stdout,
  );
});

test('workflow pack --out / unpack, schema --out, init', async (t) => {
  const box = await sandbox(t);
  const flow = join(box.base, 'flow');
  const init = await runCliToEnd(t, ['init', flow, '--json']);
  assert.equal(init.code, 0, init.stderr);
  assertShape('init', init.json);
  const out = join(box.base, 'workflow.json');
  const pack = await runCliToEnd(t, ['workflow', 'pack', flow, '--out', out, '--json']);
  assert.equal(pack.code, 0, pack.stderr);
  assertShape('workflow pack --out', pack.json);
  const unpack = await runCliToEnd(t, ['workflow', 'unpack', out, join(box.base, 'again'), '--json']);
  assert.equal(unpack.code, 0, unpack.stderr);
  assertShape('workflow unpack', unpack.json);
  const schema = await runCliToEnd(t, ['schema', '--out', join(box.base, 'workflow.schema.json'), '--json']);
  assert.equal(schema.code, 0, schema.stderr);
  assertShape('schema --out', schema.json);
});

test('ui --json prints its address document and keeps serving until SIGTERM', async (t) => {
  const box = await sandbox(t);
  await mkdir(box.dataDir, { recursive: true });
  const ui = startCli(t, ['ui', '--data-dir', box.dataDir, '--json']);
  await ui.waitForStderr(/viewer of /);
  const doc = JSON.parse(ui.stdout()) as { url: string };
  assertShape('ui', doc);
  assert.match(doc.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
  process.kill(ui.pid, 'SIGTERM');
  assert.equal(await ui.exited, 0, ui.stderr());
  await assertGone(ui.pid);
});

test('worker --json: how it stopped, after a drain', async (t) => {
  const box = await sandbox(t);
  const redis = await startRedis(t, box.base);
  const worker = await startWorker(t, redis.url, join(box.base, 'worker'), ['--json']);
  worker.child.kill('SIGTERM');
  assert.equal(await worker.exited, 0, worker.stderr());
  assertShape('worker', JSON.parse(worker.stdout()));
});

test('every --json document was checked against a real run', () => {
  assert.deepEqual([...checked].sort(), Object.keys(CLI_DOCUMENTS).sort());
});
