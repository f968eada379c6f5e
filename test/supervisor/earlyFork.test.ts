/**
 * The probe's start order (docs/decisions/probe-start.md): the host's supervisor is forked before the SDK's
 * store and schemas load, and a project service's leader is spawned before the session code and the MCP
 * client load. The supervised-spawn order is unchanged — the marker (and the control group) announced and
 * acknowledged before the spawn, the group registered right after — and these tests kill the host inside
 * the new window: its service spawned, the MCP client not loaded yet, the supervisor an early fork that the
 * start adopted. Run against the built SDK (`npm run build` first).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cgroupSupport } from '@scienceevolve/supervisor/cgroup';
import { isProcessAlive } from '@scienceevolve/supervisor';
import { forkSharedSupervisorEarly, closeSharedSupervisor } from '../../packages/sdk/src/processes/sharedSupervisor.js';
import { SupervisorClient, forkSupervisor } from '../../packages/sdk/src/processes/supervisorClient.js';
import { loadWorkflow } from '../../packages/sdk/src/store/workflowLoad.js';
import { type HostLine, exists, tempDir, testMarker, uniqueProjectId, waitGone } from './helpers.js';

const root = new URL('../..', import.meta.url).pathname;
const HOST = join(root, 'test/fixtures/supervisor/earlyForkHost.mjs');
const HOOKS = join(root, 'test/fixtures/cli/moduleLog.mjs');
const support = cgroupSupport();

/** A project whose agent `solo` has one service that just stays alive (sandbox off: its pid is the host's view). */
async function project(dir: string, projectId: string): Promise<{ dataDir: string; workspace: string }> {
  const dataDir = join(dir, 'data');
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  const source = readFileSync(join(root, 'test/fixtures/supervisor/loops.cjs'), 'utf8');
  await loadWorkflow({
    dataDir,
    project: projectId,
    workflow: {
      orchestration: { sandbox: 'off' },
      agents: {
        main: { instructions: 'x', mcpServers: [] },
        solo: { instructions: 'x', mcpServers: [{ name: 'loops', project: 'loops' }] },
      },
      mcpDefinitions: { loops: { command: 'node', entrypoint: 'loops.cjs', files: { 'loops.cjs': source } } },
    },
  });
  return { dataDir, workspace };
}

/** The service cgroup directories of host `pid`, in every hierarchy. */
function cgroupDirsOf(pid: number): string[] {
  const dirs: string[] = [];
  for (const base of support.bases) {
    const top = join(base, 'scienceevolve');
    if (!existsSync(top)) continue;
    for (const host of readdirSync(top)) if (host.startsWith(`${pid}-`)) dirs.push(join(top, host));
  }
  return dirs;
}

/** Runs the early-fork host to its SIGKILL; returns its one line, its pid and the modules it had loaded. */
async function killedHost(
  t: import('node:test').TestContext,
  killBeforeRegister: boolean,
): Promise<{ line: HostLine; hostPid: number; loaded: string[]; logPath: string }> {
  const dir = tempDir(t);
  const projectId = uniqueProjectId();
  const { dataDir, workspace } = await project(dir, projectId);
  const moduleLog = join(dir, 'modules.log');
  writeFileSync(moduleLog, '');
  const config = { dataDir, project: projectId, workspace, agent: 'solo', killBeforeRegister };
  const child = spawn(process.execPath, ['--import', HOOKS, HOST, JSON.stringify(config)], {
    cwd: root,
    env: { ...process.env, SCIENCEEVOLVE_MODULE_LOG: moduleLog },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const pids: number[] = [];
  t.after(() => {
    for (const pid of pids) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  });
  const [, signal] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  const line = JSON.parse(stdout.trim().split('\n')[0] ?? '{}') as HostLine;
  pids.push(line.pgid as number, line.supervisorPid as number);
  assert.equal(signal, 'SIGKILL', `the host killed itself at the spawn: ${stdout} ${stderr}`);
  const logPath = join(dataDir, 'projects', projectId, 'supervisor', `host-${child.pid}.log`);
  // ESM loads went through the hook as they happened; the list stops where the host died.
  const loaded = readFileSync(moduleLog, 'utf8').split('\n').filter(Boolean);
  return { line, hostPid: child.pid!, loaded, logPath };
}

for (const killBeforeRegister of [false, true]) {
  const when = killBeforeRegister ? 'between its spawn and its registration' : 'right after its registration';
  test(`host SIGKILLed ${when}, before the MCP client loaded: the early-forked supervisor collects the service`, async (t) => {
    const { line, hostPid, loaded, logPath } = await killedHost(t, killBeforeRegister);
    const pgid = line.pgid as number;
    const supervisorPid = line.supervisorPid as number;
    // The window is the new one: the service ran before any MCP code or session code had loaded.
    assert.ok(
      loaded.some((m) => m.includes('/packages/sdk/dist/sessions/stdioLaunch.js')),
      'the listing saw the launch',
    );
    assert.deepEqual(
      loaded.filter(
        (m) => m.includes('/node_modules/@modelcontextprotocol/') || m.includes('/sessions/stdioService.js'),
      ),
      [],
      'no MCP client and no session code had loaded when the service was spawned',
    );
    // The supervisor that collects is the early fork, adopted by the start (no second supervisor).
    assert.equal(supervisorPid, line.earlyPid, 'the start adopted the early fork');
    assert.equal(line.generation, 1);

    assert.deepEqual(await waitGone([pgid], 6300), [], 'the service does not outlive its host');
    assert.deepEqual(await waitGone([supervisorPid], 6000), [], 'the supervisor exits once it collected');
    const log = readFileSync(logPath, 'utf8');
    assert.match(log, /state collecting -> done/);
    // What covered the service: its registered group, or (killed before the registration) the intent alone.
    assert.match(log, killBeforeRegister ? /0 group\(s\), 1 marker\(s\)/ : /1 group\(s\), 1 marker\(s\)/);
    if (support.mechanism !== 'process-group') {
      assert.match(log, /intent \S+ cgroup /, 'the control group travelled with the intent');
      assert.deepEqual(cgroupDirsOf(hostPid), [], "the dead host's control groups are removed");
    }
  });
}

test('an early fork that died before the start is replaced: the start forks a new supervisor', async (t) => {
  const logPath = join(tempDir(t), 'supervisor.log');
  const early = forkSupervisor();
  const earlyPid = early.pid!;
  t.after(() => early.kill('SIGKILL'));
  // The fork is unref'd (a host never waits for it): held here while the test waits for its exit.
  early.ref();
  early.kill('SIGKILL');
  await once(early, 'exit');
  const client = await SupervisorClient.start({ logPath, adopt: early });
  t.after(() => client.close());
  assert.notEqual(client.pid, earlyPid);
  assert.equal(client.generation, 1);
  await client.intent(testMarker(uniqueProjectId()));
  assert.equal(client.state, 'ready');
  const pid = client.pid!;
  await client.close();
  assert.deepEqual(await waitGone([pid, earlyPid], 6000), []);
});

test('an early fork nobody adopted ends with the host supervisor closing, having recorded nothing', async (t) => {
  const pid = forkSharedSupervisorEarly();
  assert.ok(pid !== undefined && exists(pid), 'an early supervisor runs');
  t.after(() => {
    if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
  });
  // A second call while one waits forks nothing more.
  assert.equal(forkSharedSupervisorEarly(), undefined);
  await closeSharedSupervisor();
  assert.deepEqual(await waitGone([pid], 6000), [], 'the unadopted supervisor exits');
});

test('@scienceevolve/sdk/probe loads no zod, no store and no MCP code before its supervisor is forked', async (t) => {
  const dir = tempDir(t);
  const moduleLog = join(dir, 'modules.log');
  writeFileSync(moduleLog, '');
  const child = spawn(
    process.execPath,
    ['--import', HOOKS, '--input-type=module', '-e', "await import('@scienceevolve/sdk/probe')"],
    {
      cwd: root,
      env: { ...process.env, SCIENCEEVOLVE_MODULE_LOG: moduleLog },
      stdio: 'inherit',
    },
  );
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);
  const loaded = readFileSync(moduleLog, 'utf8').split('\n').filter(Boolean);
  assert.ok(
    loaded.some((m) => m.endsWith('/packages/sdk/dist/engine/probeServices.js')),
    'the listing saw the entry',
  );
  assert.deepEqual(
    loaded.filter((m) =>
      /\/node_modules\/(zod|yaml|@modelcontextprotocol)\/|\/packages\/sdk\/dist\/(store|workflow\/workflowSchema)/.test(
        m,
      ),
    ),
    [],
    'what the probe loads before its fork',
  );
});
