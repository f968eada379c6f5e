/**
 * The three packages as a user installs them: `npm pack` of @scienceevolve/supervisor, /sdk and /cli, each
 * tarball checked (README.md, LICENSE, no build leftovers, every source map's sources shipped), then
 * installed into empty projects from the tarballs (`npm install --prefer-offline`: the npm cache first, the
 * registry only for what it lacks):
 * - everything (the optional dependencies too): `scienceevolve --version`, a probe of a tiny workflow, and
 *   `tsc --strict` (no `skipLibCheck`) on a file importing the SDK and its sub-paths;
 * - services only (`--omit=optional`): the probe still works; `gateway`, a model-loop run and `worker` stop
 *   with `missing_dependency` naming the package to install.
 * The install size of each (MB, packages) is reported as a diagnostic (docs/decisions/optional-dependencies.md).
 * Slow (minutes on 2 cores): two installs of about 200 and 100 packages, and a type check.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { promisify } from 'node:util';
import { assertGone, processesMentioning, ROOT, tempDir } from './helpers.js';

const run = promisify(execFile);
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const PACKAGES = ['supervisor', 'sdk', 'cli'] as const;
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const WORKFLOW = join(ROOT, 'examples/workflows/workspace-tools.json');

/** Runs a command to its end; resolves with its exit code and output (never rejects on a non-zero exit). */
async function exec(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(file, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      timeout: options.timeoutMs ?? 600_000,
      maxBuffer: 64 * 1024 * 1024,
      killSignal: 'SIGKILL',
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string; killed?: boolean; message: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The tarballs of the three packages, packed from the built workspace into `dir`. */
async function pack(dir: string): Promise<Record<(typeof PACKAGES)[number], string>> {
  const workspaces = PACKAGES.flatMap((name) => ['-w', `packages/${name}`]);
  const packed = await exec(NPM, ['pack', ...workspaces, '--pack-destination', dir, '--json'], { cwd: ROOT });
  assert.equal(packed.code, 0, `npm pack failed:\n${packed.stderr}`);
  const files = (JSON.parse(packed.stdout) as { name: string; filename: string }[]).map((p) => [p.name, p.filename]);
  const byName = Object.fromEntries(files);
  return {
    supervisor: join(dir, byName['@scienceevolve/supervisor']),
    sdk: join(dir, byName['@scienceevolve/sdk']),
    cli: join(dir, byName['@scienceevolve/cli']),
  };
}

/** The paths of a tarball's files (without the leading `package/`). */
async function tarList(tarball: string): Promise<string[]> {
  const listed = await exec('tar', ['-tzf', tarball], { cwd: ROOT });
  assert.equal(listed.code, 0, listed.stderr);
  return listed.stdout
    .split('\n')
    .filter((line) => line.startsWith('package/') && !line.endsWith('/'))
    .map((line) => line.slice('package/'.length));
}

/** An empty project with the tarballs (and `extra` packages) installed; `--omit=optional` when `servicesOnly`. */
async function installProject(
  t: TestContext,
  tarballs: string[],
  options: { servicesOnly: boolean; extra?: string[] },
): Promise<string> {
  const dir = tempDir(t, 'se-pack-');
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'pack-user', private: true, type: 'module' })}\n`);
  const args = ['install', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs, ...(options.extra ?? [])];
  if (options.servicesOnly) args.push('--omit=optional');
  const installed = await exec(NPM, args, { cwd: dir, timeoutMs: 900_000 });
  assert.equal(installed.code, 0, `npm ${args.join(' ')} failed:\n${installed.stderr}`);
  assert.doesNotMatch(installed.stderr, /EBADENGINE/, 'an engine warning from the installed packages');
  return dir;
}

/** Size (bytes, allocated) and package count of a node_modules tree. */
function treeSize(nodeModules: string): { bytes: number; packages: number } {
  let bytes = 0;
  let packages = 0;
  const walk = (dir: string, inNodeModules: boolean): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const stat = lstatSync(path);
      bytes += stat.blocks * 512;
      if (!entry.isDirectory()) continue;
      if (inNodeModules && !entry.name.startsWith('.') && !entry.name.startsWith('@')) {
        if (existsSync(join(path, 'package.json'))) packages += 1;
      }
      if (inNodeModules && entry.name.startsWith('@')) {
        for (const scoped of readdirSync(path, { withFileTypes: true })) {
          const inner = join(path, scoped.name);
          if (scoped.isDirectory() && existsSync(join(inner, 'package.json'))) packages += 1;
        }
        walk(path, false);
        continue;
      }
      walk(path, entry.name === 'node_modules');
    }
  };
  walk(nodeModules, true);
  return { bytes, packages };
}

/** `scienceevolve services probe --json` of the example workflow in `project`; asserts ready and collected. */
async function probe(project: string): Promise<void> {
  const workspace = join(project, 'ws');
  mkdirSync(workspace, { recursive: true });
  const probed = await exec(
    join(project, 'node_modules/.bin/scienceevolve'),
    ['services', 'probe', '--data-dir', join(project, 'data'), '--workflow', WORKFLOW].concat([
      '--workspace',
      workspace,
      '--agent',
      'main',
      '--json',
    ]),
    { cwd: project, timeoutMs: 120_000 },
  );
  assert.equal(probed.code, 0, `probe failed:\n${probed.stdout}\n${probed.stderr}`);
  const report = JSON.parse(probed.stdout) as {
    services: { name: string; state: string; pid: number | null; tools: string[] }[];
  };
  assert.deepEqual(
    report.services.map((s) => [s.name, s.state, s.tools]),
    [['workspace-tools', 'ready', ['read_file', 'write_file', 'list_files']]],
  );
  for (const service of report.services) if (service.pid !== null) await assertGone(service.pid);
}

/** The coded error a failed command printed (human output on stderr: `error [code] …` and a fix line). */
function assertMissing(result: { code: number; stdout: string; stderr: string }, pkg: string, install: string): void {
  const said = `${result.stdout}\n${result.stderr}`;
  assert.notEqual(result.code, 0, `expected a failure; output:\n${said}`);
  assert.match(said, /missing_dependency/, said);
  assert.ok(said.includes(pkg), `the message names ${pkg}:\n${said}`);
  assert.ok(said.includes(install), `the fix is "${install}":\n${said}`);
  assert.doesNotMatch(
    said,
    /ERR_MODULE_NOT_FOUND|MODULE_NOT_FOUND|\n\s+at /,
    `no bare module error or stack:\n${said}`,
  );
}

test('the packed packages: README, LICENSE, no build leftovers, and every source map resolves inside the tarball', async (t) => {
  const tarballs = await pack(tempDir(t, 'se-packed-'));
  const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
  const listed = new Map<string, string[]>();
  for (const name of PACKAGES) listed.set(name, await tarList(tarballs[name]));
  for (const name of PACKAGES) {
    const files = listed.get(name) ?? [];
    const shipped = new Set(files);
    assert.ok(shipped.has('README.md'), `${name}: no README.md`);
    assert.ok(shipped.has('LICENSE'), `${name}: no LICENSE`);
    assert.equal(readFileSync(join(ROOT, 'packages', name, 'LICENSE'), 'utf8'), license, `${name}: LICENSE differs`);
    assert.deepEqual(
      files.filter((f) => /tsbuildinfo|\.test\.|(^|\/)\.tmp\//.test(f)),
      [],
      `${name}: build leftovers`,
    );
    const maps = files.filter((f) => f.endsWith('.map'));
    assert.ok(maps.length > 0, `${name}: no source maps (the check below would prove nothing)`);
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(ROOT, 'packages', name, map), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const target = join(map, '..', source).replace(/^\.\//, '');
        // The CLI's light bundle also maps into the SDK's and the supervisor's sources: `../sdk/src/…` from the
        // package root, which npm installs beside it (node_modules/@scienceevolve/), so that tarball must hold it.
        const sibling = /^\.\.\/(supervisor|sdk|cli)\/(.*)$/.exec(target);
        if (sibling !== null) {
          const [, other = '', path = ''] = sibling;
          assert.ok(
            (listed.get(other) ?? []).includes(path),
            `${name}: ${map} points at ${source}, which the ${other} tarball does not hold`,
          );
          continue;
        }
        assert.ok(shipped.has(target), `${name}: ${map} points at ${source}, which the tarball does not hold`);
      }
    }
  }
});

test('installed from the tarballs: --version, a probe, strict types; services only: the probe, and a coded error for each optional part', async (t) => {
  const tarballs = await pack(tempDir(t, 'se-packed-'));
  const all = Object.values(tarballs);
  const version = (JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string })
    .version;

  // Everything, as `npm install @scienceevolve/cli @scienceevolve/sdk` would (optional dependencies included).
  const full = await installProject(t, all, { servicesOnly: false, extra: ['@types/node@20'] });
  const shown = await exec(join(full, 'node_modules/.bin/scienceevolve'), ['--version'], { cwd: full });
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(shown.stdout.trim(), version);
  // A light command runs from the bundle the CLI tarball ships (no .tsbuildinfo there, so it is used).
  assert.ok(existsSync(join(full, 'node_modules/@scienceevolve/cli/dist/light.bundle.cjs')), 'the light bundle');
  // So does `services probe` (below), from its own bundle: its rewritten paths hold where npm installs the packages.
  assert.ok(existsSync(join(full, 'node_modules/@scienceevolve/cli/dist/probe.bundle.cjs')), 'the probe bundle');
  const validated = await exec(join(full, 'node_modules/.bin/scienceevolve'), ['validate', WORKFLOW, '--json'], {
    cwd: full,
  });
  assert.equal(validated.code, 0, validated.stderr);
  assert.equal((JSON.parse(validated.stdout) as { ok: boolean }).ok, true);
  await probe(full);

  writeFileSync(
    join(full, 'main.ts'),
    [
      // The public root (its harness and event types included), the light sub-paths, and the supervisor.
      "import { isSdkError, parseWorkflow, serveAgentServices, type AgentHarness, type RunEvent } from '@scienceevolve/sdk';",
      "import { probeServices, type ProbeReport } from '@scienceevolve/sdk/agent-services';",
      "import { SdkError, type ErrorCode } from '@scienceevolve/sdk/errors';",
      "import { validateWorkflow, type Workflow } from '@scienceevolve/sdk/workflow';",
      "import { openDataDir } from '@scienceevolve/sdk/store';",
      "import { isProcessAlive } from '@scienceevolve/supervisor';",
      'const code: ErrorCode = "missing_dependency";',
      'const report: ProbeReport | undefined = undefined;',
      'const harness: AgentHarness | undefined = undefined;',
      'const event: RunEvent | undefined = undefined;',
      'const workflow: Workflow | undefined = undefined;',
      'const checked = validateWorkflow({ agents: { main: {} } });',
      'if (!checked.ok) console.log(checked.errors.map((e) => e.message));',
      'console.log(isSdkError, probeServices, serveAgentServices, SdkError, code, harness, event);',
      'console.log(parseWorkflow, openDataDir, isProcessAlive, report, workflow);',
      '',
    ].join('\n'),
  );
  const tsconfig = {
    compilerOptions: {
      strict: true,
      skipLibCheck: false,
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      noEmit: true,
      types: ['node'],
    },
    files: ['main.ts'],
  };
  writeFileSync(join(full, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  const typed = await exec(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: full, timeoutMs: 900_000 });
  assert.equal(typed.code, 0, `tsc --strict (no skipLibCheck) failed:\n${typed.stdout}${typed.stderr}`);

  // Services only: no model loops, no supergateway, no BullMQ/ioredis.
  const lean = await installProject(t, all, { servicesOnly: true });
  for (const optional of ['ai', '@ai-sdk/openai', 'supergateway', 'bullmq', 'ioredis']) {
    assert.equal(existsSync(join(lean, 'node_modules', optional)), false, `${optional} was installed`);
  }
  await probe(lean);
  const bin = join(lean, 'node_modules/.bin/scienceevolve');
  assertMissing(
    await exec(bin, ['gateway', '--stdio', 'node server.cjs'], { cwd: lean, timeoutMs: 60_000 }),
    'supergateway',
    'npm install supergateway',
  );
  assertMissing(
    await exec(bin, ['worker', '--queue', 'redis://127.0.0.1:1', '--data-dir', join(lean, 'data')], {
      cwd: lean,
      timeoutMs: 60_000,
    }),
    'bullmq',
    'npm install bullmq ioredis',
  );
  const modelFlow = join(lean, 'model-flow.json');
  writeFileSync(
    modelFlow,
    `${JSON.stringify({
      agents: { main: { harness: { type: 'openai', model: 'gpt-test', baseUrl: 'http://127.0.0.1:9/v1' } } },
    })}\n`,
  );
  mkdirSync(join(lean, 'ws-model'));
  assertMissing(
    await exec(
      bin,
      [
        'run',
        '--data-dir',
        join(lean, 'data'),
        '--workflow',
        modelFlow,
        '--workspace',
        join(lean, 'ws-model'),
        'say hello',
      ],
      { cwd: lean, env: { ...process.env, OPENAI_API_KEY: 'sk-test-not-a-key' }, timeoutMs: 120_000 },
    ),
    'ai',
    'npm install ai @ai-sdk/openai @ai-sdk/anthropic @ai-sdk/google',
  );

  // Nothing started from either project is left (the CLI, a supervisor, a service): each is proven gone.
  for (const pid of [...processesMentioning(full), ...processesMentioning(lean)]) await assertGone(pid);

  const fullSize = treeSize(join(full, 'node_modules'));
  const leanSize = treeSize(join(lean, 'node_modules'));
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
  t.diagnostic(`install, everything (+ @types/node): ${mb(fullSize.bytes)} MB, ${fullSize.packages} packages`);
  t.diagnostic(`install, services only (--omit=optional): ${mb(leanSize.bytes)} MB, ${leanSize.packages} packages`);
  assert.ok(leanSize.bytes < fullSize.bytes, 'services only is smaller');
});
