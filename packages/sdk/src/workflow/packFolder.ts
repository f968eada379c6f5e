/**
 * `scienceevolve workflow pack`: a workflow folder (see `folderLayout.ts`) becomes one `workflow.json`.
 * Every file is read as it is on disk: symbolic links and special files are refused (so nothing outside
 * the folder is ever read), files that are not UTF-8 text are refused, and every rule and limit of the
 * workflow is reported with the folder's own file paths.
 */
import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { type ErrorCode, SdkError } from '../errors.js';
import {
  canonicalWorkflow,
  canonicalWorkflowJson,
  type FolderIssue,
  folderIssueLine,
  LAUNCH_FILE,
  SERVICES_DIR,
  WORKFLOW_BASE_JSON,
  WORKFLOW_YAML,
} from './folderLayout.js';
import { toJsonPath } from './jsonPath.js';
import { LIMITS, NAME_PATTERN } from './limits.js';
import { type ValidationIssue, validateWorkflow } from './validate.js';
import type { Workflow } from './workflowSchema.js';

/** The result of {@link packFolder}. @public */
export interface PackedFolder {
  /** The workflow as written in the folder, in canonical key order (defaults not filled). */
  document: Record<string, unknown>;
  /** The same workflow validated, with defaults filled. */
  workflow: Workflow;
  /** The canonical `workflow.json` text of {@link PackedFolder.document}. */
  text: string;
  /** Every file read, relative to the folder, in the order read. */
  files: string[];
}

/** No service file larger than this fits in `mcpDefinitions` (1 MiB as JSON, where its text is at least as many bytes). */
const MAX_FILE_BYTES = LIMITS.definitionsJsonBytes;
/** No file larger than this fits in a workflow: its text, as a JSON string, is at least as many bytes (2 MiB). */
const MAX_READ_BYTES = LIMITS.workflowJsonBytes;
/** Directory entries looked at in one service folder at most, files and folders together. */
const MAX_ENTRIES = LIMITS.filesPerDefinition * 10;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Reads the workflow folder `dir` and returns its workflow. Throws an {@link SdkError}: `invalid_folder`,
 * `binary_file`, `special_file`, `limit_exceeded`, `invalid_json` or `io_error` for a folder that cannot be
 * read as a workflow (every such problem in `data.errors`), then `invalid_workflow` for a workflow that
 * breaks a rule (every issue in `data.errors`, each located by the folder's own file path).
 * @public
 */
export async function packFolder(dir: string): Promise<PackedFolder> {
  await requireFolder(dir, 'a workflow folder (workflow.yaml and services/); `scienceevolve init` makes one');
  const reader = new FolderReader(dir);
  const base = await reader.readBase();
  const definitions = await reader.readServices();
  if (reader.issues.length > 0) throw folderError(dir, reader.issues);

  const document: Record<string, unknown> = Object.fromEntries(
    Object.keys(base ?? {})
      .filter((key) => key !== 'mcpDefinitions')
      .map((key) => [key, base?.[key]]),
  );
  if (definitions !== undefined) document.mcpDefinitions = Object.fromEntries(definitions);
  const canonical = canonicalWorkflow(document) as Record<string, unknown>;
  const result = validateWorkflow(canonical);
  if (!result.ok) {
    throw workflowIssuesError(
      dir,
      result.errors,
      locator(reader.baseName, definitions ?? [], (name) => `${SERVICES_DIR}/${name}`),
    );
  }
  return { document: canonical, workflow: result.workflow, text: canonicalWorkflowJson(canonical), files: reader.read };
}

/**
 * Reads one service folder (its `service.json` and files) as one entry of `mcpDefinitions`, as written,
 * in canonical key order. The definition is validated as a definition of a workflow; the errors are those
 * of {@link packFolder}, with paths relative to the folder's parent (`charts/server.cjs`).
 * @public
 */
export async function packServiceFolder(dir: string): Promise<Record<string, unknown>> {
  await requireFolder(dir, 'a service folder (service.json and the service files)');
  const absolute = resolve(dir);
  const folder = basename(absolute);
  const reader = new FolderReader(dirname(absolute));
  const def = await reader.readService(folder);
  if (reader.issues.length > 0 || def === undefined) throw folderError(dir, reader.issues);
  const name = NAME_PATTERN.test(folder) ? folder : 'service';
  const document = canonicalWorkflow({ agents: { main: {} }, mcpDefinitions: { [name]: def } }) as {
    mcpDefinitions: Record<string, Record<string, unknown>>;
  };
  const result = validateWorkflow(document);
  if (!result.ok)
    throw workflowIssuesError(
      dir,
      result.errors,
      locator(WORKFLOW_YAML, [[name, def]], () => folder),
    );
  return document.mcpDefinitions[name]!;
}

/** Throws `io_error` when `dir` cannot be read, `invalid_folder` when it is not a folder. */
async function requireFolder(dir: string, wanted: string): Promise<void> {
  const info = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    throw new SdkError('io_error', `could not read the folder ${dir}: ${error.code ?? error.message}`, {
      remedy: `give the path of ${wanted}`,
      data: { dir },
      cause: error,
    });
  });
  if (!info.isDirectory()) {
    throw new SdkError('invalid_folder', `${dir} is not a folder`, {
      remedy: `give the path of ${wanted}`,
      data: { dir },
    });
  }
}

/** The `invalid_workflow` SdkError for validation issues, each located by the folder's own file path. */
function workflowIssuesError(
  dir: string,
  errors: readonly ValidationIssue[],
  locate: (jsonPath: string) => { path: string; at?: string },
): SdkError {
  const issues: FolderIssue[] = errors.map((e) => ({ code: e.code, ...locate(e.path), message: e.message }));
  const lines = issues.map((i) => `  ${i.code} ${folderIssueLine(i)}`).join('\n');
  return new SdkError(
    'invalid_workflow',
    `the workflow folder ${dir} has ${issues.length} error${issues.length === 1 ? '' : 's'}:\n${lines}`,
    { remedy: 'fix each error in the file it names, then pack again', data: { dir, errors: issues } },
  );
}

/** The SdkError for problems met while reading the folder: their shared code, or `invalid_folder` when they differ. */
function folderError(dir: string, issues: FolderIssue[]): SdkError {
  const codes = new Set(issues.map((i) => i.code));
  const code = (codes.size === 1 ? [...codes][0] : 'invalid_folder') as ErrorCode;
  const lines = issues.map((i) => `  ${i.code} ${folderIssueLine(i)}`).join('\n');
  return new SdkError(
    code,
    `the workflow folder ${dir} cannot be packed (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines}`,
    { remedy: 'fix each problem at the file it names, then pack again', data: { dir, errors: issues } },
  );
}

/** A map from a validation issue's JSON path to the folder's file (and the place inside it). */
function locator(
  baseName: string,
  definitions: Array<[string, Record<string, unknown>]>,
  folderOf: (name: string) => string,
): (jsonPath: string) => { path: string; at?: string } {
  const prefixes: Array<{ prefix: string; path: string; whole?: string }> = [];
  for (const [name, def] of definitions) {
    const folder = folderOf(name);
    const files = def.files as Record<string, unknown>;
    for (const file of Object.keys(files)) {
      prefixes.push({
        prefix: toJsonPath(['mcpDefinitions', name, 'files', file]),
        path: file === LAUNCH_FILE ? `${folder}/${LAUNCH_FILE} (files["${LAUNCH_FILE}"])` : `${folder}/${file}`,
      });
    }
    prefixes.push({ prefix: toJsonPath(['mcpDefinitions', name, 'files']), path: `${folder}/` });
    prefixes.push({
      prefix: toJsonPath(['mcpDefinitions', name]),
      path: `${folder}/${LAUNCH_FILE}`,
      whole: `${folder}/`,
    });
  }
  prefixes.push({ prefix: toJsonPath(['mcpDefinitions']), path: `${SERVICES_DIR}/` });
  prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  return (jsonPath) => {
    for (const p of prefixes) {
      // The definition itself (its name, say) is the service folder; a key inside it is in the launch file.
      if (jsonPath === p.prefix) return { path: p.whole ?? p.path };
      const rest = jsonPath.slice(p.prefix.length);
      if (jsonPath.startsWith(p.prefix) && (rest.startsWith('.') || rest.startsWith('['))) {
        return { path: p.path, at: rest.replace(/^\./, '') };
      }
    }
    if (jsonPath === '$') return { path: '(the packed workflow.json)' };
    return { path: baseName, at: jsonPath.replace(/^\$\.?/, '') };
  };
}

/** Reads one workflow folder, collecting every problem rather than stopping at the first. */
class FolderReader {
  readonly issues: FolderIssue[] = [];
  readonly read: string[] = [];
  /** The base file used (for locating issues). */
  baseName = WORKFLOW_YAML;

  constructor(private readonly dir: string) {}

  private add(code: ErrorCode, path: string, message: string, at?: string): void {
    this.issues.push({ code, path, ...(at === undefined ? {} : { at }), message });
  }

  /** The base document from workflow.yaml or workflow.base.json; undefined when it is missing or broken. */
  async readBase(): Promise<Record<string, unknown> | undefined> {
    const yamlText = await this.readTextIfPresent(WORKFLOW_YAML);
    const jsonText = await this.readTextIfPresent(WORKFLOW_BASE_JSON);
    if (yamlText === null || jsonText === null) return undefined;
    if (yamlText !== undefined && jsonText !== undefined) {
      this.add(
        'invalid_folder',
        WORKFLOW_BASE_JSON,
        `both ${WORKFLOW_YAML} and ${WORKFLOW_BASE_JSON} are present: keep one of them`,
      );
      return undefined;
    }
    let value: unknown;
    if (yamlText !== undefined) {
      const lineCounter = new LineCounter();
      const doc = parseDocument(yamlText, { uniqueKeys: true, prettyErrors: false, lineCounter });
      if (doc.errors.length > 0) {
        for (const error of doc.errors) {
          const where = lineCounter.linePos(error.pos[0]);
          const at = where === undefined ? '' : `:${where.line}:${where.col}`;
          this.add(
            'invalid_folder',
            `${WORKFLOW_YAML}${at}`,
            `not valid YAML (${error.message.split('\n')[0]}); fix the syntax`,
          );
        }
        return undefined;
      }
      value = doc.toJS({ maxAliasCount: 100 });
    } else if (jsonText !== undefined) {
      this.baseName = WORKFLOW_BASE_JSON;
      try {
        value = JSON.parse(jsonText);
      } catch (error) {
        this.add('invalid_json', WORKFLOW_BASE_JSON, `not valid JSON (${(error as Error).message}); fix the syntax`);
        return undefined;
      }
    } else {
      this.add(
        'invalid_folder',
        WORKFLOW_YAML,
        `missing: a workflow folder has ${WORKFLOW_YAML} (or ${WORKFLOW_BASE_JSON}) with its agents and orchestration; \`scienceevolve init\` writes one`,
      );
      return undefined;
    }
    const name = this.baseName;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.add('invalid_folder', name, 'must be a mapping with "agents" (and optionally "orchestration")');
      return undefined;
    }
    const base = value as Record<string, unknown>;
    if (Object.hasOwn(base, 'mcpDefinitions')) {
      this.add(
        'invalid_folder',
        name,
        `a workflow folder writes each definition as a folder ${SERVICES_DIR}/<name>/ with its files and ${LAUNCH_FILE}: move it there (\`scienceevolve workflow unpack\` does it)`,
        'mcpDefinitions',
      );
      return undefined;
    }
    // YAML may hold values JSON cannot (.inf, .nan): the packed workflow holds what JSON holds.
    return JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  }

  /** The definitions, sorted by name; undefined when there is no services/ folder. */
  async readServices(): Promise<Array<[string, Record<string, unknown>]> | undefined> {
    const info = await this.lstatIfPresent(SERVICES_DIR);
    if (info === undefined) return undefined;
    if (info === null) return [];
    if (!info.isDirectory()) {
      this.notRegular(SERVICES_DIR, info, 'a folder');
      return [];
    }
    const names = await this.list(SERVICES_DIR);
    if (names === undefined) return [];
    if (names.length > LIMITS.definitions) {
      this.add(
        'limit_exceeded',
        `${SERVICES_DIR}/`,
        `${names.length} entries; a workflow may have at most ${LIMITS.definitions} project services: remove some`,
      );
      return [];
    }
    const definitions: Array<[string, Record<string, unknown>]> = [];
    for (const name of names.sort()) {
      const folder = `${SERVICES_DIR}/${name}`;
      const entry = await this.lstatIfPresent(folder);
      if (entry === undefined || entry === null) continue;
      if (!entry.isDirectory()) {
        if (entry.isFile()) {
          this.add(
            'invalid_folder',
            folder,
            `${SERVICES_DIR}/ holds only service folders: move this file into a service folder or out of ${SERVICES_DIR}/`,
          );
        } else this.notRegular(folder, entry, 'a folder');
        continue;
      }
      const def = await this.readService(folder);
      if (def !== undefined) definitions.push([name, def]);
    }
    return definitions;
  }

  /** One service folder (relative to the reader's root) as a definition; undefined when its launch file is unusable. */
  async readService(folder: string): Promise<Record<string, unknown> | undefined> {
    const launchPath = `${folder}/${LAUNCH_FILE}`;
    const launchText = await this.readTextIfPresent(launchPath);
    let launch: Record<string, unknown> | undefined;
    if (launchText === undefined) {
      this.add(
        'invalid_folder',
        launchPath,
        `missing: a service folder has ${LAUNCH_FILE} with at least {"entrypoint": "<the file to run>"}`,
      );
    } else if (launchText !== null) {
      try {
        const value: unknown = JSON.parse(launchText);
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          launch = value as Record<string, unknown>;
        } else {
          this.add('invalid_folder', launchPath, 'must be a JSON object such as {"entrypoint": "server.cjs"}');
        }
      } catch (error) {
        this.add('invalid_json', launchPath, `not valid JSON (${(error as Error).message}); fix the syntax`);
      }
    }
    const files: Array<[string, string]> = [];
    if (launch !== undefined && Object.hasOwn(launch, 'files')) {
      const inline = launch.files;
      if (
        typeof inline !== 'object' ||
        inline === null ||
        Array.isArray(inline) ||
        Object.keys(inline).some((k) => k !== LAUNCH_FILE) ||
        typeof (inline as Record<string, unknown>)[LAUNCH_FILE] !== 'string'
      ) {
        this.add(
          'invalid_folder',
          launchPath,
          `"files" here holds only the service's own root file "${LAUNCH_FILE}" as {"${LAUNCH_FILE}": "<its text>"}; every other file is a file in the folder`,
          'files',
        );
      } else {
        files.push([LAUNCH_FILE, (inline as Record<string, string>)[LAUNCH_FILE]!]);
      }
    }
    await this.walk(folder, '', files, { count: 0, stopped: false });
    if (launch === undefined) return undefined;
    const def = Object.fromEntries(
      Object.keys(launch)
        .filter((k) => k !== 'files')
        .map((k) => [k, launch[k]]),
    );
    def.files = Object.fromEntries(files);
    return def;
  }

  /** Collects the files under `folder/sub` into `files`, depth first; `seen` counts entries across the folder. */
  private async walk(
    folder: string,
    sub: string,
    files: Array<[string, string]>,
    seen: { count: number; stopped: boolean },
  ): Promise<void> {
    const here = sub === '' ? folder : `${folder}/${sub}`;
    const names = await this.list(here);
    if (names === undefined) return;
    for (const name of names.sort()) {
      const relative = sub === '' ? name : `${sub}/${name}`;
      const path = `${folder}/${relative}`;
      if (sub === '' && name === LAUNCH_FILE) continue;
      if (seen.stopped) return;
      seen.count += 1;
      if (seen.count > MAX_ENTRIES) {
        this.add(
          'limit_exceeded',
          `${folder}/`,
          `more than ${MAX_ENTRIES} files and folders; a definition may have at most ${LIMITS.filesPerDefinition} files: remove some`,
        );
        seen.stopped = true;
        return;
      }
      // The path rules of the workflow hold for folders too; deeper than this is refused before it is read.
      if (relative.length > LIMITS.pathChars) {
        this.add('unsafe_path', path, `a file path may be at most ${LIMITS.pathChars} characters`);
        continue;
      }
      const info = await this.lstatIfPresent(path);
      if (info === undefined || info === null) continue;
      if (info.isDirectory()) await this.walk(folder, relative, files, seen);
      else if (!info.isFile()) this.notRegular(path, info, 'a file');
      else if (info.size > MAX_FILE_BYTES) {
        this.add(
          'limit_exceeded',
          path,
          `${info.size} bytes; all service files together may be at most ${LIMITS.definitionsJsonBytes} bytes (1 MiB) as JSON: keep large data out of the service`,
        );
      } else {
        const text = await this.readTextIfPresent(path);
        if (typeof text === 'string') files.push([relative, text]);
        if (files.length > LIMITS.filesPerDefinition) {
          this.add(
            'limit_exceeded',
            `${folder}/`,
            `more than ${LIMITS.filesPerDefinition} files; a definition may have at most ${LIMITS.filesPerDefinition}: remove some or bundle them`,
          );
          seen.stopped = true;
          return;
        }
      }
    }
  }

  /** Names in a folder, checked as UTF-8; undefined (and an issue) when it cannot be listed. */
  private async list(relative: string): Promise<string[] | undefined> {
    let raw: Buffer[];
    try {
      raw = await readdir(join(this.dir, relative), { encoding: 'buffer' });
    } catch (error) {
      this.add('io_error', `${relative}/`, `could not list the folder (${(error as NodeJS.ErrnoException).code})`);
      return undefined;
    }
    const names: string[] = [];
    for (const bytes of raw) {
      try {
        names.push(utf8.decode(bytes));
      } catch {
        this.add(
          'unsafe_path',
          `${relative}/${bytes.toString('utf8')}`,
          'the file name is not UTF-8: rename it with UTF-8 characters',
        );
      }
    }
    return names;
  }

  private notRegular(path: string, info: import('node:fs').Stats, wanted: string): void {
    if (info.isDirectory()) {
      this.add('invalid_folder', path, `is a folder; ${wanted} is expected here`);
      return;
    }
    const what = info.isSymbolicLink()
      ? 'a symbolic link'
      : info.isFIFO()
        ? 'a named pipe'
        : info.isSocket()
          ? 'a socket'
          : 'a device or special file';
    this.add(
      'special_file',
      path,
      `is ${what}, not ${wanted}: a workflow folder holds regular files and folders only (nothing outside it is read); copy the target in instead`,
    );
  }

  /** lstat of a relative path: undefined when absent, null (and an issue) when it cannot be read. */
  private async lstatIfPresent(relative: string): Promise<import('node:fs').Stats | undefined | null> {
    try {
      return await lstat(join(this.dir, relative));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      this.add('io_error', relative, `could not read it (${(error as NodeJS.ErrnoException).code})`);
      return null;
    }
  }

  /**
   * The UTF-8 text of a regular file: undefined when absent, null (and an issue) when it is not a regular
   * file, cannot be read, or is not text.
   */
  private async readTextIfPresent(relative: string): Promise<string | undefined | null> {
    const info = await this.lstatIfPresent(relative);
    if (info === undefined || info === null) return info;
    if (!info.isFile()) {
      this.notRegular(relative, info, 'a file');
      return null;
    }
    if (info.size > MAX_READ_BYTES) {
      this.add(
        'limit_exceeded',
        relative,
        `${info.size} bytes; a whole workflow may be at most ${LIMITS.workflowJsonBytes} bytes as JSON: make it smaller`,
      );
      return null;
    }
    let bytes: Buffer;
    try {
      // O_NOFOLLOW: a file replaced by a link after the lstat above is refused (ELOOP), not followed.
      const handle = await open(join(this.dir, relative), constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        const opened = await handle.stat();
        if (!opened.isFile() || opened.size > MAX_READ_BYTES)
          throw Object.assign(new Error('changed'), { code: 'ECHANGED' });
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ECHANGED') {
        this.add('special_file', relative, 'changed into a link or special file while it was read: pack again');
      } else this.add('io_error', relative, `could not read it (${code})`);
      return null;
    }
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      this.add(
        'binary_file',
        relative,
        'is not UTF-8 text: a workflow holds text files only; keep binary data out of the service (fetch it at run time) or encode it as text',
      );
      return null;
    }
    if (text.includes('\0')) {
      this.add(
        'binary_file',
        relative,
        'holds NUL characters, so it is binary: a workflow holds text files only; keep binary data out of the service or encode it as text',
      );
      return null;
    }
    this.read.push(relative);
    return text;
  }
}
