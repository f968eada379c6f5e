/**
 * Content-addressed persistent sources (SPEC §4): `mcp/<digest>/project-<name>/`, written to a temporary
 * directory and renamed into place, so a reader never sees half a version; immutable once written.
 */
import { randomBytes } from 'node:crypto';
import { lstat, open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../fileModes.js';
import { processStartTime } from '@scienceevolve/supervisor/procfs';
import { SdkError } from '../errors.js';
import { definitionDigest } from '../workflow/digest.js';
import type { McpDefinition } from '../workflow/workflowSchema.js';
import { pathExists, syncDirectory } from './atomicFile.js';
import type { ProjectPaths } from './projectStore.js';

/** Where a definition's persistent source is. @internal */
export interface StoredSource {
  digest: string;
  /** The absolute directory of the files. */
  dir: string;
  /** False when an identical source was already there. */
  written: boolean;
}

/**
 * Stores a validated definition's files under its digest. Two processes storing the same digest at once
 * both succeed with one result: each writes its own temporary directory, the first rename wins, and
 * the loser finds the winner's identical directory in place and discards its own.
 * @internal
 */
export async function storeSource(paths: ProjectPaths, name: string, definition: McpDefinition): Promise<StoredSource> {
  const digest = definitionDigest(definition);
  const dir = paths.sourceDir(digest, name);
  if (await pathExists(dir)) return { digest, dir, written: false };

  await removeDeadWritersLeftovers(paths.mcpDir);
  const tmp = join(paths.mcpDir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    // Directories first, then every file written and fsynced concurrently: the fsyncs overlap instead of
    // queueing one behind another (each costs milliseconds on a real disk).
    const files = Object.entries(definition.files).map(([relative, content]) => ({
      path: join(tmp, ...relative.split('/')),
      content,
    }));
    await makePrivateDir(tmp);
    for (const dirPath of new Set(files.map((f) => dirname(f.path)))) await makePrivateDir(dirPath);
    await Promise.all(
      files.map(async ({ path, content }) => {
        const handle = await open(path, 'wx', PRIVATE_FILE_MODE);
        try {
          await handle.writeFile(content, 'utf8');
          await handle.sync();
        } finally {
          await handle.close();
        }
      }),
    );
    await makePrivateDir(dirname(dir));
    try {
      await rename(tmp, dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Another writer renamed the same digest into place first: its content is the same by construction.
      if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await pathExists(dir)))
        return { digest, dir, written: false };
      throw error;
    }
    await syncDirectory(dirname(dir));
    return { digest, dir, written: true };
  } catch (error) {
    throw new SdkError('io_error', `could not store the source of "${name}" in ${dir}: ${(error as Error).message}`, {
      remedy: 'check that the data dir is writable and has free space',
      data: { definition: name, digest, path: dir },
      cause: error,
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Removes `.tmp-<pid>-*` directories whose writer is gone (SIGKILLed mid-store): they were never renamed
 * into place, so no reader ever saw them. A live writer's directory is left alone.
 */
async function removeDeadWritersLeftovers(mcpDir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(mcpDir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^\.tmp-(\d+)-[0-9a-f]+$/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    if (processStartTime(pid) !== undefined) continue;
    await rm(join(mcpDir, name), { recursive: true, force: true });
  }
}

/** The files of a stored source (or of its copy): relative path (with `/`) → content. A symlink or special file is tampering. */
export async function readSourceFiles(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = Object.create(null) as Record<string, string>;
  const root = resolve(dir);
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files[relative(root, path).split(sep).join('/')] = await readFile(path, 'utf8');
      else {
        const kind = (await lstat(path)).isSymbolicLink() ? 'a symbolic link' : 'not a regular file';
        throw new SdkError('store_tampered', `${path} is ${kind}; a stored source holds regular files only`, {
          remedy: 'restore the source from a backup, or load the workflow again into a new data dir',
          data: { path },
        });
      }
    }
  };
  try {
    await walk(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new SdkError('store_tampered', `${dir} is missing; an accepted version names it`, {
        remedy: 'restore the source from a backup, or load the workflow again into a new data dir',
        data: { path: dir },
      });
    }
    throw error;
  }
  return files;
}

/** Which files differ between what the version says and what is stored, in a few words. */
export function sourceDifferences(expected: Record<string, string>, stored: Record<string, string>): string {
  const parts: string[] = [];
  for (const path of Object.keys(expected).sort()) {
    if (!Object.hasOwn(stored, path)) parts.push(`${path} missing`);
    else if (stored[path] !== expected[path]) parts.push(`${path} differs`);
  }
  for (const path of Object.keys(stored).sort()) if (!Object.hasOwn(expected, path)) parts.push(`${path} added`);
  return parts.slice(0, 5).join(', ') + (parts.length > 5 ? `, and ${parts.length - 5} more` : '');
}

/**
 * Checks an invocation's copy of a stored source against the digest the accepted version names, before
 * the service runs from it: a source edited under `mcp/<digest>/` after it was stored (by anything but
 * the SDK, which never changes it) is `store_tampered` naming the stored directory and the files that differ.
 */
export async function checkSourceCopy(
  copy: string,
  stored: string,
  definition: McpDefinition,
  digest: string,
): Promise<void> {
  const files = await readSourceFiles(copy);
  const actual = definitionDigest({ ...definition, files });
  if (actual === digest) return;
  const differing = sourceDifferences(definition.files, files);
  throw new SdkError(
    'store_tampered',
    `${stored} was changed outside ScienceEvolve: it does not match its digest ${digest}${differing === '' ? '' : ` (${differing})`}`,
    {
      remedy:
        'run `scienceevolve workflow verify` for the project, then restore the source from a backup or load the workflow into a new data dir',
      data: { path: stored, digest },
    },
  );
}
