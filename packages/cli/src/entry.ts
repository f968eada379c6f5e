/**
 * The first module the `scienceevolve` bin loads, before the CLI itself: for the commands whose stdout is
 * an MCP stdio server (`services serve` without `--http`, `bridge http-to-stdio`) it installs the stdout
 * guard, so that stdout is protocol from the first byte — a module that prints while the rest loads
 * writes to stderr. It imports nothing but the guard.
 */
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
