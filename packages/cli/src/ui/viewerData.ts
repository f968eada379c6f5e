/**
 * What the run viewer reads from a data dir, read-only: projects, their accepted versions and the diff of
 * each against the one before, runs with status and duration, a run's journal and a service's stderr log.
 * Every id that comes from a request is looked up in the store's own lists before it becomes part of a
 * path; nothing here creates, writes or locks anything.
 */
import { lstat, realpath } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import {
  ProjectPaths,
  diffWorkflows,
  type RunStatusReport,
  type StatusReport,
  type WorkflowVersion,
  listVersions,
  readVersion,
  openPlainFile,
  readPlainFile,
  redactWorkflowUrls,
  runStatus,
} from '@scienceevolve/sdk/internal';

/** Bytes of a stderr log the viewer sends at most: the log's own cap (1 MiB); a longer file is cut to its end. */
export const MAX_LOG_BYTES = 1024 * 1024;

/** A version as the viewer lists it (the workflow itself is left out of the list). */
export interface VersionSummary {
  version: number;
  acceptedAt: string;
  by: string;
  changedMcps: string[];
  changedAgents: string[];
}

/** A run as the viewer lists it. */
export interface RunSummary extends RunStatusReport {
  /** Milliseconds from start to finish, or to now while it runs; null when a time is unreadable. */
  durationMs: number | null;
}

/** A project as the viewer lists it. */
export interface ProjectSummary {
  project: string;
  /** The workspace of its latest run (a project id derived from a workspace is a hash of it), or null. */
  workspace: string | null;
  acceptedVersion: number | null;
  versions: VersionSummary[];
  runs: RunSummary[];
  corruptRuns: { run: string; message: string }[];
  /** Versions that could not be read (or the version list itself, as version 0): reported, never skipped. */
  corruptVersions: { version: number; message: string }[];
  liveServices: number;
}

/** One version with the one before it and what changed between them. */
export interface VersionDetail {
  version: WorkflowVersion;
  previous: WorkflowVersion | null;
  diff: ReturnType<typeof diffWorkflows>;
}

/** A request named something the data dir does not hold (→ 404). */
export class NotFound extends Error {}

/** The data dir's read side. */
export class ViewerData {
  /**
   * Version summaries already read, by project and number: a version file is written once and never
   * changed, and a version holds up to 2 MiB of workflow, so the start page (refreshed every 3 s) reads
   * each once.
   */
  private readonly summaries = new Map<string, VersionSummary>();

  constructor(
    /** The absolute data dir. */
    readonly dataDir: string,
  ) {}

  /** Every project with its versions and runs. */
  async projects(): Promise<ProjectSummary[]> {
    const report: StatusReport = await runStatus({ dataDir: this.dataDir });
    const out: ProjectSummary[] = [];
    for (const p of report.projects) {
      const paths = new ProjectPaths(this.dataDir, p.project);
      const versions: VersionSummary[] = [];
      const corruptVersions: { version: number; message: string }[] = [];
      const listed = await listVersions(paths).catch((error: unknown) => {
        corruptVersions.push({ version: 0, message: `the version list cannot be read: ${messageOf(error)}` });
        return [] as number[];
      });
      for (const n of listed) {
        const key = `${p.project}\0${n}`;
        let summary = this.summaries.get(key);
        if (summary === undefined) {
          const v = await readVersion(paths, n).catch((error: unknown) => {
            corruptVersions.push({ version: n, message: messageOf(error) });
            return undefined;
          });
          if (v === undefined) continue;
          summary = {
            version: v.version,
            acceptedAt: v.acceptedAt,
            by: v.by,
            changedMcps: v.changedMcps,
            changedAgents: v.changedAgents,
          };
          this.summaries.set(key, summary);
        }
        versions.push(summary);
      }
      const runs = p.runs.map(withDuration).sort((a, b) => b.startedAt.localeCompare(a.startedAt));
      out.push({
        project: p.project,
        workspace: runs[0]?.workspace ?? null,
        acceptedVersion: p.acceptedVersion,
        versions,
        runs,
        corruptRuns: p.corruptRuns.map((c) => ({ run: c.run, message: c.message })),
        corruptVersions,
        liveServices: p.liveServices.length,
      });
    }
    return out;
  }

  /** The project id as listed by the store, or {@link NotFound}. */
  async project(id: string): Promise<string> {
    const report = await runStatus({ dataDir: this.dataDir });
    if (!report.projects.some((p) => p.project === id)) throw new NotFound(`no project "${id}"`);
    return id;
  }

  /** One version, the one before it and their diff. */
  async version(projectId: string, versionText: string): Promise<VersionDetail> {
    const paths = new ProjectPaths(this.dataDir, await this.project(projectId));
    if (!/^[1-9][0-9]{0,8}$/.test(versionText)) throw new NotFound(`no version "${versionText}"`);
    const n = Number(versionText);
    const listed = await listVersions(paths);
    if (!listed.includes(n)) throw new NotFound(`project ${projectId} has no version ${n}`);
    // Every URL redacted (a token in a remote entry's query or a model endpoint is never shown), as Main sees them.
    const version = redacted(await readVersion(paths, n));
    const before = listed.filter((v) => v < n).pop();
    const previous = before === undefined ? null : await readVersion(paths, before).then(redacted, () => null);
    return { version, previous, diff: diffWorkflows(previous?.workflow, version.workflow) };
  }

  /** A run of a project as listed by `status` (a damaged record is listed too: its journal may still be read). */
  async run(projectId: string, runId: string): Promise<{ summary: RunSummary | null; damaged: string | null }> {
    const report = await runStatus({ dataDir: this.dataDir, project: await this.project(projectId) });
    const p = report.projects[0];
    const found = p?.runs.find((r) => r.run === runId);
    if (found !== undefined) return { summary: withDuration(found), damaged: null };
    const corrupt = p?.corruptRuns.find((c) => c.run === runId);
    if (corrupt !== undefined) return { summary: null, damaged: corrupt.message };
    throw new NotFound(`project ${projectId} has no run "${runId}"`);
  }

  /** The journal path of a run that {@link run} found. */
  async eventsPath(projectId: string, runId: string): Promise<string> {
    await this.run(projectId, runId);
    const path = join(new ProjectPaths(this.dataDir, projectId).runDir(runId), 'events.jsonl');
    // Not yet written is fine (the tail waits for it); anything but a plain file (a symlink) is not read.
    const info = await lstat(path).catch(() => undefined);
    if (info !== undefined && !info.isFile()) throw new NotFound(`the journal of run ${runId} is not a plain file`);
    return path;
  }

  /**
   * The stderr log of a service of a run: `servicesId` and `service` must be a pair some `service.*` event of
   * the run's journal names, and the path must stay inside the run's folder. At most the last
   * {@link MAX_LOG_BYTES} bytes.
   */
  async serviceLog(
    projectId: string,
    runId: string,
    servicesId: string,
    service: string,
  ): Promise<{ text: string; bytes: number }> {
    const eventsPath = await this.eventsPath(projectId, runId);
    if (!plainName(servicesId) || !plainName(service))
      throw new NotFound(`no service "${service}" under "${servicesId}"`);
    const named = await journalNamesService(eventsPath, servicesId, service);
    if (!named) throw new NotFound(`run ${runId} has no service "${service}" under "${servicesId}"`);
    const runDir = resolve(new ProjectPaths(this.dataDir, projectId).runDir(runId));
    const path = resolve(runDir, 'invocations', servicesId, 'mcp', `${service}.stderr.log`);
    if (!path.startsWith(runDir + sep)) throw new NotFound(`run ${runId} has no log for "${service}"`);
    // lstat, not stat: a log replaced by a symlink (a service can write next to its log) is not followed.
    const info = await lstat(path).catch(() => undefined);
    // And no folder on the way may lead out of the run's folder either (a symlinked invocation folder).
    const real = await realpath(path).catch(() => '');
    const realRun = await realpath(runDir).catch(() => runDir);
    if (info === undefined || !info.isFile() || !real.startsWith(realRun + sep)) {
      throw new NotFound(`service "${service}" of ${servicesId} left no stderr log (or it is not a plain file)`);
    }
    // Opened without following a symlink put there since the lstat, and checked again on the handle.
    const file = await openPlainFile(path, info);
    if (file === undefined) {
      throw new NotFound(`service "${service}" of ${servicesId} left no stderr log (or it is not a plain file)`);
    }
    const { handle, info: opened } = file;
    const size = opened.size;
    const length = Math.min(size, MAX_LOG_BYTES);
    const tail = Buffer.alloc(length);
    try {
      await handle.read(tail, 0, length, size - length);
    } finally {
      await handle.close();
    }
    return { text: tail.toString('utf8'), bytes: size };
  }
}

/** True when a `service.*` line of the journal carries exactly this `servicesId` and `service`. */
async function journalNamesService(eventsPath: string, servicesId: string, service: string): Promise<boolean> {
  // Through the one safe open, as the tail reads it: a journal swapped for a symlink since eventsPath looked is not followed.
  const text = await readPlainFile(eventsPath);
  if (text === undefined) return false;
  for (const line of text.split('\n')) {
    if (!line.includes('"service.')) continue;
    try {
      const e = JSON.parse(line) as { type?: unknown; servicesId?: unknown; service?: unknown };
      if (
        typeof e.type === 'string' &&
        e.type.startsWith('service.') &&
        e.servicesId === servicesId &&
        e.service === service
      ) {
        return true;
      }
    } catch {
      // A torn line names nothing.
    }
  }
  return false;
}

/** A single path segment: not empty, not `.`/`..`, no separator and no NUL. */
function plainName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name) && name.length <= 255;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function redacted(version: WorkflowVersion): WorkflowVersion {
  return { ...version, workflow: redactWorkflowUrls(version.workflow) };
}

function withDuration(r: RunStatusReport): RunSummary {
  const start = Date.parse(r.startedAt);
  const end = r.finishedAt === null ? (r.status === 'running' ? Date.now() : Number.NaN) : Date.parse(r.finishedAt);
  const durationMs = Number.isFinite(start) && Number.isFinite(end) ? Math.max(0, end - start) : null;
  return { ...r, durationMs };
}
