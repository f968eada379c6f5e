/**
 * `scienceevolve workflow verify` (SPEC §13): checks a whole project's store — every version file, the
 * hash chain, `accepted.json`, and every persistent source under `mcp/<digest>/` recomputed against its
 * digest — and lists every problem found, not the first only. Reads only.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { SdkError, toSdkError } from '../errors.js';
import type { WorkflowVerifyDocumentSchema } from '../schemas/cliDocuments.js';
import { definitionDigest } from '../workflow/digest.js';
import { NAME_PATTERN } from '../workflow/limits.js';
import { checkDataDir } from './dataDir.js';
import { checkProjectId } from './projectId.js';
import { ProjectPaths } from './projectStore.js';
import { readSourceFiles, sourceDifferences } from './sourceStore.js';
import { type WorkflowVersion, readPointer, readVersionFile } from './storeChain.js';

// The report is the `workflow verify --json` document: its types are the schema's (`schemas/cliDocuments.ts`).
/** The result of {@link verifyProjects}: the `workflow verify --json` document. */
export type VerifyReport = z.infer<typeof WorkflowVerifyDocumentSchema>;
/** One project's verification. @internal */
export type ProjectVerification = VerifyReport['projects'][number];
/** One problem: the file (or directory) and what did not match. @internal */
export type VerifyProblem = ProjectVerification['problems'][number];

/** Options of {@link verifyProjects}. */
export interface VerifyOptions {
  dataDir: string;
  /** One project; default: every project of the data dir. */
  project?: string | undefined;
}

/** Verifies one project or every project of a data dir. Never changes anything. @internal */
export async function verifyProjects(options: VerifyOptions): Promise<VerifyReport> {
  const dataDir = await checkDataDir(options.dataDir);
  let ids: string[];
  if (options.project !== undefined) {
    const id = checkProjectId(options.project);
    if (!(await isDirectory(join(dataDir, 'projects', id)))) {
      throw new SdkError('unknown_project', `the data dir ${dataDir} has no project "${id}"`, {
        remedy: 'run `scienceevolve status --data-dir D` to list the projects',
        data: { project: id },
      });
    }
    ids = [id];
  } else {
    ids = (await readdir(join(dataDir, 'projects')).catch(() => [] as string[])).sort();
  }
  const projects: ProjectVerification[] = [];
  for (const id of ids) projects.push(await verifyProject(new ProjectPaths(dataDir, id)));
  return { dataDir, ok: projects.every((p) => p.ok), projects };
}

async function verifyProject(paths: ProjectPaths): Promise<ProjectVerification> {
  const problems: VerifyProblem[] = [];
  const notes: string[] = [];
  const problem = (file: string, error: unknown) => {
    const e = toSdkError(error, 'store_tampered');
    problems.push({ file, code: e.code, message: e.message });
  };

  // accepted.json
  let pointer: Awaited<ReturnType<typeof readPointer>>;
  try {
    pointer = await readPointer(paths);
  } catch (error) {
    problem(paths.acceptedPath, error);
  }

  // Every version file, then the links between them.
  const numbers = await versionNumbers(paths, problems);
  const files = new Map<number, { record: WorkflowVersion; digest: string }>();
  for (const n of numbers) {
    try {
      const found = await readVersionFile(paths, n);
      if (found !== undefined) files.set(n, found);
    } catch (error) {
      problem(paths.versionPath(n), error);
    }
  }
  const top = numbers.at(-1) ?? 0;
  const head = pointer?.version ?? (problems.some((p) => p.file === paths.acceptedPath) ? top : 0);
  if (pointer === undefined && top > 0 && !problems.some((p) => p.file === paths.acceptedPath)) {
    problems.push({
      file: paths.acceptedPath,
      code: 'store_tampered',
      message: `${paths.acceptedPath} is missing, and ${top} version file${top === 1 ? '' : 's'} exist`,
    });
  }
  for (let n = 1; n <= Math.max(head, top); n++) {
    if (!numbers.includes(n) && n <= head) {
      problems.push({
        file: paths.versionPath(n),
        code: 'store_tampered',
        message: `${paths.versionPath(n)} is missing; versions 1 to ${head} must all exist`,
      });
    }
    const here = files.get(n);
    const before = files.get(n - 1);
    if (here !== undefined && before !== undefined && here.record.previous !== before.digest) {
      problems.push({
        file: paths.versionPath(n - 1),
        code: 'store_tampered',
        message: `${paths.versionPath(n - 1)} has digest ${before.digest}, and ${paths.versionPath(n)} names ${here.record.previous} as its predecessor`,
      });
    }
  }
  if (pointer !== undefined) {
    const named = files.get(pointer.version);
    if (!numbers.includes(pointer.version)) {
      problems.push({
        file: paths.acceptedPath,
        code: 'store_tampered',
        message: `${paths.acceptedPath} names version ${pointer.version}, and ${paths.versionPath(pointer.version)} does not exist`,
      });
    } else if (named !== undefined && named.digest !== pointer.digest) {
      problems.push({
        file: paths.versionPath(pointer.version),
        code: 'store_tampered',
        message: `${paths.versionPath(pointer.version)} has digest ${named.digest}, and ${paths.acceptedPath} names ${pointer.digest}`,
      });
    }
    for (const n of numbers.filter((v) => v > pointer.version)) {
      if (n === pointer.version + 1) {
        notes.push(`${paths.versionPath(n)} was never accepted (an accept interrupted before accepted.json moved)`);
      } else {
        problems.push({
          file: paths.acceptedPath,
          code: 'store_tampered',
          message: `${paths.acceptedPath} names version ${pointer.version}, but version ${n} exists: the pointer was moved back`,
        });
      }
    }
  }

  // Every persistent source a version in force names, recomputed against its digest.
  const named = new Set<string>();
  let sources = 0;
  for (const [n, { record }] of files) {
    if (n > head) continue;
    for (const [name, definition] of Object.entries(record.workflow.mcpDefinitions)) {
      const digest = record.digests[name] as string;
      const key = `${digest}/${name}`;
      if (named.has(key)) continue;
      named.add(key);
      sources += 1;
      let dir: string;
      try {
        dir = paths.sourceDir(digest, name);
      } catch (error) {
        problem(paths.versionPath(n), error);
        continue;
      }
      try {
        const stored = await readSourceFiles(dir);
        const actual = definitionDigest({ ...definition, files: stored });
        if (actual !== digest) {
          const differing = sourceDifferences(definition.files, stored);
          problems.push({
            file: dir,
            code: 'store_tampered',
            message: `${dir} does not match its digest ${digest} (recomputed ${actual}${differing === '' ? '' : `; ${differing}`})`,
          });
        }
      } catch (error) {
        problem(dir, error);
      }
    }
  }
  for (const entry of await readdir(paths.mcpDir).catch(() => [] as string[])) {
    if (entry.startsWith('.')) continue;
    for (const sub of await readdir(join(paths.mcpDir, entry)).catch(() => [] as string[])) {
      const name = sub.startsWith('project-') ? sub.slice('project-'.length) : '';
      if (!NAME_PATTERN.test(name) || !/^[0-9a-f]{64}$/.test(entry)) {
        problems.push({
          file: join(paths.mcpDir, entry, sub),
          code: 'store_tampered',
          message: `${join(paths.mcpDir, entry, sub)} is not a source the SDK writes (mcp/<digest>/project-<name>)`,
        });
      } else if (!named.has(`${entry}/${name}`)) {
        notes.push(
          `${join(paths.mcpDir, entry, sub)} is named by no accepted version (an accept interrupted after storing it)`,
        );
      }
    }
  }
  return {
    project: paths.projectId,
    ok: problems.length === 0,
    acceptedVersion: pointer?.version ?? null,
    versions: files.size,
    sources,
    problems,
    notes,
  };
}

/** The numbers of the files in `workflow/versions/`; any other entry (not a dot file) is a problem. */
async function versionNumbers(paths: ProjectPaths, problems: VerifyProblem[]): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(paths.versionsDir);
  } catch {
    return [];
  }
  const numbers: number[] = [];
  for (const name of names) {
    const match = /^([1-9]\d{0,8})\.json$/.exec(name);
    if (match !== null) numbers.push(Number(match[1]));
    else if (!name.startsWith('.')) {
      problems.push({
        file: join(paths.versionsDir, name),
        code: 'store_tampered',
        message: `${join(paths.versionsDir, name)} is not a version file the SDK writes (<n>.json)`,
      });
    }
  }
  return numbers.sort((a, b) => a - b);
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch {
    return false;
  }
}
