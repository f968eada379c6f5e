/**
 * The light path (issue 28, rows 9a/9b; docs/decisions/cli-light-bundle.md): the bin runs `validate`, `status`,
 * `schema` and `harness-config` from one bundled file, `dist/light.bundle.cjs`, and every other command (help
 * and `--version` too) from `main.js`; a bundle older than a later `tsc --build` is not used (the unbundled
 * `dist/light.js` runs instead); the light table gives the same output as the full one; and the bundle's
 * source map points at the real TypeScript files, so a `--debug` stack names packages/cli/src and
 * packages/sdk/src.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';
import { cliModuleFor, LIGHT_COMMANDS, lightBundleFresh, usesLightPath } from '../../packages/cli/src/entry.ts';
import { run as runLight } from '../../packages/cli/src/light.ts';
import { run as runMain } from '../../packages/cli/src/main.ts';
import type { Io } from '../../packages/cli/src/output.ts';
import { assertGone } from '../fixtures/store/children.js';
import { tempDir } from '../fixtures/store/tempDir.js';
import { BIN, ROOT, workflowFixture } from './runCli.js';

const CLI_DIST = join(ROOT, 'packages/cli/dist');

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

describe('which module runs a command', () => {
  test('the light commands (with --help too) go to the light path; every other command to main.js', () => {
    for (const name of LIGHT_COMMANDS) {
      assert.equal(usesLightPath([name, '--json']), true, name);
      assert.equal(usesLightPath([name, '--help']), true, name);
    }
    for (const argv of [
      [],
      ['--help'],
      ['-h'],
      ['help'],
      ['--version'],
      ['run'],
      ['services', 'probe'],
      ['services', 'serve'],
      ['workflow', 'load'],
      ['bridge', 'http-to-stdio'],
      ['validatex'],
      ['constructor'],
      ['--json', 'validate'],
    ]) {
      assert.equal(usesLightPath(argv), false, argv.join(' '));
      assert.equal(cliModuleFor(argv), './main.js', argv.join(' '));
    }
  });

  test('the bundle is used when it is newer than every build; stale or missing, the unbundled light.js runs', async (t) => {
    const dir = await tempDir(t);
    const fresh = tree(join(dir, 'fresh'), {
      'cli/dist/light.bundle.cjs': 2000,
      'cli/dist/.tsbuildinfo': 1000,
      'sdk/dist/.tsbuildinfo': 1000,
      'supervisor/dist/.tsbuildinfo': 1000,
    });
    assert.equal(lightBundleFresh(fresh), true);
    assert.equal(cliModuleFor(['validate', 'x.json'], fresh), './light.bundle.cjs');
    assert.equal(cliModuleFor(['run'], fresh), './main.js');
    // A later `tsc --build` of any package (here the SDK) makes the bundle stale.
    const stale = tree(join(dir, 'stale'), {
      'cli/dist/light.bundle.cjs': 2000,
      'cli/dist/.tsbuildinfo': 1000,
      'sdk/dist/.tsbuildinfo': 3000,
    });
    assert.equal(lightBundleFresh(stale), false);
    assert.equal(cliModuleFor(['validate', 'x.json'], stale), './light.js');
    // A build in the same tick of the clock as the bundle (a file system that keeps whole seconds): it may
    // have come after the bundle, so the bundle is not trusted.
    const sameTime = tree(join(dir, 'same'), {
      'cli/dist/light.bundle.cjs': 2000,
      'cli/dist/.tsbuildinfo': 2000,
    });
    assert.equal(lightBundleFresh(sameTime), false);
    // No bundle (only `tsc --build` ran): the unbundled light path.
    const none = tree(join(dir, 'none'), { 'cli/dist/.tsbuildinfo': 1000 });
    assert.equal(cliModuleFor(['status'], none), './light.js');
    // A published package ships no .tsbuildinfo: the bundle is used.
    const published = tree(join(dir, 'published'), { 'cli/dist/light.bundle.cjs': 2000 });
    assert.equal(cliModuleFor(['schema'], published), './light.bundle.cjs');
  });

  test('this checkout, built by `npm run build`, runs the light commands from the bundle', () => {
    assert.ok(existsSync(join(CLI_DIST, 'light.bundle.cjs')), 'no bundle: run `npm run build`');
    assert.equal(
      cliModuleFor(['validate', 'x.json'], pathToFileURL(`${CLI_DIST}/`)),
      './light.bundle.cjs',
      'the bundle is older than the last tsc build',
    );
  });

  test('the bundle runs in strict mode, as the ES modules it is made from did', () => {
    // The text evaluates to the module's function (scripts/lib/cjsFunction.mjs); reading `caller` of a
    // strict function throws, of a sloppy one it does not.
    const text = readFileSync(join(CLI_DIST, 'light.bundle.cjs'), 'utf8');
    const moduleFunction = new Script(text).runInThisContext() as () => void;
    assert.equal(typeof moduleFunction, 'function');
    assert.throws(() => moduleFunction.caller, TypeError, 'the module function is strict');
  });
});

/** An Io that keeps what a command printed. */
function captured(): { io: Io; out: () => string } {
  let text = '';
  return {
    io: { stdout: (s) => (text += `[out]${s}`), stderr: (s) => (text += `[err]${s}`) },
    out: () => text,
  };
}

test('the light table and the full one print the same and exit alike', async () => {
  const cases: string[][] = [
    ['validate', workflowFixture('minimal.json')],
    ['validate', workflowFixture('severalFaults.json'), '--json'],
    ['validate', workflowFixture('notJson.txt')],
    ['validate'],
    ['validate', '--bogus'],
    ['status', '--json'],
    ['schema', '--json'],
    ['harness-config', '--format', 'nope'],
    ['--version'],
    ['--version', '--json'],
    ['status', '--help'],
    [],
  ];
  for (const argv of cases) {
    const light = captured();
    const main = captured();
    const env = process.env.SCIENCEEVOLVE_DATA_DIR;
    delete process.env.SCIENCEEVOLVE_DATA_DIR;
    try {
      const a = await runLight([...argv], light.io);
      const b = await runMain([...argv], main.io);
      assert.equal(a, b, argv.join(' '));
      assert.equal(light.out(), main.out(), argv.join(' '));
    } finally {
      if (env !== undefined) process.env.SCIENCEEVOLVE_DATA_DIR = env;
    }
  }
});

describe("the bundle's source map", () => {
  test('names only real files: our TypeScript sources, each of which exists', () => {
    const map = JSON.parse(readFileSync(join(CLI_DIST, 'light.bundle.cjs.map'), 'utf8')) as { sources: string[] };
    assert.ok(map.sources.length > 20, `${map.sources.length} sources`);
    for (const source of map.sources) {
      assert.match(source, /^(\.\.\/src\/|\.\.\/\.\.\/(sdk|supervisor)\/src\/).*\.ts$/, source);
      assert.ok(existsSync(join(CLI_DIST, source)), `${source} does not exist`);
    }
    for (const own of ['../src/commands/validate.ts', '../../sdk/src/workflow/validate.ts', '../src/dispatch.ts']) {
      assert.ok(map.sources.includes(own), `${own} is mapped`);
    }
  });

  test('a --debug stack of a light command names the TypeScript file and line that threw', async (t) => {
    const dir = await tempDir(t);
    const missing = join(dir, 'missing.json');
    const child = spawn(process.execPath, [BIN, 'validate', missing, '--debug'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.ok(child.pid !== undefined);
    await assertGone(child.pid);
    assert.equal(code, 1, stderr);
    assert.match(stderr, /error \[io_error\]/);
    const frame = /at validateCommand \((.*\/packages\/cli\/src\/commands\/validate\.ts):(\d+):\d+\)/.exec(stderr);
    assert.ok(frame, `a frame in validate.ts:\n${stderr}`);
    const [, file = '', lineNumber = ''] = frame;
    const line = readFileSync(file, 'utf8').split('\n')[Number(lineNumber) - 1] ?? '';
    assert.match(line, /new SdkError\('io_error'/, `the frame's line is the throw: ${line}`);
    assert.ok(!stderr.includes('light.bundle.cjs'), `no bundle position in the mapped stack:\n${stderr}`);
  });
});

/** Runs the bin with `args` and `env` added; resolves to its exit code and output, the process proved gone. */
async function runBin(
  args: string[],
  env: NodeJS.ProcessEnv,
  bin: string = BIN,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = { ...process.env };
  delete base.NODE_COMPILE_CACHE;
  delete base.NODE_DISABLE_COMPILE_CACHE;
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
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
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  return { code, stdout, stderr };
}

test("the light bundle's code cache: written once per command (0600), a damaged one is refused and replaced", async (t) => {
  const dir = await tempDir(t);
  const xdg = join(dir, 'xdg');
  const cache = join(xdg, 'scienceevolve', 'compile', `light-validate-${process.version}-${process.arch}.cache`);
  const minimal = workflowFixture('minimal.json');
  const first = await runBin(['validate', minimal], { XDG_CACHE_HOME: xdg });
  assert.equal(first.code, 0, first.stderr);
  assert.ok(existsSync(cache), 'the first run wrote its code cache');
  assert.equal(statSync(cache).mode & 0o777, 0o600);
  const written = readFileSync(cache);
  // The same key (the bundle's size and time, the first line), then bytes V8 cannot use.
  const key = written.subarray(0, written.indexOf(10) + 1);
  writeFileSync(cache, Buffer.concat([key, Buffer.alloc(4096, 7)]));
  const damaged = await runBin(['validate', minimal], { XDG_CACHE_HOME: xdg });
  assert.equal(damaged.code, 0, damaged.stderr);
  assert.match(damaged.stdout, /is a valid workflow/);
  assert.ok(!readFileSync(cache).subarray(key.length).equals(Buffer.alloc(4096, 7)), 'the damaged cache was replaced');
  // Another key (another build of the bundle): ignored, and replaced too.
  writeFileSync(cache, 'other key\nwhatever');
  const other = await runBin(['validate', minimal, '--json'], { XDG_CACHE_HOME: xdg });
  assert.equal(other.code, 0, other.stderr);
  assert.deepEqual(JSON.parse(other.stdout), { ok: true, errors: [] });
  assert.ok(readFileSync(cache).subarray(0, key.length).equals(key), "rewritten with this bundle's key");
  // NODE_DISABLE_COMPILE_CACHE: nothing written.
  const off = join(dir, 'off');
  const disabled = await runBin(['validate', minimal], { XDG_CACHE_HOME: off, NODE_DISABLE_COMPILE_CACHE: '1' });
  assert.equal(disabled.code, 0, disabled.stderr);
  assert.equal(existsSync(off), false);
});

test("the light bundle's code cache is not used for another bundle of the same size and modification time", async (t) => {
  // An install tool that fixes every file's time (reproducible builds, the Nix store's mtime 1) can put a
  // rebuilt bundle of the same size where the old one was: V8 checks only the source's length, so the
  // cache key must tell the two files apart. A copy of the installed layout (no .tsbuildinfo, as published).
  const dir = await tempDir(t);
  const cli = join(dir, 'packages', 'cli');
  for (const file of [
    'bin/scienceevolve.js',
    'bin/package.json',
    'dist/entry.cjs',
    'dist/light.bundle.cjs',
    'package.json',
  ]) {
    mkdirSync(dirname(join(cli, file)), { recursive: true });
    copyFileSync(join(ROOT, 'packages', 'cli', file), join(cli, file));
  }
  const bin = join(cli, 'bin', 'scienceevolve.js');
  const bundle = join(cli, 'dist', 'light.bundle.cjs');
  // Every file at one fixed time, as such an install leaves them.
  utimesSync(bundle, 1, 1);
  const xdg = join(dir, 'xdg');
  const minimal = workflowFixture('minimal.json');
  const first = await runBin(['validate', minimal], { XDG_CACHE_HOME: xdg }, bin);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /is a valid workflow/);
  // "Another build": the same length, another text, and the old file's times put back.
  const before = statSync(bundle);
  const source = readFileSync(bundle, 'utf8');
  assert.ok(source.includes('is a valid workflow'));
  writeFileSync(bundle, source.replace('is a valid workflow', 'is a VALID workflow'));
  utimesSync(bundle, 1, 1);
  assert.equal(statSync(bundle).size, before.size);
  assert.equal(statSync(bundle).mtimeMs, before.mtimeMs);
  const second = await runBin(['validate', minimal], { XDG_CACHE_HOME: xdg }, bin);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /is a VALID workflow/, 'the new bundle ran, not the code cached from the old one');
});

test("the light bundle's code cache is used only from a plain file of this user that no one else can write", async (t) => {
  // The cache is compiled code: one planted by someone else (a link to their file, a file others may
  // write) would run as whoever runs the CLI. Each is ignored and replaced by a file of our own.
  const dir = await tempDir(t);
  const xdg = join(dir, 'xdg');
  const cache = join(xdg, 'scienceevolve', 'compile', `light-validate-${process.version}-${process.arch}.cache`);
  const minimal = workflowFixture('minimal.json');
  const first = await runBin(['validate', minimal], { XDG_CACHE_HOME: xdg });
  assert.equal(first.code, 0, first.stderr);
  const good = readFileSync(cache);
  // A writable-by-others copy of a good cache: not used, so rewritten (0600 again).
  chmodSync(cache, 0o646);
  const loose = await runBin(['validate', minimal], { XDG_CACHE_HOME: xdg });
  assert.equal(loose.code, 0, loose.stderr);
  assert.equal(statSync(cache).mode & 0o777, 0o600, 'a cache others could write was not used, and was replaced');
  // A link to a good cache elsewhere: not followed, so the link is replaced by a file.
  const elsewhere = join(dir, 'elsewhere.cache');
  writeFileSync(elsewhere, good, { mode: 0o600 });
  rmSync(cache);
  symlinkSync(elsewhere, cache);
  const linked = await runBin(['validate', minimal], { XDG_CACHE_HOME: xdg });
  assert.equal(linked.code, 0, linked.stderr);
  assert.equal(lstatSync(cache).isSymbolicLink(), false, 'a linked cache was not used, and was replaced');
  assert.ok(readFileSync(elsewhere).equals(good), 'the link target is untouched');
});

test('a light build the checks refuse leaves no bundle behind (nor an earlier one): the bin cannot run it', async (t) => {
  // A copy of the build script in a tree of its own, whose light.js reads import.meta (refused: in the bundle
  // it would be the bundle's URL), with a bundle of an earlier build in place.
  const dir = await tempDir(t);
  mkdirSync(join(dir, 'scripts'));
  copyFileSync(join(ROOT, 'scripts', 'build-light.mjs'), join(dir, 'scripts', 'build-light.mjs'));
  cpSync(join(ROOT, 'scripts', 'lib'), join(dir, 'scripts', 'lib'), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const dist = join(dir, 'packages', 'cli', 'dist');
  mkdirSync(dist, { recursive: true });
  writeFileSync(join(dist, 'light.js'), 'export const where = import.meta.url;\n');
  writeFileSync(join(dist, 'entry.js'), 'export const entry = 1;\n');
  writeFileSync(join(dist, 'light.bundle.cjs'), '/* an earlier build */\n');
  const child = spawn(process.execPath, [join(dir, 'scripts', 'build-light.mjs')], {
    // As `npm run build` runs it: from the tree's root.
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  assert.equal(code, 1, stderr);
  assert.match(stderr, /refused[\s\S]*light\.js: reads import\.meta/);
  for (const file of ['light.bundle.cjs', 'light.bundle.cjs.map', 'entry.cjs', 'entry.cjs.map']) {
    assert.equal(existsSync(join(dist, file)), false, `${file} is not left behind`);
  }
});

test('an entry.cjs from an earlier build (before `runsBundled`) is not asked: the bin runs the ES entry', async (t) => {
  // A checkout updated and rebuilt by `tsc --build` alone (`npm run typecheck`, `npm run api`): the bin is
  // source, `dist/entry.js` tsc's fresh output, and `dist/entry.cjs` still the one an earlier
  // `npm run build` wrote, which knows `usesLightPath` and `lightBundleFresh` but not `runsBundled`.
  const dir = await tempDir(t);
  const cli = join(dir, 'packages', 'cli');
  for (const file of ['bin/scienceevolve.js', 'bin/package.json', 'package.json']) {
    mkdirSync(dirname(join(cli, file)), { recursive: true });
    copyFileSync(join(ROOT, 'packages', 'cli', file), join(cli, file));
  }
  mkdirSync(join(cli, 'dist'));
  writeFileSync(
    join(cli, 'dist', 'entry.cjs'),
    [
      "'use strict';",
      'module.exports = {',
      '  usesLightPath: () => true,',
      '  lightBundleFresh: () => true,',
      '  enableCliCompileCache: () => undefined,',
      "  loadCli: async () => ({ run: async () => { process.stdout.write('the old entry.cjs ran\\n'); return 0; } }),",
      '};',
    ].join('\n'),
  );
  writeFileSync(
    join(cli, 'dist', 'entry.js'),
    [
      'export function enableCliCompileCache() {}',
      'export async function guardStdoutFor() {}',
      "export async function loadCli() { return { run: async (argv) => { process.stdout.write('the ES entry ran ' + argv.join(' ') + '\\n'); return 0; } }; }",
    ].join('\n'),
  );
  const ran = await runBin(['validate', 'x.json'], {}, join(cli, 'bin', 'scienceevolve.js'));
  assert.equal(ran.code, 0, ran.stderr);
  assert.equal(ran.stderr, '');
  assert.equal(ran.stdout, 'the ES entry ran validate x.json\n');
});
