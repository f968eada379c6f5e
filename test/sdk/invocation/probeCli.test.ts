import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { assertAllGone, assertNoMarkedProcess, fixtureDefinition, killMarked, tempDir } from './helpers.ts';
import { ERROR_FIXES } from '../../../packages/sdk/src/errors.js';

const BIN = new URL('../../../packages/cli/bin/scienceevolve.js', import.meta.url).pathname;

/** `scienceevolve services probe` of agent `main` in `dir`, a 300 ms grace, then `extra`. */
function probeArgs(dir: string, project: string, workflow: string, extra: string[]): string[] {
  return [
    BIN,
    'services',
    'probe',
    '--data-dir',
    join(dir, 'data'),
    '--project',
    project,
    '--workflow',
    workflow,
    '--workspace',
    join(dir, 'ws'),
    '--agent',
    'main',
    '--grace-ms',
    '300',
    ...extra,
  ];
}

function writeWorkflow(dir: string, workflow: unknown): string {
  const path = join(dir, 'workflow.json');
  writeFileSync(path, JSON.stringify(workflow));
  return path;
}

test('probe: misbehaving-but-working services are all ready with their tools, and nothing survives', async (t) => {
  const dir = tempDir(t);
  const project = `probe-ok-${process.pid}`;
  t.after(() => killMarked(project));
  const pidsFile = join(dir, 'pids.json');
  const workflow = writeWorkflow(dir, {
    agents: {
      main: {
        mcpServers: [
          { name: 'banner', project: 'banner' },
          { name: 'progress', project: 'progress' },
          { name: 'flood', project: 'flood' },
          { name: 'stubborn', project: 'stubborn' },
          { name: 'spawner', project: 'spawner' },
          { name: 'spawner-alias', project: 'spawner' },
        ],
      },
    },
    mcpDefinitions: {
      banner: fixtureDefinition('printsBannerOnStdout.cjs'),
      progress: fixtureDefinition('progressBarBeforeAnswer.cjs'),
      flood: fixtureDefinition('floodsStderr.cjs'),
      stubborn: fixtureDefinition('ignoresSigterm.cjs'),
      // Opted out of the sandbox: it writes the host pids of its grandchildren to a file outside its
      // workspace, for the test to prove them gone (inside a sandbox both the file and the pids are its own).
      spawner: { ...fixtureDefinition('spawnsGrandchildren.cjs', { args: [pidsFile] }), sandbox: false },
    },
  });
  const result = spawnSync(process.execPath, probeArgs(dir, project, workflow, ['--json']), {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout) as {
    project: string;
    runtimePath: string;
    services: Array<{ name: string; state: string; pid: number; pgid: number; tools: string[]; error: unknown }>;
  };
  assert.equal(report.project, project);
  assert.deepEqual(
    report.services.map((s) => [s.name, s.state]),
    ['banner', 'progress', 'flood', 'stubborn', 'spawner', 'spawner-alias'].map((n) => [n, 'ready']),
  );
  for (const s of report.services) {
    assert.ok(s.tools.length > 0, `${s.name} lists its tools`);
    assert.equal(s.pid, s.pgid, `${s.name} leads its own group`);
    assert.equal(s.error, null);
  }
  const spawner = report.services.find((s) => s.name === 'spawner')!;
  assert.equal(report.services.find((s) => s.name === 'spawner-alias')!.pid, spawner.pid, 'aliases share one process');
  const pids = JSON.parse(readFileSync(pidsFile, 'utf8')) as { leader: number; inGroup: number; setsid: number };
  await assertAllGone([...report.services.map((s) => s.pid), pids.inGroup, pids.setsid]);
  await assertNoMarkedProcess(project);
  // The flood was drained into a capped log.
  const log = readFileSync(join(report.runtimePath, 'mcp', 'flood.stderr.log'), 'utf8');
  assert.ok(log.length <= 1024 * 1024 + 200);
});

test('probe: services that cannot start are reported failed with their code and log, exit 1', async (t) => {
  const dir = tempDir(t);
  const project = `probe-bad-${process.pid}`;
  t.after(() => killMarked(project));
  const workflow = writeWorkflow(dir, {
    agents: {
      main: {
        mcpServers: [
          { name: 'ok', project: 'ok' },
          { name: 'dies', project: 'dies' },
          { name: 'mute', project: 'mute' },
          { name: 'keyless', project: 'keyless' },
          { name: 'nocommand', project: 'nocommand' },
          { name: 'garbage', project: 'garbage' },
        ],
      },
    },
    mcpDefinitions: {
      ok: fixtureDefinition('plain.cjs'),
      dies: fixtureDefinition('exitsAtStart.cjs'),
      mute: fixtureDefinition('neverAnswersInitialize.cjs'),
      keyless: fixtureDefinition('needsEnv.cjs', { envFrom: { API_KEY: 'SE_TEST_SURELY_UNSET' } }),
      nocommand: fixtureDefinition('plain.cjs', { command: 'se-no-such-command' }),
      garbage: fixtureDefinition('writesInvalidUtf8.cjs'),
    },
  });
  const started = Date.now();
  const result = spawnSync(
    process.execPath,
    probeArgs(dir, project, workflow, ['--startup-budget-ms', '6000', '--json']),
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(result.status, 1, result.stderr);
  assert.ok(
    Date.now() - started < 45_000,
    'failures are reported within the budget plus collection, not the 35 s default each',
  );
  const report = JSON.parse(result.stdout) as {
    runtimePath: string;
    services: Array<{
      name: string;
      state: string;
      pid: number | null;
      error: { code: string; remedy: string; log: string | null } | null;
    }>;
  };
  const byName = Object.fromEntries(report.services.map((s) => [s.name, s]));
  assert.equal(byName.dies?.error?.code, 'service_exited');
  assert.equal(byName.dies?.error?.log, join(report.runtimePath, 'mcp', 'dies.stderr.log'));
  assert.equal(byName.mute?.error?.code, 'startup_timeout');
  assert.equal(byName.keyless?.error?.code, 'missing_env');
  // Each failure carries what to do about it: its own remedy (the variable to set), else its code's fix.
  assert.match(byName.keyless?.error?.remedy ?? '', /export|set/i);
  assert.equal(byName.dies?.error?.remedy, ERROR_FIXES.service_exited);
  assert.equal(byName.nocommand?.error?.code, 'command_not_found');
  assert.equal(byName.garbage?.error?.code, 'protocol_error');
  assert.equal(byName.ok?.error, null, 'a service that started is reported ready even though the invocation failed');
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  await assertAllGone(report.services.flatMap((s) => (s.pid ? [s.pid] : [])));
  await assertNoMarkedProcess(project);
});

/** Starts `services probe --hold-ms 60000` of a spawner (setsid grandchild) and a SIGTERM-ignoring service; resolves once it printed its report. */
async function startHeldProbe(t: TestContext, label: string) {
  const dir = tempDir(t);
  const project = `probe-${label}-${process.pid}`;
  t.after(() => killMarked(project));
  const pidsFile = join(dir, 'pids.json');
  const workflow = writeWorkflow(dir, {
    agents: {
      main: {
        mcpServers: [
          { name: 'spawner', project: 'spawner' },
          { name: 'stubborn', project: 'stubborn' },
        ],
      },
    },
    mcpDefinitions: {
      // Opted out of the sandbox: it writes the host pids of its grandchildren to a file outside its
      // workspace, for the test to prove them gone (inside a sandbox both the file and the pids are its own).
      spawner: { ...fixtureDefinition('spawnsGrandchildren.cjs', { args: [pidsFile] }), sandbox: false },
      stubborn: fixtureDefinition('ignoresSigterm.cjs'),
    },
  });
  const child = spawn(process.execPath, probeArgs(dir, project, workflow, ['--hold-ms', '60000', '--json']), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let stdout = '';
  child.stdout.setEncoding('utf8');
  const report = await new Promise<{ services: Array<{ pid: number; state: string }> }>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      try {
        resolve(JSON.parse(stdout));
      } catch {
        // not complete yet
      }
    });
    child.on('exit', (code) => reject(new Error(`probe exited early with ${code}`)));
  });
  const grandchildren = JSON.parse(readFileSync(pidsFile, 'utf8')) as { inGroup: number; setsid: number };
  const pids = [...report.services.map((s) => s.pid), grandchildren.inGroup, grandchildren.setsid];
  return { child, project, report, pids };
}

test('probe --hold-ms: services stay up until SIGINT, then every process is collected', async (t) => {
  const { child, project, report, pids } = await startHeldProbe(t, 'hold');
  assert.deepEqual(
    report.services.map((s) => s.state),
    ['ready', 'ready'],
  );
  for (const pid of pids) assert.doesNotThrow(() => process.kill(pid, 0), `pid ${pid} is up while held`);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  assert.equal(await exited, 0);
  await assertAllGone(pids);
  await assertNoMarkedProcess(project);
});

test('probe --hold-ms, host SIGKILLed: the supervisor collects every service, the setsid grandchild included', async (t) => {
  const { child, project, pids } = await startHeldProbe(t, 'kill');
  child.kill('SIGKILL');
  // Grace 300 ms + 1 s is the goal; the deadline is wider so a loaded CI machine does not flake.
  await assertAllGone(pids, 10_000);
  await assertNoMarkedProcess(project);
});
