/**
 * The first module the `scienceevolve` bin loads, before the CLI itself. It enables the module compile
 * cache where the runtime has it, and for the commands whose stdout is an MCP stdio server (`services
 * serve` without `--http`, `bridge http-to-stdio`) it installs the stdout guard, so that stdout is
 * protocol from the first byte — a module that prints while the rest loads writes to stderr. It imports
 * nothing but the guard and Node built-ins.
 */
import nodeModule from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { protectStdout } from '@scienceevolve/sdk/protect-stdout';

/** Whether `argv` (without node and the script) runs a stdio MCP server on this process's stdout. */
export function servesStdioProtocol(argv: readonly string[]): boolean {
  if (argv.includes('--help') || argv.includes('-h')) return false;
  const [command, sub] = argv;
  if (command === 'bridge' && sub === 'http-to-stdio') return true;
  return command === 'services' && sub === 'serve' && !argv.some((a) => a === '--http' || a.startsWith('--http='));
}

/** Installs the stdout guard when `argv` serves the protocol on stdout (see {@link servesStdioProtocol}). */
export function guardStdoutFor(argv: readonly string[]): void {
  if (servesStdioProtocol(argv)) protectStdout();
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
