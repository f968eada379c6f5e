/**
 * The first module the `scienceevolve` bin loads, before the CLI itself. It enables the module compile
 * cache where the runtime has it, and for the commands whose stdout is an MCP stdio server (`services
 * serve` without `--http`, `bridge http-to-stdio`) it installs the stdout guard, so that stdout is
 * protocol from the first byte — a module that prints while the rest loads writes to stderr. It loads
 * the module that runs the command: the light bundle for the light commands, `main.js` for the others.
 * It imports nothing but Node built-ins, and the guard when it installs it. `npm run build` also bundles it
 * as CommonJS (`dist/entry.cjs`, with `lightCommands.ts`), which the bin requires for the light commands;
 * the other commands import this ES module.
 */
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  type Stats,
  statSync,
  writeFileSync,
} from 'node:fs';
import nodeModule from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { usesLightPath, usesProbePath } from './lightCommands.js';

export { LIGHT_COMMANDS, type LightCommand, usesLightPath, usesProbePath } from './lightCommands.js';

/** Whether `argv` (without node and the script) runs a stdio MCP server on this process's stdout. */
export function servesStdioProtocol(argv: readonly string[]): boolean {
  if (argv.includes('--help') || argv.includes('-h')) return false;
  const [command, sub] = argv;
  if (command === 'bridge' && sub === 'http-to-stdio') return true;
  return command === 'services' && sub === 'serve' && !argv.some((a) => a === '--http' || a.startsWith('--http='));
}

/**
 * Installs the stdout guard when `argv` serves the protocol on stdout (see {@link servesStdioProtocol}).
 * The guard's module loads only then (it costs a few ms — `node:stream` — that the other commands need
 * not pay); the bin awaits this before it loads anything else, so the guard is still in first.
 */
export async function guardStdoutFor(argv: readonly string[]): Promise<void> {
  if (!servesStdioProtocol(argv)) return;
  const { protectStdout } = await import('@scienceevolve/sdk/protect-stdout');
  protectStdout();
}

/**
 * The directory of the CLI's own compile cache: `scienceevolve/compile` under the user's cache directory
 * (`$XDG_CACHE_HOME`, else `~/.cache`; `~/Library/Caches` on macOS; `%LOCALAPPDATA%` on Windows). The CLI
 * runs without a data dir for most commands, so its cache is per user, not per data dir. Node keys the
 * entries by its own version and each file's content, so one directory serves every Node version.
 */
export function cliCompileCacheDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const home = env.HOME || homedir();
  let base: string;
  if (platform === 'win32') base = env.LOCALAPPDATA || join(home, 'AppData', 'Local');
  else if (platform === 'darwin') base = join(home, 'Library', 'Caches');
  else base = env.XDG_CACHE_HOME || join(home, '.cache');
  return join(base, 'scienceevolve', 'compile');
}

/** `module.enableCompileCache` (Node ≥ 22.1); absent from Node 20's types and runtime. */
type EnableCompileCache = (dir?: string) => { status: number; message?: string; directory?: string };

/**
 * Enables Node's module compile cache in {@link cliCompileCacheDir}, so the next start of the CLI reads
 * compiled code instead of parsing the SDK again. Does nothing on a runtime without
 * `module.enableCompileCache` (Node < 22.1), when `NODE_DISABLE_COMPILE_CACHE` is set, or when
 * `NODE_COMPILE_CACHE` already chose a directory (Node enabled it at start). A cache that cannot be
 * written is not an error: the CLI runs uncached. Returns the directory in use, or undefined.
 */
export function enableCliCompileCache(): string | undefined {
  const enable = (nodeModule as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (typeof enable !== 'function' || process.env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  try {
    return enable(process.env.NODE_COMPILE_CACHE ? undefined : cliCompileCacheDir()).directory;
  } catch {
    return undefined;
  }
}

/** Modification time of `url` in ms, or undefined when it cannot be read (a missing file throws nothing). */
function mtimeOf(url: URL): number | undefined {
  try {
    return statSync(url, { throwIfNoEntry: false })?.mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Whether the light bundle (or `bundleFile`: the probe's) exists and is not older than the builds it was
 * made from. `npm run build` makes it after `tsc --build`; a later `tsc --build` alone (watch mode,
 * typecheck, lint) rewrites a package's `dist/.tsbuildinfo` when it emits anything, and then the bundle is
 * stale (a build with the bundle's own time too: on a file system that keeps whole seconds it may have come
 * after it): the bin runs the unbundled `dist/light.js` (or `main.js` for the probe: the same code, as tsc
 * built it) until the next `npm run build`. A published package has
 * no `.tsbuildinfo` (package.json leaves it out), so there the bundle is used whenever it exists.
 */
export function lightBundleFresh(
  cliDist: URL = new URL('./', import.meta.url),
  bundleFile: 'light.bundle.cjs' | 'probe.bundle.cjs' = 'light.bundle.cjs',
): boolean {
  const bundle = mtimeOf(new URL(bundleFile, cliDist));
  if (bundle === undefined) return false;
  for (const pkg of ['cli', 'sdk', 'supervisor']) {
    const built = mtimeOf(new URL(`../../${pkg}/dist/.tsbuildinfo`, cliDist));
    if (built !== undefined && built >= bundle) return false;
  }
  return true;
}

/**
 * The module that runs `argv`, relative to `dist/`: the light bundle for the light path (or `light.js`,
 * its unbundled source, when the bundle is missing or stale), the probe's bundle for `services probe` (or
 * `main.js` when it is missing or stale), `main.js` for every other command.
 */
export function cliModuleFor(
  argv: readonly string[],
  cliDist: URL = new URL('./', import.meta.url),
): './light.bundle.cjs' | './light.js' | './probe.bundle.cjs' | './main.js' {
  if (usesProbePath(argv)) return lightBundleFresh(cliDist, 'probe.bundle.cjs') ? './probe.bundle.cjs' : './main.js';
  if (!usesLightPath(argv)) return './main.js';
  return lightBundleFresh(cliDist) ? './light.bundle.cjs' : './light.js';
}

/**
 * Whether the bin runs `argv` from a fresh bundle (CommonJS, no ES module loader): a light command, or
 * `services probe` (its own bundle, `dist/probe.bundle.cjs`: docs/decisions/probe-bundle.md). Neither
 * serves MCP on stdout, so neither needs the stdout guard.
 */
export function runsBundled(argv: readonly string[], cliDist: URL = new URL('./', import.meta.url)): boolean {
  return cliModuleFor(argv, cliDist).endsWith('.bundle.cjs');
}

/** What the bin runs: a module's `run(argv)`. */
export interface CliModule {
  run: (argv: string[]) => Promise<number>;
}

/**
 * Loads the module that runs `argv` (`module`, when the caller already chose it with {@link cliModuleFor}:
 * the bin does, so the bundles' freshness is checked once a start). The light bundle and the probe's are CommonJS
 * files compiled with V8's code cache of their last run ({@link loadLightBundle}); `--debug` loads them
 * with `require` instead, so that Node's source-map support maps their stack frames. The others are ES
 * modules, imported.
 */
export async function loadCli(
  argv: readonly string[],
  module: ReturnType<typeof cliModuleFor> = cliModuleFor(argv),
): Promise<CliModule> {
  if (module !== './light.bundle.cjs' && module !== './probe.bundle.cjs') return (await import(module)) as CliModule;
  const bundle = fileURLToPath(new URL(module, import.meta.url));
  if (argv.includes('--debug')) return nodeModule.createRequire(import.meta.url)(bundle) as CliModule;
  return loadLightBundle(bundle, module === './probe.bundle.cjs' ? 'probe-services' : `light-${argv[0] ?? ''}`);
}

/**
 * Runs a bundle (CommonJS) through `vm.Script` with the code cache the previous run of the same
 * command left in {@link cliCompileCacheDir} (`<cacheName>-<node version>-<arch>.cache`: `light-<command>`,
 * or `probe-services` for the probe's bundle; in
 * `NODE_COMPILE_CACHE` when the user set one, on every Node version), and registers it in `require.cache` as
 * Node's loader would. When there was no cache, or V8 refused it (another bundle, another V8), a new one is
 * written at exit: made after the command ran, it holds the functions the command compiled, which Node's
 * own compile cache (made before a module runs) does not — so one cache per command. On Node 20, which has
 * no compile cache, this is the only one. The cache is keyed by the bundle file's identity: device, inode,
 * size, modification and change times (V8 itself checks only the source's length, and an install that
 * fixes every file's modification time — a reproducible build, the Nix store — can put another bundle of the
 * same size in place: its inode or change time differ, which no `utimes` sets back). `NODE_DISABLE_COMPILE_CACHE`
 * turns it off; a cache that cannot be read or written is ignored, never a failure.
 */
function loadLightBundle(bundle: string, cacheName: string): CliModule {
  // The text and its identity from one open file: a bundle replaced meanwhile cannot pair with the other's key.
  const fd = openSync(bundle, 'r');
  let source: string;
  let stat: Stats;
  try {
    stat = fstatSync(fd);
    source = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const key = Buffer.from(`${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}\n`);
  const cacheFile = process.env.NODE_DISABLE_COMPILE_CACHE
    ? undefined
    : join(
        process.env.NODE_COMPILE_CACHE || cliCompileCacheDir(),
        `${cacheName}-${process.version}-${process.arch}.cache`,
      );
  let cached: Buffer | undefined;
  if (cacheFile !== undefined) {
    try {
      const data = readOwnCache(cacheFile);
      if (data?.subarray(0, key.length).equals(key)) cached = data.subarray(key.length);
    } catch {
      cached = undefined;
    }
  }
  // The bundle's text is already a function expression of CommonJS's five arguments (the build wraps it,
  // scripts/build-light.mjs): compiled as it is read, with no wrapped copy of ~260 KiB to build and flatten.
  const script = new Script(source, { filename: bundle, cachedData: cached });
  const module = new nodeModule(bundle);
  module.filename = bundle;
  module.paths = [];
  module.loaded = true;
  (nodeModule as unknown as { _cache: Record<string, unknown> })._cache[bundle] = module;
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, nodeModule.createRequire(bundle), module, bundle, dirname(bundle));
  if (cacheFile !== undefined && (cached === undefined || script.cachedDataRejected === true)) {
    process.once('exit', () => writeCodeCache(cacheFile, key, script));
  }
  return module.exports as CliModule;
}

/** Writes the code cache atomically (a temporary file renamed over), the directory 0700, the file 0600. */
function writeCodeCache(cacheFile: string, key: Buffer, script: Script): void {
  const temporary = `${cacheFile}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(cacheFile), { recursive: true, mode: 0o700 });
    // A new file only (O_EXCL: never through a link planted under the temporary name).
    writeFileSync(temporary, Buffer.concat([key, script.createCachedData()]), { mode: 0o600, flag: 'wx' });
    renameSync(temporary, cacheFile);
  } catch {
    // Uncached next time; never a failure of the command.
  }
}

/**
 * The code cache in `cacheFile` when it is one this user alone could have written: a regular file (a link
 * is not followed), owned by this process's user, writable by no group or other. Else undefined: the cache
 * is compiled code, and one planted by someone else would run as whoever runs the CLI.
 */
function readOwnCache(cacheFile: string): Buffer | undefined {
  const fd = openSync(cacheFile, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || (stat.mode & 0o022) !== 0) return undefined;
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) return undefined;
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
