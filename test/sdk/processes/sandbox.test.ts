/**
 * Sandboxed services (SPEC §3.3 `sandbox`, §3.1 `network`), with the real bubblewrap of this machine and real
 * services started by the CLI: a service Main proposed runs sandboxed under `auto` and cannot read the host's
 * environment through /proc nor write outside its workspace and data dir; `network: false` cannot reach a
 * listener of the test; `required` without bubblewrap fails with `sandbox_unavailable`; and collection (a
 * stop, a host SIGKILL) leaves nothing. A control run with `sandbox: "off"` shows that each probe does find
 * what the sandbox hides, so the assertions can fail.
 *
 * Slow (about 20–40 s on 2 cores): every case starts the CLI, a supervisor and real services.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { SandboxDecision } from '../../../packages/sdk/src/processes/sandbox.js';
import { openProject } from '../../../packages/sdk/src/store/projectStore.js';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.js';
import { acceptWorkflow } from '../../../packages/sdk/src/store/workflowVersions.js';
import { assertGone, BIN } from '../../e2e/helpers.js';
import { assertNothingLeft, type EngineSandbox, markedProcesses, sandbox } from '../engine/helpers.js';
import { fixtureDefinition } from '../invocation/helpers.js';

/** A value shaped like a cloud secret, set only in the host CLI's environment. */
const SECRET = `AKIA-sandbox-test-${process.pid}-d0n0tl34k`;
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

interface ProbeReport {
  pid: number;
  ppid: number;
  parentEnviron: { ok: boolean; text?: string; code?: string };
  hostEnviron: { ok: boolean; text?: string; code?: string };
  environs: { pid: number; text: string }[];
  writes: Record<string, string>;
  connect: string;
}

interface Probed {
  name: string;
  state: string;
  sandbox: SandboxDecision | null;
  error: { code: string; message: string } | null;
}

/**
 * A project whose version 1 (the operator's) has `notes`, and whose version 2 (accepted as Main's, as an
 * `apply_workflow` does) adds `prober` and `offline` (`network: false`), all assigned to `main`.
 */
async function project(t: TestContext, policy: 'off' | 'auto' | 'required'): Promise<EngineSandbox> {
  const box = await sandbox(t);
  const operator = {
    orchestration: { sandbox: policy },
    agents: { main: { mcpServers: [{ name: 'notes', project: 'notes' }] } },
    mcpDefinitions: { notes: fixtureDefinition('plain.cjs') },
  };
  const path = join(box.base, 'workflow.json');
  await writeFile(path, JSON.stringify(operator));
  await loadWorkflow({ dataDir: box.dataDir, project: box.project, workflow: path });
  const paths = await openProject(box.dataDir, box.project);
  await acceptWorkflow(
    paths,
    {
      ...operator,
      agents: {
        main: {
          mcpServers: [
            { name: 'notes', project: 'notes' },
            { name: 'prober', project: 'prober' },
            { name: 'offline', project: 'offline' },
          ],
        },
      },
      mcpDefinitions: {
        ...operator.mcpDefinitions,
        prober: fixtureDefinition('probesTheSandbox.cjs'),
        offline: { ...fixtureDefinition('probesTheSandbox.cjs'), network: false },
      },
    },
    { by: 'main' },
  );
  return box;
}

function commonArgs(box: EngineSandbox): string[] {
  return ['--data-dir', box.dataDir, '--project', box.project, '--workspace', box.workspace, '--agent', 'main'];
}

/** The host CLI's environment: the test's, plus a secret-looking variable and `extra`. */
function hostEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return { ...env, AWS_SECRET_ACCESS_KEY: SECRET, ...extra };
}

/** A TCP listener of the test on 127.0.0.1, closed after the test. */
async function listener(t: TestContext): Promise<number> {
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}

/** `services probe --json` (or the human report, with `json` false) run to its end with `env`. */
async function probe(t: TestContext, box: EngineSandbox, env: Record<string, string>, json = true) {
  const args = [BIN, 'services', 'probe', ...commonArgs(box), '--grace-ms', '300', ...(json ? ['--json'] : [])];
  const child = spawn(process.execPath, args, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid!;
  t.after(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  await assertGone(pid);
  const services = json ? (JSON.parse(stdout) as { services: Probed[] }).services : [];
  return { code, stdout, stderr, services, byName: (name: string) => services.find((s) => s.name === name)! };
}

/** `services serve` (stdio face) of `box` with `env`, and an MCP client connected to it. */
async function serve(t: TestContext, box: EngineSandbox, env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'services', 'serve', ...commonArgs(box), '--grace-ms', '300'],
    env,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'sandbox-test', version: '1.0.0' });
  await client.connect(transport);
  const pid = transport.pid!;
  t.after(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  });
  const call = async (tool: string, args: Record<string, unknown>): Promise<ProbeReport> => {
    const result = await client.callTool({ name: tool, arguments: args });
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    return JSON.parse((result.content as { text: string }[])[0]!.text) as ProbeReport;
  };
  return { client, pid, call };
}

/** Every place a probe tries to write: its own workspace and data dir, and places it must not touch. */
type WriteTargets = Record<
  'workspace' | 'projectRoot' | 'sourceCopy' | 'dataDir' | 'outside' | 'repository' | 'hostTmp',
  string
>;

/** A sign-in file of the token store (`<dataDir>/auth/<project>/…`), as `auth login` leaves one. */
async function tokenStoreFile(box: EngineSandbox): Promise<string> {
  const dir = join(box.dataDir, 'auth', box.project);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${'0'.repeat(40)}.json`);
  await writeFile(
    path,
    JSON.stringify({ resource: 'https://x/mcp', tokens: { access_token: 'held', token_type: 'bearer' } }),
    {
      mode: 0o600,
    },
  );
  return path;
}

function writeDirs(box: EngineSandbox): WriteTargets {
  const paths = { dataDir: box.dataDir, projectRoot: join(box.dataDir, 'projects', box.project, 'service-data') };
  const runs = join(paths.dataDir, 'projects', box.project, 'runs');
  const serveRun = readdirSync(runs).find((r) => r.startsWith('serve-'))!;
  const invocation = readdirSync(join(runs, serveRun, 'invocations'))[0]!;
  return {
    workspace: box.workspace,
    projectRoot: paths.projectRoot,
    sourceCopy: join(runs, serveRun, 'invocations', invocation, 'mcp', 'prober'),
    dataDir: paths.dataDir,
    outside: box.base,
    repository: REPO,
    hostTmp: '/tmp',
  };
}

test('auto: project services run sandboxed — no host environment, writes only to its workspace and data dir', {
  timeout: 120_000,
}, async (t) => {
  const box = await project(t, 'auto');
  const port = await listener(t);

  // What probe shows: every project service sandboxed under auto, the operator's as Main's (one without network).
  const probed = await probe(t, box, hostEnv());
  assert.equal(probed.code, 0, probed.stderr);
  assert.deepEqual(probed.byName('notes').sandbox, { sandboxed: true, reason: 'auto', network: true });
  assert.deepEqual(probed.byName('prober').sandbox, { sandboxed: true, reason: 'auto', network: true });
  assert.deepEqual(probed.byName('offline').sandbox, { sandboxed: true, reason: 'auto', network: false });
  const text = await probe(t, box, hostEnv(), false);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /notes: ready.*\n(?: {4}.*\n)*? {4}sandboxed: orchestration.sandbox is "auto"/);
  assert.match(text.stdout, /prober: ready.*\n(?: {4}.*\n)*? {4}sandboxed: orchestration.sandbox is "auto"/);
  assert.match(
    text.stdout,
    /offline: ready.*\n(?: {4}.*\n)*? {4}sandboxed, no network: orchestration.sandbox is "auto"/,
  );
  await assertNothingLeft(box.project, []);

  const served = await serve(t, box, hostEnv());
  const dirs = writeDirs(box);
  if (REPO.startsWith('/tmp/')) {
    // A checkout under /tmp (a CI clone) lies in the sandbox's private /tmp: check a directory of the
    // read-only rest of the filesystem instead.
    dirs.repository = mkdtempSync('/var/tmp/se-sandbox-');
    t.after(() => rmSync(dirs.repository, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  }
  const report = await served.call('prober__probe', { hostPid: served.pid, writeDirs: Object.values(dirs), port });
  const offline = await served.call('offline__probe', { hostPid: served.pid, writeDirs: [], port });

  // The environment: nothing the service can read through /proc holds the host's secret.
  assert.equal(report.pid, 2, 'the service is pid 2 of its own PID namespace (bubblewrap is 1)');
  assert.ok(report.environs.length > 0, 'it could read its own environment');
  for (const { pid, text } of report.environs) assert.ok(!text.includes(SECRET), `/proc/${pid}/environ has the secret`);
  assert.ok(!(report.parentEnviron.text ?? '').includes(SECRET), '/proc/$PPID/environ has the secret');
  assert.ok(!(report.hostEnviron.text ?? '').includes(SECRET), `/proc/${served.pid}/environ has the secret`);

  // Writes: the workspace and the services' data dir only; each file it wrote is where the host sees it.
  const name = `written-by-${report.pid}.txt`;
  assert.equal(report.writes[dirs.workspace], 'ok');
  assert.ok(existsSync(join(dirs.workspace, name)), 'the workspace write reached the host');
  assert.equal(report.writes[dirs.projectRoot], 'ok');
  assert.ok(existsSync(join(dirs.projectRoot, name)));
  // The source copy and the repository are read-only binds. The data dir and the test's base directory lie
  // under /tmp here, which is a private tmpfs inside: a write there may succeed, but nothing reaches the host.
  assert.equal(report.writes[dirs.sourceCopy], 'EROFS', 'the source copy is read-only');
  assert.equal(report.writes[dirs.repository], 'EROFS', 'the rest of the filesystem is read-only');
  for (const key of ['sourceCopy', 'dataDir', 'outside', 'repository', 'hostTmp'] as const) {
    assert.equal(existsSync(join(dirs[key], name)), false, `${key} (${dirs[key]}): nothing written on the host`);
  }

  // Network: on by default; off with `network: false` (a loopback of its own, where nothing listens).
  assert.equal(report.connect, 'connected');
  assert.notEqual(offline.connect, 'connected');

  // The token store (remote sign-ins) lies in the hidden data dir: not there for the service.
  const tokens = await tokenStoreFile(box);
  const reach = (await served.call('prober__reach', { paths: [tokens] })) as unknown as {
    read: Record<string, string>;
  };
  assert.notEqual(reach.read[tokens], 'ok', 'a sandboxed service reads the token store');

  await served.client.close();
  await assertGone(served.pid);
  await assertNothingLeft(box.project, []);
});

test('control, sandbox "off": the same probes find the secret and write outside, so the test above can fail', {
  timeout: 120_000,
}, async (t) => {
  const box = await project(t, 'off');
  const port = await listener(t);
  const probed = await probe(t, box, hostEnv());
  assert.equal(probed.code, 0, probed.stderr);
  assert.deepEqual(probed.byName('prober').sandbox, { sandboxed: false, reason: 'policy_off', network: true });
  assert.deepEqual(probed.byName('offline').sandbox, {
    sandboxed: false,
    reason: 'policy_off',
    network: true,
    detail: '"network": false has no effect outside the sandbox',
  });
  await assertNothingLeft(box.project, []);

  const served = await serve(t, box, hostEnv());
  const dirs = writeDirs(box);
  const report = await served.call('prober__probe', {
    hostPid: served.pid,
    writeDirs: [dirs.outside, dirs.sourceCopy],
    port,
  });
  t.after(() => rmSync(join(dirs.outside, `written-by-${report.pid}.txt`), { force: true }));
  assert.equal(report.ppid, served.pid, "the service's parent is the host");
  assert.ok(report.parentEnviron.text?.includes(SECRET), "unsandboxed, /proc/$PPID/environ shows the host's secret");
  assert.equal(report.writes[dirs.outside], 'ok');
  assert.equal(report.connect, 'connected');
  const tokens = await tokenStoreFile(box);
  const reach = (await served.call('prober__reach', { paths: [tokens] })) as unknown as {
    read: Record<string, string>;
  };
  assert.equal(reach.read[tokens], 'ok', 'unsandboxed, the token store is readable (so the test above can fail)');
  await served.client.close();
  await assertGone(served.pid);
  await assertNothingLeft(box.project, []);
});

test('required without bubblewrap: sandbox_unavailable, nothing started; auto without it: unsandboxed, saying why', {
  timeout: 120_000,
}, async (t) => {
  const missing = join(REPO, 'no-such-bwrap');
  const required = await project(t, 'required');
  const failed = await probe(t, required, hostEnv({ SCIENCEEVOLVE_BWRAP: missing }));
  assert.equal(failed.code, 1);
  for (const name of ['notes', 'prober', 'offline']) {
    const s = failed.byName(name);
    assert.equal(s.state, 'failed');
    assert.equal(s.error?.code, 'sandbox_unavailable', name);
    assert.match(s.error?.message ?? '', new RegExp(`service "${name}".*"required".*no-such-bwrap does not exist`));
  }
  await assertNothingLeft(required.project, []);

  const auto = await project(t, 'auto');
  const fallback = await probe(t, auto, hostEnv({ SCIENCEEVOLVE_BWRAP: missing }));
  assert.equal(fallback.code, 0, fallback.stderr);
  assert.deepEqual(fallback.byName('prober').sandbox, {
    sandboxed: false,
    reason: 'unavailable',
    network: true,
    detail: `SCIENCEEVOLVE_BWRAP=${missing} does not exist or is not executable`,
  });
  assert.equal(fallback.byName('offline').sandbox?.sandboxed, false);
  assert.equal(fallback.byName('offline').sandbox?.reason, 'unavailable');
  await assertNothingLeft(auto.project, []);
});

test('required: sandboxed services with a setsid grandchild and a SIGTERM-ignorer are collected by a stop and after a host SIGKILL', {
  timeout: 120_000,
}, async (t) => {
  for (const ending of ['SIGINT', 'SIGKILL'] as const) {
    const box = await sandbox(t);
    const path = join(box.base, 'workflow.json');
    await writeFile(
      path,
      JSON.stringify({
        orchestration: { sandbox: 'required' },
        agents: {
          main: {
            mcpServers: [
              { name: 'prober', project: 'prober' },
              { name: 'stubborn', project: 'stubborn' },
            ],
          },
        },
        mcpDefinitions: {
          prober: fixtureDefinition('probesTheSandbox.cjs'),
          stubborn: fixtureDefinition('ignoresSigterm.cjs'),
        },
      }),
    );
    const child = spawn(
      process.execPath,
      [BIN, 'services', 'probe', ...commonArgs(box), '--workflow', path, '--grace-ms', '300', '--hold', '60', '--json'],
      { env: hostEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const pid = child.pid!;
    t.after(() => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    await new Promise<void>((resolve, reject) => {
      const check = () => {
        if (/holding the services/.test(stderr) && stdout.trimEnd().endsWith('}')) resolve();
      };
      child.stderr.on('data', check);
      child.stdout.on('data', check);
      void closed.then(() => reject(new Error(`the probe ended before holding:\n${stderr}`)));
    });
    const services = (JSON.parse(stdout) as { services: Probed[] }).services;
    for (const s of services) assert.deepEqual(s.sandbox, { sandboxed: true, reason: 'required', network: true });
    // Per service: bubblewrap, its PID-namespace init and the service; the prober's setsid grandchild too.
    const marked = markedProcesses(box.project);
    assert.ok(marked.length >= 7, `every sandboxed process carries the marker on the host: ${marked.join(' ')}`);
    child.kill(ending);
    await closed;
    for (const p of marked) await assertGone(p);
    await assertNothingLeft(box.project, []);
  }
});
