/**
 * `status` (SPEC §13): a project's runs and their invocations, the services still alive under the
 * project's markers, and the accepted version. Reads only; never starts or changes anything.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isHostAlive, parseMarker } from '@scienceevolve/supervisor/protocol';
import { scanMarkedProcesses } from '@scienceevolve/supervisor/procfs';
import { SdkError, toSdkError } from '../errors.js';
import { checkDataDir } from '../store/dataDir.js';
import { ProjectPaths } from '../store/projectStore.js';
import { type WorkflowVersion, readAccepted } from '../store/workflowVersions.js';
import { readEvents } from '../events/journal.js';
import { type RunEventOf, type UsageTotals, emptyUsage } from '../events/runEvents.js';
import { type CorruptRun, type InvocationState, type RunStatus, effectiveStatus, listRunRecords } from './runRecord.js';

/** One invocation as `status` shows it. */
export interface InvocationStatus {
  id: string;
  agent: string;
  parent: string | null;
  state: InvocationState;
  attempts: number;
  restarted: boolean;
  /** Usage of the invocation's model calls (zeros for a harness without a model, or a record from before usage was kept). */
  usage: UsageTotals;
  /** Tool calls that reached the surface, summed over the attempts. */
  toolCalls: number;
  /** Milliseconds the invocation's service starts waited at the admission gate, summed over the attempts. */
  startQueuedMs: number;
}

/** One run as `status` shows it. */
export interface RunStatusReport {
  run: string;
  /** `running` only while its host is alive; a dead host's run shows `interrupted`; `cancelled` after SIGINT/SIGTERM. */
  status: RunStatus;
  startedAt: string;
  finishedAt: string | null;
  hostPid: number;
  resumes: number;
  output: string | null;
  /** The OpenTelemetry trace id of the run's latest host, when it ran with export on (docs/telemetry.md). */
  traceId?: string;
  /** Usage of every model call of the run, across resumes. */
  usage: UsageTotals;
  invocations: InvocationStatus[];
  /**
   * Warm starts waiting for an invocation (services started ahead for an agent's next `delegate`), read from
   * the run's journal: ready, not taken by an invocation, not collected. Only a `running` run has any.
   */
  prestarted: PrestartedSet[];
}

/** A prestarted set of services waiting for the next invocation of its agent. */
export interface PrestartedSet {
  /** The id the invocation that takes it will carry. */
  invocation: string;
  /** The agent (role) whose next invocation it waits for. */
  agent: string;
  /** When it was ready, ISO 8601. */
  since: string;
  /** Its service names (empty for a journal written before they were recorded). */
  services: string[];
  /** Its services' process ids. */
  pids: number[];
  /** When it is collected if nobody takes it, ISO 8601; null for a journal written before it was recorded. */
  idleDeadline: string | null;
}

/** A live service process of the project (it carries one of the project's markers). */
export interface LiveService {
  pid: number;
  pgid: number;
  /** The services id of the invocation attempt it belongs to. */
  invocation: string;
  hostPid: number;
  /** False for a stray of a dead host (the next `run` or `resume` sweeps it). */
  hostAlive: boolean;
}

/** One project as `status` shows it. */
export interface ProjectStatus {
  project: string;
  /** The accepted version, or null when none was accepted or the store is damaged (see `acceptedError`). */
  acceptedVersion: number | null;
  /**
   * Why the accepted version could not be read (`store_tampered`: `accepted.json` or its version file was
   * changed outside the SDK), or null. A damaged store is reported, never shown as "no accepted version".
   */
  acceptedError: DamagedStore | null;
  runs: RunStatusReport[];
  /** Runs whose `run.json` is damaged (not JSON, or not this run's record): reported, never skipped. */
  corruptRuns: CorruptRun[];
  liveServices: LiveService[];
}

/** A store read that failed: the code, the message and the file it names. */
export interface DamagedStore {
  code: string;
  message: string;
  /** The file named by the error, or null. */
  path: string | null;
}

/** The `status --json` document. */
export interface StatusReport {
  dataDir: string;
  projects: ProjectStatus[];
}

/** Options of {@link runStatus}. */
export interface StatusOptions {
  dataDir: string;
  /** One project; default: every project of the data dir. */
  project?: string | undefined;
}

/** Reports runs, invocations, live services and the accepted version of one project or of all. */
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

/** A `prestart.ready` line as status shows it, or undefined when a field is missing or of another kind. */
function prestartedSet(event: RunEventOf<'prestart.ready'>): PrestartedSet | undefined {
  const { agent, time, pids, services, idleDeadline } = event as unknown as Partial<Record<string, unknown>>;
  if (typeof agent !== 'string' || typeof time !== 'string') return undefined;
  if (!Array.isArray(pids) || !pids.every((pid) => Number.isSafeInteger(pid) && pid > 0)) return undefined;
  if (services !== undefined && !(Array.isArray(services) && services.every((name) => typeof name === 'string')))
    return undefined;
  if (idleDeadline !== undefined && typeof idleDeadline !== 'string') return undefined;
  return {
    invocation: event.invocation,
    agent,
    since: time,
    services: (services as string[] | undefined) ?? [],
    pids: pids as number[],
    idleDeadline: idleDeadline ?? null,
  };
}
