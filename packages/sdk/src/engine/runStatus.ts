/**
 * `status` (SPEC §13): a project's runs and their invocations, the services still alive under the
 * project's markers, and the accepted version. Reads only; never starts or changes anything.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isHostAlive, parseMarker } from '@scienceevolve/supervisor/protocol';
import { scanMarkedProcesses } from '@scienceevolve/supervisor/procfs';
import type { z } from 'zod';
import { SdkError, toSdkError } from '../errors.js';
import { checkDataDir } from '../store/dataDir.js';
import { ProjectPaths } from '../store/projectStore.js';
import { type WorkflowVersion, readAccepted } from '../store/workflowVersions.js';
import { readEvents } from '../events/journal.js';
import { emptyUsage } from '../events/runEvents.js';
import type { StatusDocumentSchema } from '../schemas/cliDocuments.js';
import { RunEventSchemas } from '../schemas/runEvents.js';
import { effectiveStatus, listRunRecords } from './runRecord.js';

// The report is the `status --json` document: its types are the schema's (`schemas/cliDocuments.ts`).
/** The `status --json` document. @internal */
export type StatusReport = z.infer<typeof StatusDocumentSchema>;
/** One project as `status` shows it. @internal */
export type ProjectStatus = StatusReport['projects'][number];
/** One run as `status` shows it. @internal */
export type RunStatusReport = ProjectStatus['runs'][number];
/** One invocation as `status` shows it. @internal */
export type InvocationStatus = RunStatusReport['invocations'][number];
/** A prestarted set of services waiting for the next invocation of its agent. @internal */
export type PrestartedSet = RunStatusReport['prestarted'][number];
/** A live service process of the project (it carries one of the project's markers). @internal */
export type LiveService = ProjectStatus['liveServices'][number];
/** A store read that failed: the code, the message and the file it names. @internal */
export type DamagedStore = NonNullable<ProjectStatus['acceptedError']>;

/** Options of {@link runStatus}. @internal */
export interface StatusOptions {
  dataDir: string;
  /** One project; default: every project of the data dir. */
  project?: string | undefined;
}

/** Reports runs, invocations, live services and the accepted version of one project or of all. @internal */
export async function runStatus(options: StatusOptions): Promise<StatusReport> {
  // A damaged, newer or older format.json is an error here as everywhere: nothing below could be trusted.
  const dataDir = await checkDataDir(options.dataDir);
  const projectsDir = join(dataDir, 'projects');
  let ids: string[];
  if (options.project !== undefined) {
    if (!existsSync(join(projectsDir, options.project))) {
      throw new SdkError('unknown_project', `the data dir ${dataDir} has no project "${options.project}"`, {
        remedy: 'run `scienceevolve status --data-dir D` without --project to list the projects',
        data: { project: options.project },
      });
    }
    ids = [options.project];
  } else {
    ids = existsSync(projectsDir) ? (await readdir(projectsDir)).sort() : [];
  }
  const marked = scanMarkedProcesses(() => true);
  const projects: ProjectStatus[] = [];
  for (const id of ids) {
    const paths = new ProjectPaths(dataDir, id);
    let accepted: WorkflowVersion | undefined;
    let acceptedError: DamagedStore | null = null;
    try {
      accepted = await readAccepted(paths);
    } catch (error) {
      const e = toSdkError(error, 'io_error');
      const path = e.data.path;
      acceptedError = { code: e.code, message: e.message, path: typeof path === 'string' ? path : null };
    }
    const { records: runs, corrupt } = await listRunRecords(paths);
    const prestartedOf = new Map<string, PrestartedSet[]>();
    for (const r of runs) {
      if (effectiveStatus(r) === 'running') prestartedOf.set(r.run, await waitingSets(paths, r.run));
    }
    projects.push({
      project: id,
      acceptedVersion: accepted?.version ?? null,
      acceptedError,
      corruptRuns: corrupt,
      runs: runs.map((r) => ({
        run: r.run,
        status: effectiveStatus(r),
        startedAt: r.startedAt,
        finishedAt: r.finishedAt,
        hostPid: r.host.pid,
        resumes: r.resumes,
        requirement: r.requirement,
        workspace: r.workspace,
        output: r.output,
        ...(typeof r.traceId === 'string' && /^[0-9a-f]{32}$/.test(r.traceId) ? { traceId: r.traceId } : {}),
        usage: r.usage ?? emptyUsage(),
        invocations: r.invocations.map((i) => ({
          id: i.id,
          agent: i.agent,
          parent: i.parent,
          state: i.state,
          attempts: i.attempts.length,
          restarted: i.restarted,
          usage: i.usage ?? emptyUsage(),
          toolCalls: i.attempts.reduce((sum, a) => sum + (a.toolCalls ?? 0), 0),
          startQueuedMs: i.attempts.reduce((sum, a) => sum + (a.startQueuedMs ?? 0), 0),
        })),
        prestarted: prestartedOf.get(r.run) ?? [],
      })),
      liveServices: marked.flatMap((p) => {
        const parts = parseMarker(p.marker);
        if (parts === undefined || parts.projectId !== id) return [];
        return [
          {
            pid: p.pid,
            pgid: p.pgid,
            invocation: parts.invocationId,
            hostPid: parts.hostPid,
            hostAlive: isHostAlive(parts),
          },
        ];
      }),
    });
  }
  return { dataDir, projects };
}

/**
 * The prestarted sets of a running run's journal that are ready, not taken and not collected, in order. The
 * journal is in the run's folder, which the run's services can write: a `prestart.ready` line is taken only
 * with the fields status shows, each of its kind (a forged or damaged line is left out, never thrown on).
 */
async function waitingSets(paths: ProjectPaths, runId: string): Promise<PrestartedSet[]> {
  const sets = new Map<string, PrestartedSet>();
  // A set claimed while it was still starting is journaled ready after its invocation started.
  const gone = new Set<string>();
  for (const event of await readEvents(join(paths.runDir(runId), 'events.jsonl'))) {
    // Lines of no invocation (run.*) and damaged ones alike carry no set.
    if (typeof event !== 'object' || event === null || !('invocation' in event) || typeof event.invocation !== 'string')
      continue;
    if (event.type === 'prestart.ready' && !gone.has(event.invocation)) {
      const set = prestartedSet(event);
      if (set !== undefined) sets.set(event.invocation, set);
    } else if (event.type === 'prestart.collected' || event.type === 'invocation.started') {
      // Collected, or taken by the invocation that carries its id.
      sets.delete(event.invocation);
      gone.add(event.invocation);
    }
  }
  return [...sets.values()];
}

/** A `prestart.ready` line as status shows it (checked by its event schema), or undefined when it does not match. */
function prestartedSet(event: unknown): PrestartedSet | undefined {
  const parsed = RunEventSchemas['prestart.ready'].safeParse(event);
  if (!parsed.success) return undefined;
  const { invocation, agent, time, pids, services, idleDeadline } = parsed.data;
  return { invocation, agent, since: time, services: services ?? [], pids, idleDeadline: idleDeadline ?? null };
}
