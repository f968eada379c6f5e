/**
 * The sandbox decision (SPEC §3.3): which definitions count as Main's (the version that first stored the
 * digest), what each policy decides, the bubblewrap command line a launch gets, and an invocation whose
 * Main-proposed service starts sandboxed and says so in its events — nothing of it left afterwards.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startInvocation, startInvocationServices } from '../../../packages/sdk/src/invocation/invocation.ts';
import { mainProposedDigests } from '../../../packages/sdk/src/invocation/sandboxPolicy.ts';
import {
  decideSandbox,
  type SandboxAvailability,
  type SandboxPolicy,
  sandboxCommand,
} from '../../../packages/sdk/src/processes/sandbox.ts';
import type { ServiceEvent } from '../../../packages/sdk/src/sessions/serviceEvents.ts';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { acceptWorkflow, readAccepted, readVersion } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { assertAllGone, assertNoMarkedProcess, fixtureDefinition, killMarked, tempDir } from '../invocation/helpers.ts';

const def = (text: string) => ({ entrypoint: 's.cjs', files: { 's.cjs': text } });
const uses = (...names: string[]) => ({ main: { mcpServers: names.map((n) => ({ name: n, project: n })) } });

test("a digest is Main's when the version that first stored it was Main's, whatever came after", async (t) => {
  const paths = await openProject(tempDir(t), 'authors');
  await acceptWorkflow(paths, { agents: uses('a'), mcpDefinitions: { a: def('a') } }, { by: 'operator' });
  // Main adds b, and c whose content is the operator's a (same digest: the operator's).
  await acceptWorkflow(
    paths,
    { agents: uses('a', 'b', 'c'), mcpDefinitions: { a: def('a'), b: def('b'), c: def('a') } },
    { by: 'main' },
  );
  // The operator loads a workflow that keeps b and adds d.
  await acceptWorkflow(
    paths,
    { agents: uses('a', 'b', 'd'), mcpDefinitions: { a: def('a'), b: def('b'), d: def('d') } },
    { by: 'operator' },
  );
  const v3 = (await readAccepted(paths))!;
  const main = await mainProposedDigests(paths, v3);
  assert.deepEqual([...main], [v3.digests.b]);
  // An older version (a run that still runs it) asks the same history.
  const v2 = await readVersion(paths, 2);
  assert.ok((await mainProposedDigests(paths, v2)).has(v2.digests.b!));
  assert.ok(!(await mainProposedDigests(paths, v2)).has(v2.digests.c!));
});

test('the decision of each policy, with and without a working sandbox', async () => {
  const works = async (): Promise<SandboxAvailability> => ({ ok: true, bwrap: '/usr/bin/bwrap' });
  const missing = async (): Promise<SandboxAvailability> => ({
    ok: false,
    detail: 'bubblewrap (bwrap) is not on the PATH',
  });
  const cases: [SandboxPolicy | undefined, boolean, boolean | undefined, boolean | undefined, typeof works, unknown][] =
    [
      ['off', true, undefined, undefined, works, { sandboxed: false, reason: 'policy_off', network: true }],
      // auto: every project service, the operator's as Main's, unless the operator's definition opts out.
      [undefined, false, undefined, undefined, works, { sandboxed: true, reason: 'auto', network: true }],
      ['auto', true, undefined, undefined, works, { sandboxed: true, reason: 'auto', network: true }],
      ['auto', true, false, undefined, works, { sandboxed: true, reason: 'auto', network: false }],
      [
        'auto',
        false,
        undefined,
        false,
        works,
        { sandboxed: false, reason: 'opted_out', network: true, detail: 'the definition says "sandbox": false' },
      ],
      [
        'auto',
        true,
        undefined,
        false,
        works,
        {
          sandboxed: true,
          reason: 'auto',
          network: true,
          detail: '"sandbox": false has no effect on a definition Main proposed',
        },
      ],
      [
        'required',
        false,
        undefined,
        false,
        works,
        {
          sandboxed: true,
          reason: 'required',
          network: true,
          detail: '"sandbox": false has no effect under orchestration.sandbox "required"',
        },
      ],
      [
        'auto',
        true,
        false,
        undefined,
        missing,
        {
          sandboxed: false,
          reason: 'unavailable',
          network: true,
          detail: 'bubblewrap (bwrap) is not on the PATH; "network": false has no effect outside the sandbox',
        },
      ],
      ['required', false, true, undefined, works, { sandboxed: true, reason: 'required', network: true }],
    ];
  for (const [policy, proposedByMain, network, optOut, availability, expected] of cases) {
    const decided = await decideSandbox({
      policy,
      proposedByMain,
      network,
      sandbox: optOut,
      service: 's',
      definition: 'd',
      availability,
    });
    assert.deepEqual(decided.decision, expected, `${policy} ${proposedByMain} ${network} ${optOut}`);
    assert.equal(decided.bwrap, decided.decision.sandboxed ? '/usr/bin/bwrap' : undefined);
  }
  await assert.rejects(
    decideSandbox({
      policy: 'required',
      proposedByMain: false,
      network: undefined,
      service: 'search',
      definition: 'search-def',
      availability: missing,
    }),
    (error: { code: string; message: string; remedy: string }) =>
      error.code === 'sandbox_unavailable' &&
      /service "search" \(definition "search-def"\).*"required".*not on the PATH/.test(error.message) &&
      /bubblewrap/.test(error.remedy),
  );
});

test('the bubblewrap command line: binds from the outermost path in, the workspace writable, the copy read-only', () => {
  const { file, args } = sandboxCommand({
    bwrap: '/usr/bin/bwrap',
    command: '/usr/bin/node',
    args: ['/tmp/ws/.data/copy/server.cjs', '--flag'],
    cwd: '/tmp/ws',
    env: {
      SCIENCEEVOLVE_WORKSPACE: '/tmp/ws',
      SCIENCEEVOLVE_PROJECT_ROOT: '/tmp/ws/.data/private',
      SCIENCEEVOLVE_MCP_SOURCE_DIR: '/tmp/ws/.data/copy',
      NODE_PATH: '/tmp/mods/node_modules:/opt/node_modules',
    },
    network: false,
  });
  assert.equal(file, '/usr/bin/bwrap');
  const at = args.indexOf('--');
  assert.deepEqual(args.slice(at), ['--', '/usr/bin/node', '/tmp/ws/.data/copy/server.cjs', '--flag']);
  for (const flag of [
    '--unshare-pid',
    '--unshare-uts',
    '--unshare-ipc',
    '--unshare-net',
    '--new-session',
    '--die-with-parent',
  ]) {
    assert.equal(args.includes(flag), flag.startsWith('--unshare'), flag);
  }
  assert.deepEqual(args.slice(args.indexOf('--cap-drop'), args.indexOf('--cap-drop') + 2), ['--cap-drop', 'ALL']);
  assert.deepEqual(args.slice(0, 3), ['--ro-bind', '/', '/']);
  const binds: string[][] = [];
  for (let i = 0; i < at; i++) {
    const kernel = /^\/(proc|sys)(\/|$)/.test(args[i + 1] ?? '');
    if (['--bind', '--ro-bind', '--ro-bind-try'].includes(args[i]!) && args[i + 1] !== '/' && !kernel) {
      binds.push([args[i]!, args[i + 1]!]);
      assert.equal(args[i + 2], args[i + 1], 'each path is bound at its own place');
    }
  }
  assert.deepEqual(binds, [
    ['--bind', '/tmp/ws'],
    ['--ro-bind-try', '/tmp/mods/node_modules'],
    ['--bind', '/tmp/ws/.data/private'],
    ['--ro-bind', '/tmp/ws/.data/copy'],
  ]);
  assert.ok(args.indexOf('--tmpfs') < args.indexOf('--bind'), 'the private /tmp is mounted before the binds into it');
  // The kernel's host-wide settings are read-only binds (bubblewrap as root would leave /proc/sys writable).
  const roBind = (path: string) => args.findIndex((a, i) => a === '--ro-bind' && args[i + 1] === path);
  assert.ok(roBind('/sys') > 0, '/sys is bound read-only');
  assert.ok(roBind('/proc/sys') > args.indexOf('--proc'), '/proc/sys is bound read-only over the new /proc');
  // The data dir is hidden (an empty tmpfs) before the service's own directories in it are bound again.
  const hidden = sandboxCommand({
    bwrap: 'b',
    command: '/usr/bin/node',
    args: [],
    cwd: '/w/ws',
    env: {
      SCIENCEEVOLVE_PROJECT_ROOT: '/w/data/p/service-data',
      SCIENCEEVOLVE_MCP_SOURCE_DIR: '/w/data/p/runs/r/mcp/s',
    },
    network: true,
    hide: ['/w/data'],
    readOnly: ['/w/ws/.git'],
  }).args;
  const order = ['/w/data', '/w/ws', '/w/ws/.git', '/w/data/p/service-data', '/w/data/p/runs/r/mcp/s'].map((p) =>
    hidden.indexOf(p),
  );
  assert.deepEqual(
    [...order].sort((a, b) => a - b),
    order,
    'outermost first',
  );
  assert.equal(hidden[order[0]! - 1], '--tmpfs');
  assert.equal(hidden[order[2]! - 1], '--ro-bind-try', '.git read-only');
  assert.deepEqual(args.slice(args.indexOf('--chdir'), args.indexOf('--chdir') + 2), ['--chdir', '/tmp/ws']);
  assert.equal(
    sandboxCommand({ bwrap: 'b', command: 'c', args: [], cwd: '/w', env: {}, network: true }).args.includes(
      '--unshare-net',
    ),
    false,
  );
});

test("an invocation under auto: the operator's service and Main's both start sandboxed; events and outcomes say so; nothing left", async (t) => {
  const dataDir = tempDir(t);
  const workspace = tempDir(t, 'se-ws-');
  const project = `sbx${Date.now()}`;
  t.after(() => killMarked(project));
  const paths = await openProject(dataDir, project);
  const operator = { agents: uses('ops'), mcpDefinitions: { ops: fixtureDefinition('plain.cjs') } };
  await acceptWorkflow(paths, operator, { by: 'operator' });
  await acceptWorkflow(
    paths,
    {
      agents: uses('ops', 'mains'),
      mcpDefinitions: { ...operator.mcpDefinitions, mains: { ...fixtureDefinition('plain.cjs'), args: ['main'] } },
    },
    { by: 'main' },
  );
  const version = (await readAccepted(paths))!;
  const events: ServiceEvent[] = [];
  const services = await startInvocation({
    paths,
    version,
    agent: 'main',
    runId: 'r1',
    workspace,
    graceMs: 300,
    onEvent: (e) => events.push(e),
  });
  t.after(() => services.close());
  const decisions = Object.fromEntries(services.outcomes.map((o) => [o.planned.name, o.sandbox]));
  assert.deepEqual(decisions, {
    ops: { sandboxed: true, reason: 'auto', network: true },
    mains: { sandboxed: true, reason: 'auto', network: true },
  });
  const ready = events.filter((e) => e.type === 'service.ready');
  assert.deepEqual(
    Object.fromEntries(ready.map((e) => [e.service, e.sandbox?.sandboxed])),
    { ops: true, mains: true },
    'service.ready carries the decision',
  );
  // The sandboxed service sees its own PID namespace: it is pid 2 there, under bubblewrap's init.
  const mains = services.sessions.find((s) => s.name === 'mains')!;
  const where = await mains.callTool('whereAmI', {});
  const seen = JSON.parse((where.content as { text: string }[])[0]!.text) as {
    pid: number;
    env: Record<string, string>;
  };
  assert.equal(seen.pid, 2);
  assert.equal(seen.env.SCIENCEEVOLVE_WORKSPACE, workspace, 'the environment contract holds inside');
  const pids = services.sessions.map((s) => (s as unknown as { pid: number }).pid);
  await services.close();
  await assertAllGone(pids);
  await assertNoMarkedProcess(project);
});

test('a sandboxed service that fails at start: service_exited with its own exit code, its stderr in the host-side log', async (t) => {
  const dataDir = tempDir(t);
  const workspace = tempDir(t, 'se-ws-');
  const project = `sbxf${Date.now()}`;
  t.after(() => killMarked(project));
  const paths = await openProject(dataDir, project);
  await acceptWorkflow(
    paths,
    {
      orchestration: { sandbox: 'required' },
      agents: uses('broken'),
      mcpDefinitions: { broken: fixtureDefinition('exitsAtStart.cjs') },
    },
    { by: 'operator' },
  );
  const version = (await readAccepted(paths))!;
  const events: ServiceEvent[] = [];
  const services = await startInvocationServices({
    paths,
    version,
    agent: 'main',
    runId: 'r1',
    workspace,
    graceMs: 300,
    onEvent: (e) => events.push(e),
  });
  t.after(() => services.close());
  const [outcome] = services.outcomes;
  assert.deepEqual(outcome?.sandbox, { sandboxed: true, reason: 'required', network: true });
  assert.equal(outcome?.error?.code, 'service_exited');
  assert.equal(outcome?.error?.data.exitCode, 3, "bubblewrap passes the service's exit code on");
  const log = outcome?.error?.data.log as string;
  assert.match(outcome?.error?.message ?? '', /exited with code 3/);
  assert.match(readFileSync(log, 'utf8'), /fatal: cannot read config\.json/);
  const failed = events.find((e) => e.type === 'service.failed');
  assert.deepEqual(failed?.sandbox, { sandboxed: true, reason: 'required', network: true });
  await services.close();
  await assertNoMarkedProcess(project);
});

test('a sandboxed service gets its grace on stop: SIGTERM reaches it, and it finishes its clean-up before it is gone', async (t) => {
  const dataDir = tempDir(t);
  const workspace = tempDir(t, 'se-ws-');
  const project = `sbxg${Date.now()}`;
  t.after(() => killMarked(project));
  const paths = await openProject(dataDir, project);
  await acceptWorkflow(
    paths,
    {
      orchestration: { sandbox: 'required' },
      agents: uses('tidy'),
      mcpDefinitions: { tidy: fixtureDefinition('cleansUpOnSigterm.cjs') },
    },
    { by: 'operator' },
  );
  const version = (await readAccepted(paths))!;
  const events: ServiceEvent[] = [];
  const services = await startInvocation({
    paths,
    version,
    agent: 'main',
    runId: 'r1',
    workspace,
    graceMs: 5000,
    onEvent: (e) => events.push(e),
  });
  t.after(() => services.close());
  assert.equal(services.outcomes[0]?.sandbox?.sandboxed, true);
  const pid = (services.sessions[0] as unknown as { pid: number }).pid;
  await services.close();
  assert.match(
    readFileSync(join(workspace, 'cleaned-up.txt'), 'utf8'),
    /^pid 2\n$/,
    'its clean-up ran, inside the sandbox',
  );
  const exited = events.find((e) => e.type === 'service.exited');
  assert.equal(exited?.type === 'service.exited' && exited.forced, false, 'no SIGKILL was needed');
  await assertAllGone([pid]);
  await assertNoMarkedProcess(project);
});
