/**
 * The probe's bundle (issue 28, row 10; docs/decisions/probe-bundle.md): the bin runs `services probe` from
 * one bundled CommonJS file, `dist/probe.bundle.cjs`, compiled with V8's code cache of its last run, and
 * every other command as before; a bundle older than a later `tsc --build`, or missing, is not used (main.js
 * runs); our modules' `import.meta.url` is each module's own file; the source map names real TypeScript
 * files; and a build the checks refuse — MCP code reached before the service's spawn, a module left outside
 * the bundle — leaves no bundle behind.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import { cliModuleFor, lightBundleFresh, runsBundled, usesProbePath } from '../../packages/cli/src/entry.ts';
import { run as runMain } from '../../packages/cli/src/main.ts';
import type { Io } from '../../packages/cli/src/output.ts';
import { run as runProbe } from '../../packages/cli/src/probe.ts';
import { labWorkflow } from '../e2e/helpers.js';
import { assertGone } from '../fixtures/store/children.js';
import { tempDir } from '../fixtures/store/tempDir.js';
import { BIN, ROOT } from './runCli.js';

const CLI_DIST = join(ROOT, 'packages/cli/dist');
const BUNDLE = join(CLI_DIST, 'probe.bundle.cjs');

/** A fake tree `<dir>/packages/{cli,sdk,supervisor}/dist` with the files named, each with mtime `at` (s). */
function tree(dir: string, files: Record<string, number>): URL {
  for (const [path, at] of Object.entries(files)) {
    const file = join(dir, 'packages', path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, '');
    utimesSync(file, at, at);
  }
  return pathToFileURL(`${join(dir, 'packages', 'cli', 'dist')}/`);
}

/** Runs `node args…` from the repository; resolves to its exit code and output, the process proved gone. */
async function runNode(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  cwd: string = ROOT,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = { ...process.env };
  delete base.NODE_COMPILE_CACHE;
  delete base.NODE_DISABLE_COMPILE_CACHE;
  const child = spawn(process.execPath, args, { cwd, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  return { code, stdout, stderr };
}

describe('which module runs services probe', () => {
  test('services probe (its help too) goes to the probe bundle; serve and every other command do not', () => {
    for (const argv of [
      ['services', 'probe'],
      ['services', 'probe', '--json'],
      ['services', 'probe', '--help'],
    ]) {
      assert.equal(usesProbePath(argv), true, argv.join(' '));
    }
    for (const argv of [[], ['services'], ['services', 'serve'], ['probe'], ['--json', 'services', 'probe'], ['run']]) {
      assert.equal(usesProbePath(argv), false, argv.join(' '));
    }
  });

  test('the bundle is used when it is newer than every build; stale or missing, main.js runs', async (t) => {
    const dir = await tempDir(t);
    const probe = ['services', 'probe', '--json'];
    const fresh = tree(join(dir, 'fresh'), {
      'cli/dist/probe.bundle.cjs': 2000,
      'cli/dist/.tsbuildinfo': 1000,
      'sdk/dist/.tsbuildinfo': 1000,
      'supervisor/dist/.tsbuildinfo': 1000,
    });
    assert.equal(lightBundleFresh(fresh, 'probe.bundle.cjs'), true);
    assert.equal(cliModuleFor(probe, fresh), './probe.bundle.cjs');
    assert.equal(runsBundled(probe, fresh), true);
    assert.equal(cliModuleFor(['services', 'serve'], fresh), './main.js');
    assert.equal(runsBundled(['services', 'serve'], fresh), false);
    // A later `tsc --build` of any package (here the supervisor) makes the bundle stale.
    const stale = tree(join(dir, 'stale'), {
      'cli/dist/probe.bundle.cjs': 2000,
      'cli/dist/.tsbuildinfo': 1000,
      'supervisor/dist/.tsbuildinfo': 3000,
    });
    assert.equal(cliModuleFor(probe, stale), './main.js');
    assert.equal(runsBundled(probe, stale), false);
    // The same tick of the clock as a build: not trusted.
    const same = tree(join(dir, 'same'), { 'cli/dist/probe.bundle.cjs': 2000, 'sdk/dist/.tsbuildinfo': 2000 });
    assert.equal(cliModuleFor(probe, same), './main.js');
    // No probe bundle (only the light one, or only tsc): main.js.
    const none = tree(join(dir, 'none'), { 'cli/dist/light.bundle.cjs': 2000, 'cli/dist/.tsbuildinfo': 1000 });
    assert.equal(cliModuleFor(probe, none), './main.js');
    assert.equal(runsBundled(probe, none), false);
    // A published package ships no .tsbuildinfo: the bundle is used.
    const published = tree(join(dir, 'published'), { 'cli/dist/probe.bundle.cjs': 2000 });
    assert.equal(cliModuleFor(probe, published), './probe.bundle.cjs');
  });

  test('this checkout, built by `npm run build`, runs the probe from its bundle', () => {
    assert.ok(existsSync(BUNDLE), 'no probe bundle: run `npm run build`');
    assert.equal(
      cliModuleFor(['services', 'probe'], pathToFileURL(`${CLI_DIST}/`)),
      './probe.bundle.cjs',
      'the bundle is older than the last tsc build',
    );
  });
});

test('the probe table and the full one print the same and exit alike', async (t) => {
  const dir = await tempDir(t);
  const cases: string[][] = [
    ['services', 'probe', '--help'],
    ['services', 'probe', '--bogus', '--json'],
    ['services', 'probe', 'extra'],
    ['services', 'probe', '--data-dir', join(dir, 'data')],
    // Refused at their options, before the probe forks anything (a probe that runs is the bin's test below).
    ['services', 'probe', '--data-dir', join(dir, 'data'), '--workspace', join(dir, 'ws'), '--json'],
  ];
  for (const argv of cases) {
    const texts = ['', ''];
    const io = (i: number): Io => ({
      stdout: (s) => {
        texts[i] += `[out]${s}`;
      },
      stderr: (s) => {
        texts[i] += `[err]${s}`;
      },
    });
    const a = await runProbe([...argv], io(0));
    const b = await runMain([...argv], io(1));
    assert.equal(a, b, argv.join(' '));
    assert.equal(texts[0], texts[1], argv.join(' '));
  }
});

describe("the probe bundle's files", () => {
  test("our modules' import.meta.url is each module's own file, found from the bundle's place", () => {
    const text = readFileSync(BUNDLE, 'utf8');
    const places = [...text.matchAll(/__probeOwnUrl\("([^"]+)"\)/g)].map((m) => m[1] ?? '');
    // The supervisor's entry and the services' NODE_PATH (createRequire), the CLI's package.json and bin.
    for (const own of [
      '../../sdk/dist/processes/supervisorEntry.js',
      '../../sdk/dist/processes/serviceEnv.js',
      'cliPaths.js',
    ]) {
      assert.ok(places.includes(own), `${own} rewritten`);
    }
    for (const place of places) {
      assert.ok(existsSync(fileURLToPath(new URL(place, pathToFileURL(BUNDLE)))), `${place} exists beside the bundle`);
    }
    assert.doesNotMatch(text, /\bimport\.meta\b/, 'no import.meta is left in the bundle');
  });

  test('the bundle runs in strict mode, as the ES modules it is made from did', () => {
    // The text evaluates to the module's function (scripts/lib/cjsFunction.mjs); reading `caller` of a
    // strict function throws, of a sloppy one it does not.
    const moduleFunction = new Script(readFileSync(BUNDLE, 'utf8')).runInThisContext() as () => void;
    assert.equal(typeof moduleFunction, 'function');
    assert.throws(() => moduleFunction.caller, TypeError, 'the module function is strict');
  });

  test('the source map names only real files: our TypeScript sources, each of which exists', () => {
    const map = JSON.parse(readFileSync(`${BUNDLE}.map`, 'utf8')) as { sources: string[] };
    assert.ok(map.sources.length > 50, `${map.sources.length} sources`);
    for (const source of map.sources) {
      assert.match(source, /^(\.\.\/src\/|\.\.\/\.\.\/(sdk|supervisor)\/src\/).*\.ts$/, source);
      assert.ok(existsSync(join(CLI_DIST, source)), `${source} does not exist`);
    }
    for (const own of [
      '../src/commands/servicesProbe.ts',
      '../../sdk/src/engine/probeServices.ts',
      '../../sdk/src/processes/supervisorClient.ts',
      '../../sdk/src/sessions/stdioService.ts',
    ]) {
      assert.ok(map.sources.includes(own), `${own} is mapped`);
    }
  });

  test('a --debug stack of the probe names the TypeScript file and line that threw', async () => {
    const r = await runNode([BIN, 'services', 'probe', 'extra', '--debug']);
    assert.equal(r.code, 2, r.stderr);
    const frame = /at probe \((.*\/packages\/cli\/src\/commands\/servicesProbe\.ts):(\d+):\d+\)/.exec(r.stderr);
    assert.ok(frame, `a frame in servicesProbe.ts:\n${r.stderr}`);
    const [, file = '', lineNumber = ''] = frame;
    const line = readFileSync(file, 'utf8').split('\n')[Number(lineNumber) - 1] ?? '';
    assert.match(line, /usageError\('services probe takes no positional arguments'\)/, line);
    assert.ok(!r.stderr.includes('probe.bundle.cjs'), `no bundle position in the mapped stack:\n${r.stderr}`);
  });
});

test("a probe from the bundle: its code cache written once (0600) and used after; the probe's report unchanged", async (t) => {
  const dir = await tempDir(t);
  const xdg = join(dir, 'xdg');
  const cache = join(xdg, 'scienceevolve', 'compile', `probe-services-${process.version}-${process.arch}.cache`);
  const workflow = join(dir, 'workflow.json');
  writeFileSync(workflow, JSON.stringify(labWorkflow()));
  const workspace = join(dir, 'ws');
  await mkdir(workspace);
  const args = [BIN, 'services', 'probe', '--data-dir', join(dir, 'data'), '--workspace', workspace, '--agent', 'main'];
  const first = await runNode([...args, '--workflow', workflow, '--json'], { XDG_CACHE_HOME: xdg });
  assert.equal(first.code, 0, first.stderr);
  assert.ok(existsSync(cache), 'the first probe wrote its code cache');
  assert.equal(statSync(cache).mode & 0o777, 0o600);
  const written = statSync(cache).mtimeMs;
  const report = JSON.parse(first.stdout) as {
    services: { name: string; state: string; pid: number; tools: string[] }[];
  };
  assert.deepEqual(
    report.services.map((s) => [s.name, s.state]),
    [['lab', 'ready']],
  );
  assert.ok((report.services[0]?.tools.length ?? 0) > 0, 'the service listed its tools');
  // The second probe (of the accepted version) compiles from the cache: not rewritten.
  const second = await runNode([...args], { XDG_CACHE_HOME: xdg });
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /lab: ready \(pid \d+\)/);
  assert.equal(statSync(cache).mtimeMs, written, 'a cache V8 accepted is not written again');
  for (const s of report.services) await assertGone(s.pid);
});

/** A copy of the build script in a tree of its own, with `files` under packages/cli/dist and an earlier bundle. */
function buildTree(dir: string, files: Record<string, string>): string {
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  copyFileSync(join(ROOT, 'scripts', 'build-probe.mjs'), join(dir, 'scripts', 'build-probe.mjs'));
  cpSync(join(ROOT, 'scripts', 'lib'), join(dir, 'scripts', 'lib'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const dist = join(dir, 'packages', 'cli', 'dist');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dist, path)), { recursive: true });
    writeFileSync(join(dist, path), text);
  }
  writeFileSync(join(dist, 'probe.bundle.cjs'), '/* an earlier build */\n');
  writeFileSync(join(dist, 'probe.bundle.cjs.map'), '{}\n');
  return dist;
}

describe('a probe build the checks refuse leaves no bundle behind (nor an earlier one)', () => {
  test('MCP code reached before the spawn', async (t) => {
    const dir = await tempDir(t);
    const dist = buildTree(dir, {
      'probe.js': "export const run = () => import('./commands/servicesProbe.js');\n",
      'commands/servicesProbe.js':
        "import { Client } from '@modelcontextprotocol/client';\nexport const probe = () => new Client();\n",
    });
    const r = await runNode([join(dir, 'scripts', 'build-probe.mjs')], {}, dir);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /refused[\s\S]*@modelcontextprotocol\/client[\s\S]*evaluated before the service's spawn/);
    for (const file of ['probe.bundle.cjs', 'probe.bundle.cjs.map']) {
      assert.equal(existsSync(join(dist, file)), false, `${file} is not left behind`);
    }
  });

  for (const [what, imported] of [
    ['a model library', 'ai'],
    ["the SDK's root", '@scienceevolve/sdk'],
  ] as const) {
    test(`${what} anywhere in the bundle, even behind a dynamic import`, async (t) => {
      // The probe starts services and lists them: it never runs a model loop. Its bundle is the one file the
      // module listing sees (test/cli/lightCommands.test.ts), so this check is what keeps them out.
      const dir = await tempDir(t);
      const dist = buildTree(dir, {
        'probe.js': "export const run = () => import('./commands/servicesProbe.js');\n",
        'commands/servicesProbe.js': `export const probe = () => import('${imported}');\n`,
      });
      const r = await runNode([join(dir, 'scripts', 'build-probe.mjs')], {}, dir);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /refused[\s\S]*: the probe loads no model library and not the SDK's root/);
      for (const file of ['probe.bundle.cjs', 'probe.bundle.cjs.map']) {
        assert.equal(existsSync(join(dist, file)), false, `${file} is not left behind`);
      }
    });
  }

  test('OpenTelemetry reached other than through the export module (loaded only when export is on)', async (t) => {
    // A probe without OTEL_EXPORTER_OTLP_ENDPOINT evaluates no OpenTelemetry package; inside the bundle the
    // module listing cannot see that (test/cli/lightCommands.test.ts), so the build checks that the only way
    // in is events/telemetryExport.js, which events/telemetry.ts imports only when export is on.
    const dir = await tempDir(t);
    const dist = buildTree(dir, {
      'probe.js': "export const run = () => import('./commands/servicesProbe.js');\n",
      'commands/servicesProbe.js': "export const probe = () => import('@opentelemetry/api');\n",
    });
    const r = await runNode([join(dir, 'scripts', 'build-probe.mjs')], {}, dir);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /refused[\s\S]*@opentelemetry\/api[^\n]*: OpenTelemetry reached other than through/);
    for (const file of ['probe.bundle.cjs', 'probe.bundle.cjs.map']) {
      assert.equal(existsSync(join(dist, file)), false, `${file} is not left behind`);
    }
  });

  test('a module the bundle cannot hold', async (t) => {
    const dir = await tempDir(t);
    const dist = buildTree(dir, { 'probe.js': "export const run = () => import('./missing.js');\n" });
    const r = await runNode([join(dir, 'scripts', 'build-probe.mjs')], {}, dir);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /refused[\s\S]*missing\.js/);
    for (const file of ['probe.bundle.cjs', 'probe.bundle.cjs.map']) {
      assert.equal(existsSync(join(dist, file)), false, `${file} is not left behind`);
    }
  });
});

test('installed with the SDK nested under the CLI (another version at the top): the bundle uses the CLI’s own SDK', async (t) => {
  // npm nests a dependency when the project needs another version of it at the top: here
  // node_modules/@scienceevolve/sdk is not the CLI's (a decoy with no supervisor beside it), and the CLI's
  // own is node_modules/@scienceevolve/cli/node_modules/@scienceevolve/sdk. The ES modules resolve the CLI's
  // own; so must the bundle's rewritten `import.meta.url` (the supervisor's entry, the services' NODE_PATH).
  const dir = await tempDir(t);
  const modules = join(dir, 'app', 'node_modules', '@scienceevolve');
  const cli = join(modules, 'cli');
  for (const file of [
    'bin/scienceevolve.js',
    'bin/package.json',
    'package.json',
    'dist/entry.cjs',
    'dist/probe.bundle.cjs',
  ]) {
    mkdirSync(dirname(join(cli, file)), { recursive: true });
    copyFileSync(join(ROOT, 'packages', 'cli', file), join(cli, file));
  }
  mkdirSync(join(cli, 'node_modules', '@scienceevolve'), { recursive: true });
  symlinkSync(join(ROOT, 'packages', 'sdk'), join(cli, 'node_modules', '@scienceevolve', 'sdk'));
  const decoy = join(modules, 'sdk');
  for (const file of ['dist/processes/supervisorEntry.js', 'dist/processes/serviceEnv.js']) {
    mkdirSync(dirname(join(decoy, file)), { recursive: true });
    writeFileSync(join(decoy, file), '');
  }
  writeFileSync(
    join(decoy, 'package.json'),
    JSON.stringify({
      name: '@scienceevolve/sdk',
      version: '0.0.0-decoy',
      exports: { './package.json': './package.json' },
    }),
  );
  const workflow = join(dir, 'workflow.json');
  writeFileSync(workflow, JSON.stringify(labWorkflow()));
  const workspace = join(dir, 'ws');
  await mkdir(workspace);
  const probed = await runNode(
    [
      join(cli, 'bin', 'scienceevolve.js'),
      'services',
      'probe',
      '--data-dir',
      join(dir, 'data'),
      '--workspace',
      workspace,
      '--agent',
      'main',
      '--workflow',
      workflow,
      '--json',
    ],
    { NODE_DISABLE_COMPILE_CACHE: '1' },
    dir,
  );
  assert.equal(probed.code, 0, probed.stderr);
  const report = JSON.parse(probed.stdout) as { services: { name: string; state: string; pid: number }[] };
  assert.deepEqual(
    report.services.map((s) => [s.name, s.state]),
    [['lab', 'ready']],
  );
  for (const s of report.services) await assertGone(s.pid);
});
