/**
 * Turns a definition's `command` into the executable that is spawned (SPEC §3.1): `node` is the SDK's
 * own Node (`process.execPath`); a value with a `/` is a path (relative to the service's cwd); any other
 * value is looked up on the service environment's `PATH`. Resolving before spawning turns "no such
 * command" into a clear `command_not_found` instead of an asynchronous `ENOENT` from the spawn.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/**
 * The absolute path of the executable for `command`, or `undefined` when there is none.
 *
 * @param command the definition's `command`
 * @param pathValue the `PATH` of the service's environment (not the host's)
 * @param cwd the directory a relative path is resolved against (the service's cwd)
 */
export function resolveCommand(command: string, pathValue: string | undefined, cwd: string): string | undefined {
  if (command === 'node') return process.execPath;
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    return isExecutableFile(path) ? path : undefined;
  }
  for (const dir of (pathValue ?? '').split(delimiter)) {
    // An empty PATH entry means the current directory to a shell; no shell is used here, so it is skipped.
    if (dir === '') continue;
    const path = join(dir, command);
    if (isExecutableFile(path)) return isAbsolute(path) ? path : resolve(cwd, path);
  }
  return undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
