/**
 * Security finding 2 and the sandbox's reach (SPEC §3.3): run as root, bubblewrap 0.8 leaves `/proc/sys`
 * writable unless told otherwise, so a sandboxed service could set `kernel/core_pattern` (a program the
 * kernel runs as root at the next crash). Here: a sandboxed service finds every host-wide kernel setting
 * refused; the availability probe refuses a bubblewrap whose sandbox leaves one writable (so `required` fails
 * with `sandbox_unavailable` and `auto` says `unavailable`); `auto` sandboxes the operator's definitions too,
 * hiding the data dir but for the service's own directories, except a definition that opts out; a command
 * whose installation lies under /tmp is bound; a Git-on worktree's `.git` is read-only inside.
 *
 * Nothing here writes a kernel setting: the service only opens files for writing and closes them (see
 * `reach` in probesTheSandbox.cjs). Real bubblewrap, real services; each test collects what it started.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { startInvocationServices } from '../../../packages/sdk/src/invocation/invocation.ts';
import {
  commandTrees,
  probeSandbox,
  type SandboxAvailability,
  sandboxAvailability,
  sandboxCommand,
  sandboxFlags,
} from '../../../packages/sdk/src/processes/sandbox.ts';
import type { ServiceSession } from '../../../packages/sdk/src/sessions/serviceSession.ts';
import { openProject, type ProjectPaths } from '../../../packages/sdk/src/store/projectStore.ts';
import { acceptWorkflow, readAccepted } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { assertAllGone, assertNoMarkedProcess, fixtureDefinition, killMarked, tempDir } from '../invocation/helpers.ts';

const available = await sandboxAvailability(process.env);
const bwrap = available.ok ? available.bwrap : undefined;
const noSandbox =
  bwrap === undefined ? `no working bubblewrap here (${(available as { detail: string }).detail})` : false;

/** The host-wide kernel settings a sandboxed service must not be able to open for writing. */
const KERNEL = [
  '/proc/sys/kernel/core_pattern',
  '/proc/sys/kernel/hostname',
  '/proc/sys/vm/drop_caches',
  '/proc/sysrq-trigger',
  '/sys/kernel/uevent_helper',
  '/sys/kernel/mm/transparent_hugepage/enabled',
];

interface Reach {
  read: Record<string, string>;
  openForWrite: Record<string, string>;
  rename: Record<string, string>;
}

/** A directory outside /tmp (the sandbox's private /tmp would hide it anyway), removed after the test. */
function varTmpDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join('/var/tmp', prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

/** Accepts `workflow` as the operator's and starts main's services; collected after the test. */
async function start(
  t: TestContext,
  workflow: Record<string, unknown>,
  where: { dataDir: string; workspace: string; prepare?: (paths: ProjectPaths) => void },
) {
  const project = `hard${Date.now()}${Math.floor(Math.random() * 1000)}`;
  t.after(() => killMarked(project));
  const paths = await openProject(where.dataDir, project);
  await acceptWorkflow(paths, workflow, { by: 'operator' });
  where.prepare?.(paths);
  const services = await startInvocationServices({
    paths,
    version: (await readAccepted(paths))!,
    agent: 'main',
    runId: 'r1',
    workspace: where.workspace,
    graceMs: 300,
    startupBudgetMs: 60_000,
  });
  t.after(() => services.close());
  const session = (name: string): ServiceSession => {
    const found = services.sessions.find((s) => s.name === name);
    assert.ok(found, `${name} started: ${services.failures.map((f) => f.message).join('; ')}`);
    return found;
  };
  const reach = async (name: string, paths: string[], renames: string[] = []): Promise<Reach> => {
    const result = await session(name).callTool('reach', { paths, renames });
    return JSON.parse((result.content as { text: string }[])[0]!.text) as Reach;
  };
  const stop = async () => {
    const pids = services.sessions.map((s) => (s as unknown as { pid: number }).pid);
    await services.close();
    await assertAllGone(pids);
    await assertNoMarkedProcess(project);
  };
  return { paths, services, session, reach, stop };
}

const uses = (...names: string[]) => ({ main: { mcpServers: names.map((n) => ({ name: n, project: n })) } });

test('a sandboxed service cannot open a host kernel setting for writing (/proc/sys, sysrq-trigger, /sys), under auto and required', {
  skip: noSandbox,
  timeout: 120_000,
}, async (t) => {
  for (const policy of ['required', undefined] as const) {
    const started = await start(
      t,
      {
        ...(policy === undefined ? {} : { orchestration: { sandbox: policy } }),
        agents: uses('prober'),
        mcpDefinitions: { prober: fixtureDefinition('probesTheSandbox.cjs') },
      },
      { dataDir: tempDir(t), workspace: tempDir(t, 'se-ws-') },
    );
    const [outcome] = started.services.outcomes;
    assert.deepEqual(outcome?.sandbox, { sandboxed: true, reason: policy ?? 'auto', network: true });
    const seen = await started.reach('prober', KERNEL);
    for (const path of KERNEL) assert.notEqual(seen.openForWrite[path], 'ok', `${path} opens for writing inside`);
    // The settings that exist everywhere are there and refused as read-only, not merely missing.
    assert.equal(seen.read['/proc/sys/kernel/core_pattern'], 'ok');
    assert.equal(seen.openForWrite['/proc/sys/kernel/core_pattern'], 'EROFS');
    assert.equal(seen.openForWrite['/proc/sys/kernel/hostname'], 'EROFS');
    await started.stop();
  }
});

/** bubblewrap's flags with the given `[flag, path, path]` covers and single flags taken out. */
function weakened(flags: string[], drop: { covers?: string[]; single?: string[] }): string[] {
  const out: string[] = [];
  for (let i = 0; i < flags.length; i++) {
    if (drop.single?.includes(flags[i]!)) continue;
    if (flags[i]!.startsWith('--ro-bind') && drop.covers?.includes(flags[i + 1]!)) {
      i += 2;
      continue;
    }
    out.push(flags[i]!);
  }
  return out;
}

/** The flags of every launch, as `sandboxCommand` writes them before a service's own mounts. */
function launchFlags(): string[] {
  const flags = sandboxFlags({ network: false });
  const { args } = sandboxCommand({ bwrap: 'b', command: '/bin/true', args: [], cwd: '/w', env: {}, network: false });
  assert.deepEqual(args.slice(0, flags.length), flags, 'a launch starts with the flags the probe checks');
  return flags;
}

test('the probe refuses a sandbox that leaves /proc/sys or /sys writable or shares the host UTS namespace', {
  skip: noSandbox,
  timeout: 120_000,
}, async () => {
  const flags = launchFlags();
  assert.deepEqual(await probeSandbox(bwrap!, { flags }), { ok: true, bwrap }, 'the launch flags hold');
  const cases: [string, string[], RegExp][] = [
    // What bubblewrap 0.8 does as root when asked only for the old flags: /proc/sys stays writable.
    [
      'no cover of /proc/sys',
      weakened(flags, { covers: ['/proc/sys'] }),
      /\/proc\/sys\/kernel\/core_pattern opens for writing.*\/proc\/sys\/kernel\/hostname opens for writing/,
    ],
    ['the host UTS namespace', weakened(flags, { single: ['--unshare-uts'] }), /host's UTS namespace/],
    ['/sys bound writable', [...flags, '--bind', '/sys', '/sys'], /\/sys is mounted writable/],
  ];
  for (const [title, weak, expected] of cases) {
    const probed = await probeSandbox(bwrap!, { flags: weak });
    assert.equal(probed.ok, false, title);
    assert.match((probed as { detail: string }).detail, expected, title);
  }
});

test('a bubblewrap whose sandbox leaves /proc/sys writable: required fails with sandbox_unavailable, auto runs unsandboxed saying so', {
  skip: noSandbox,
  timeout: 120_000,
}, async (t) => {
  // A real bubblewrap, with the covers of /proc/sys and the own UTS namespace taken out of every call (what
  // a bubblewrap that skips its own cover does).
  const dir = tempDir(t, 'se-weak-');
  const weak = join(dir, 'bwrap');
  writeFileSync(
    weak,
    `#!/bin/bash
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --ro-bind ] && [ "$2" = /proc/sys ]; then shift 3; continue; fi
  if [ "$1" = --unshare-uts ]; then shift; continue; fi
  args+=("$1"); shift
done
exec ${bwrap} "\${args[@]}"
`,
  );
  chmodSync(weak, 0o755);
  const hostEnv = { ...process.env, SCIENCEEVOLVE_BWRAP: weak };
  const probed: SandboxAvailability = await sandboxAvailability(hostEnv);
  assert.equal(probed.ok, false);
  assert.match((probed as { detail: string }).detail, /core_pattern opens for writing/);

  for (const policy of ['required', 'auto'] as const) {
    const project = `weak${policy}${Date.now()}`;
    t.after(() => killMarked(project));
    const paths = await openProject(tempDir(t), project);
    await acceptWorkflow(
      paths,
      {
        orchestration: { sandbox: policy },
        agents: uses('plain'),
        mcpDefinitions: { plain: fixtureDefinition('plain.cjs') },
      },
      { by: 'operator' },
    );
    const services = await startInvocationServices({
      paths,
      version: (await readAccepted(paths))!,
      agent: 'main',
      runId: 'r1',
      workspace: tempDir(t, 'se-ws-'),
      graceMs: 300,
      hostEnv,
    });
    t.after(() => services.close());
    const [outcome] = services.outcomes;
    if (policy === 'required') {
      assert.equal(outcome?.error?.code, 'sandbox_unavailable');
      assert.match(
        outcome?.error?.message ?? '',
        /"required" and no sandbox is available.*core_pattern opens for writing/,
      );
    } else {
      assert.equal(outcome?.error, undefined);
      assert.equal(outcome?.sandbox?.sandboxed, false);
      assert.equal(outcome?.sandbox?.reason, 'unavailable');
      assert.match(outcome?.sandbox?.detail ?? '', /core_pattern opens for writing/);
    }
    const pids = services.sessions.map((s) => (s as unknown as { pid: number }).pid);
    await services.close();
    await assertAllGone(pids);
    await assertNoMarkedProcess(project);
  }
});

test("auto: the operator's service is sandboxed and cannot reach the run's records in the data dir; an opted-out one can", {
  skip: noSandbox,
  timeout: 120_000,
}, async (t) => {
  // Outside /tmp, so that only the hiding of the data dir (not the private /tmp) keeps it out of reach.
  const dataDir = varTmpDir(t, 'se-data-');
  const workspace = varTmpDir(t, 'se-ws-');
  let records: string[] = [];
  const started = await start(
    t,
    {
      agents: uses('prober', 'trusted'),
      mcpDefinitions: {
        prober: fixtureDefinition('probesTheSandbox.cjs'),
        trusted: { ...fixtureDefinition('probesTheSandbox.cjs'), sandbox: false },
      },
    },
    {
      dataDir,
      workspace,
      // What the host keeps of a run: its record, its journal, a checkpoint; and the accepted workflow.
      prepare: (paths) => {
        const run = paths.runDir('r1');
        mkdirSync(join(run, 'checkpoints'), { recursive: true });
        writeFileSync(join(run, 'run.json'), '{"state":"running"}');
        writeFileSync(join(run, 'events.jsonl'), '{"type":"run.started"}\n');
        writeFileSync(join(run, 'checkpoints', 'main.json'), '{}');
        records = [
          join(run, 'run.json'),
          join(run, 'events.jsonl'),
          join(run, 'checkpoints', 'main.json'),
          paths.acceptedPath,
          join(dataDir, 'format.json'),
        ];
      },
    },
  );
  const decisions = Object.fromEntries(started.services.outcomes.map((o) => [o.planned.name, o.sandbox]));
  assert.deepEqual(decisions, {
    prober: { sandboxed: true, reason: 'auto', network: true },
    trusted: { sandboxed: false, reason: 'opted_out', network: true, detail: 'the definition says "sandbox": false' },
  });
  const own = {
    sourceCopy: join(started.services.runtimePath, 'mcp', 'prober', 'server.cjs'),
    serviceData: join(started.paths.serviceDataDir, 'mine.txt'),
    workspace: join(workspace, 'mine.txt'),
  };
  writeFileSync(own.serviceData, 'x');
  writeFileSync(own.workspace, 'x');

  const sandboxed = await started.reach('prober', [...records, ...Object.values(own)]);
  for (const path of records) {
    assert.equal(sandboxed.read[path], 'ENOENT', `${path} is hidden from the sandboxed service`);
    assert.equal(sandboxed.openForWrite[path], 'ENOENT', `${path} cannot be written`);
  }
  // Its own directories stay in reach: the source copy read-only, the services' data dir and workspace writable.
  assert.equal(sandboxed.read[own.sourceCopy], 'ok');
  assert.equal(sandboxed.openForWrite[own.sourceCopy], 'EROFS');
  for (const path of [own.serviceData, own.workspace]) {
    assert.equal(sandboxed.read[path], 'ok', path);
    assert.equal(sandboxed.openForWrite[path], 'ok', path);
  }

  // The operator's opt-out runs as the host user: the data dir is in its reach (docs/sandbox.md says so).
  const optedOut = await started.reach('trusted', records);
  for (const path of records) {
    assert.equal(optedOut.read[path], 'ok', path);
    assert.equal(optedOut.openForWrite[path], 'ok', path);
  }
  for (const path of records) assert.ok(readFileSync(path, 'utf8').length > 0, `${path} is intact`);
  await started.stop();
});

test('a command whose installation lies under /tmp (hidden by the private /tmp) starts sandboxed, its tree read-only', {
  skip: noSandbox,
  timeout: 120_000,
}, async (t) => {
  // A launcher that runs the interpreter of its own installation: bin/launch → ../libexec/node (a copy of
  // Node: a link would lead outside the installation, to wherever this Node lives — itself under /tmp when
  // CI runs Node 24 from a temporary directory).
  const install = realpathSync(tempDir(t, 'se-install-'));
  mkdirSync(join(install, 'bin'));
  mkdirSync(join(install, 'libexec'));
  copyFileSync(process.execPath, join(install, 'libexec', 'node'));
  chmodSync(join(install, 'libexec', 'node'), 0o755);
  writeFileSync(join(install, 'bin', 'launch'), '#!/bin/sh\nexec "$(dirname "$0")/../libexec/node" "$@"\n');
  chmodSync(join(install, 'bin', 'launch'), 0o755);
  assert.ok(install.startsWith('/tmp/'), 'the installation lies under /tmp');

  const started = await start(
    t,
    {
      agents: uses('prober'),
      mcpDefinitions: {
        prober: fixtureDefinition('probesTheSandbox.cjs', { command: join(install, 'bin', 'launch') }),
      },
    },
    { dataDir: tempDir(t), workspace: tempDir(t, 'se-ws-') },
  );
  const [outcome] = started.services.outcomes;
  assert.equal(outcome?.error, undefined, outcome?.error?.message);
  assert.deepEqual(outcome?.sandbox, { sandboxed: true, reason: 'auto', network: true });
  const seen = await started.reach('prober', [join(install, 'bin', 'launch')]);
  assert.equal(seen.read[join(install, 'bin', 'launch')], 'ok');
  assert.equal(seen.openForWrite[join(install, 'bin', 'launch')], 'EROFS', 'the installation is bound read-only');
  await started.stop();
});

test("what of a command's installation is bound: a venv's root and its interpreter's prefix, never a hidden directory whole", (t) => {
  const base = realpathSync(tempDir(t, 'se-venv-'));
  // A venv under /tmp whose bin/python links to an interpreter also under /tmp (pyenv-like).
  mkdirSync(join(base, 'venv', 'bin'), { recursive: true });
  mkdirSync(join(base, 'pyenv', '3.12', 'bin'), { recursive: true });
  writeFileSync(join(base, 'pyenv', '3.12', 'bin', 'python3.12'), '');
  symlinkSync(join(base, 'pyenv', '3.12', 'bin', 'python3.12'), join(base, 'venv', 'bin', 'python'));
  // A console script of the venv: its #! line names the venv's python.
  writeFileSync(join(base, 'venv', 'bin', 'serve'), `#!${join(base, 'venv', 'bin', 'python')}\nimport x\n`);
  const dataDir = join(base, 'data');
  mkdirSync(join(dataDir, 'bin'), { recursive: true });
  writeFileSync(join(dataDir, 'bin', 'tool'), '');
  const hidden = ['/tmp', dataDir];
  assert.deepEqual(commandTrees(join(base, 'venv', 'bin', 'python'), hidden), [
    join(base, 'venv'),
    join(base, 'pyenv', '3.12'),
  ]);
  assert.deepEqual(commandTrees(join(base, 'venv', 'bin', 'serve'), hidden), [
    join(base, 'venv'),
    join(base, 'pyenv', '3.12'),
  ]);
  // Directly in /tmp: the file alone, never all of /tmp. In the data dir: the file alone, never its records.
  assert.deepEqual(commandTrees('/tmp/python', hidden), ['/tmp/python']);
  assert.deepEqual(commandTrees(join(dataDir, 'bin', 'tool'), hidden), [join(dataDir, 'bin', 'tool')]);
  assert.deepEqual(commandTrees('/usr/bin/env', hidden), []);
  // A FIFO planted at the command's path is not read (the host's start would block on it): the file alone.
  const fifo = join(base, 'venv', 'bin', 'planted');
  execFileSync('mkfifo', [fifo]);
  assert.deepEqual(commandTrees(fifo, hidden), [join(base, 'venv')]);
});

test("Git-on: a sandboxed service cannot rewrite, move or replace its worktree's .git", {
  skip: noSandbox,
  timeout: 120_000,
}, async (t) => {
  const repo = varTmpDir(t, 'se-repo-');
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, stdio: 'pipe' });
  git(repo, 'init', '-q');
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'init');
  const worktree = join(varTmpDir(t, 'se-wt-'), 'role');
  git(repo, 'worktree', 'add', '-q', '-b', 'role', worktree);
  const dotGit = join(worktree, '.git');
  const before = readFileSync(dotGit, 'utf8');

  const started = await start(
    t,
    {
      orchestration: { git: true },
      agents: uses('prober'),
      mcpDefinitions: { prober: fixtureDefinition('probesTheSandbox.cjs') },
    },
    { dataDir: varTmpDir(t, 'se-data-'), workspace: worktree },
  );
  assert.equal(started.services.outcomes[0]?.sandbox?.sandboxed, true);
  const seen = await started.reach('prober', [dotGit, join(worktree, 'file.txt')], [dotGit]);
  assert.equal(seen.read[dotGit], 'ok', 'it may read where its repository is');
  assert.equal(seen.openForWrite[dotGit], 'EROFS', '.git cannot be rewritten');
  assert.notEqual(seen.rename[dotGit], 'ok', '.git cannot be moved aside (and replaced)');
  assert.equal(readFileSync(dotGit, 'utf8'), before);
  await started.stop();
});
