/**
 * Starting and resuming runs (SPEC §10.1, §10.3): everything that can be refused is checked before a run
 * is accepted; `resume` sweeps strays of dead hosts, claims a run under a lock and continues Main's
 * invocation from its checkpoint with new processes.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeDirs, makePrivateDir } from '../fileModes.js';
import { SdkError } from '../errors.js';
import { EventStream } from '../events/eventStream.js';
import { startTelemetry } from '../events/telemetry.js';
import { type RunEvent, emptyUsage } from '../events/runEvents.js';
import { RunHarnesses } from '../harness/harnessFor.js';
import { sweepProjectStrays } from '../invocation/hostSupervision.js';
import { writeJsonAtomic } from '../store/atomicFile.js';
import { withFileLock } from '../store/fileLock.js';
import { ProjectPaths, openProject } from '../store/projectStore.js';
import { loadWorkflow, readWorkflowFile } from '../store/workflowLoad.js';
import { requireAccepted } from '../store/workflowVersions.js';
import { parseWorkflow } from '../workflow/validate.js';
import type { Workflow } from '../workflow/workflowTypes.js';
import {
  type CorruptRun,
  RunFile,
  type RunRecord,
  effectiveStatus,
  listRunRecords,
  newRunId,
  now,
  readRunRecord,
  runRecordPath,
  thisHost,
} from './runRecord.js';
import { type EngineOptions, RunEngine, type RunResult, finishedResult } from './runLoop.js';
import { checkEngineDurations, openRunQueue } from './engineOptions.js';
import { checkGitWorkspace } from './worktrees.js';

export type { EngineOptions, RunResult } from './runLoop.js';

/** Options of {@link startRun} and {@link runWorkflow}. @public */
export interface RunOptions extends EngineOptions {
  /** The data directory (see docs/data-dir.md). */
  dataDir: string;
  /** The project id; derived from `workspace` when absent (SPEC §2). */
  project?: string | undefined;
  /** The directory the agents work in (created when missing; Git-on: a git repository's top). */
  workspace: string;
  /** The workflow file or document; accepted as a new version only when it differs. */
  workflow: string | Workflow | Record<string, unknown>;
  /** The scripted harness's script: a file path or the document. Required when an agent is scripted. */
  script?: string | Record<string, unknown> | undefined;
  /** Main's task. */
  requirement: string;
}

/** A run in progress. @public */
export interface RunHandle {
  /** The run id, known at once. */
  readonly runId: string;
  /** Every event of the run, from the first, until the run ends. Each call is a new reader. */
  events(): AsyncIterable<RunEvent>;
  /** Settles when the run ends; rejects when it could not start (bad workflow, script or workspace). */
  readonly result: Promise<RunResult>;
}

/** Starts a run; see {@link RunHandle}. @public */
export function startRun(options: RunOptions): RunHandle {
  const runId = newRunId();
  const stream = new EventStream();
  const result = beginRun(runId, options, stream).finally(() => stream.end());
  // The caller may only iterate events; the rejection still reaches whoever awaits `result`.
  result.catch(() => {});
  return { runId, events: () => stream, result };
}

/** Runs a requirement through Main to its end. @public */
export function runWorkflow(options: RunOptions): Promise<RunResult> {
  return startRun(options).result;
}

async function beginRun(runId: string, options: RunOptions, stream: EventStream): Promise<RunResult> {
  checkEngineDurations(options);
  await startTelemetry();
  const workspace = resolve(options.workspace);
  // Everything that can be refused is checked before the workflow is accepted or anything is written.
  const workflow =
    typeof options.workflow === 'string' ? await readWorkflowFile(options.workflow) : parseWorkflow(options.workflow);
  const harnesses = await RunHarnesses.load({ script: options.script, factories: options.harnessFactories });
  harnesses.check(workflow.agents);
  if (workflow.orchestration.git) await checkGitWorkspace(workspace);
  const queue = await openRunQueue(options);
  try {
    return await beginOpenRun(runId, options, stream, workflow, harnesses, workspace, queue);
  } finally {
    await queue?.close();
  }
}

async function beginOpenRun(
  runId: string,
  options: RunOptions,
  stream: EventStream,
  workflow: Awaited<ReturnType<typeof readWorkflowFile>>,
  harnesses: RunHarnesses,
  workspace: string,
  queue: Awaited<ReturnType<typeof openRunQueue>>,
): Promise<RunResult> {
  const loaded = await loadWorkflow({ dataDir: options.dataDir, project: options.project, workspace, workflow });
  const paths = await openProject(options.dataDir, loaded.project);
  const version = await requireAccepted(paths);
  // Bounded (never Node's recursive mkdir, which loops for ever under /proc): `io_error` naming the path.
  if (!workflow.orchestration.git) makeDirs(workspace);
  await sweepProjectStrays(paths, { graceMs: options.graceMs });

  const runDir = paths.runDir(runId);
  await makePrivateDir(runDir);
  let scriptPath: string | null = null;
  if (harnesses.script !== undefined) {
    // The run keeps its own copy, so `resume` replays the same decisions whatever happens to the file.
    scriptPath = join(runDir, 'script.json');
    await writeJsonAtomic(scriptPath, harnesses.script);
  }
  const record: RunRecord = {
    format: 1,
    run: runId,
    project: paths.projectId,
    status: 'running',
    requirement: options.requirement,
    workspace,
    version: version.version,
    script: scriptPath,
    host: thisHost(),
    startedAt: now(),
    finishedAt: null,
    output: null,
    error: null,
    resumes: 0,
    usage: emptyUsage(),
    invocations: [],
  };
  const traced = await startTelemetry();
  const traceId = traced?.runStarted(runId, false);
  if (traceId !== undefined) record.traceId = traceId;
  const file = new RunFile(runRecordPath(paths, runId), record);
  await file.save();
  const engine = new RunEngine(paths, file, harnesses, options, stream, queue);
  engine.emit({
    type: 'run.started',
    project: paths.projectId,
    version: version.version,
    workspace,
    runDir,
    git: version.workflow.orchestration.git,
    ...(traceId === undefined ? {} : { traceId }),
  });
  return traced === undefined ? engine.driveMain() : traced.inRun(runId, () => engine.driveMain());
}

/** Options of {@link resumeRuns}. @public */
export interface ResumeOptions extends EngineOptions {
  /** The data directory. */
  dataDir: string;
  /** The project whose runs to continue. */
  project: string;
  /** One run to continue; default: every interrupted or cancelled run of the project. */
  run?: string | undefined;
}

/** Whether `resume` continues a run in this status. */
function resumable(record: RunRecord): boolean {
  const status = effectiveStatus(record);
  return status === 'interrupted' || status === 'cancelled';
}

/**
 * Continues interrupted and cancelled runs (SPEC §10.3): sweeps strays of dead hosts, reads each run's
 * state and the accepted version, marks what was in flight `interrupted`, and continues Main's invocation
 * with new processes (`restarted: true`) from its checkpoint: calls whose results were recorded are not
 * made again, and a worker Main had delegated continues from its own checkpoint when Main delegates the
 * same task again. A run named by `run` that already finished is returned as it is. A run whose
 * `run.json` is damaged is returned first, with status `failed` and error `store_tampered` naming the run
 * and the file (the file is left as it is); with `run` given, its damaged record throws `store_tampered`.
 * @public
 */
export async function resumeRuns(options: ResumeOptions): Promise<RunResult[]> {
  checkEngineDurations(options);
  if (!existsSync(new ProjectPaths(resolve(options.dataDir), options.project).root)) {
    throw new SdkError(
      'unknown_project',
      `the data dir ${resolve(options.dataDir)} has no project "${options.project}"`,
      { remedy: '`scienceevolve status --data-dir D` lists the projects', data: { project: options.project } },
    );
  }
  const paths = await openProject(options.dataDir, options.project);
  await requireAccepted(paths);
  await sweepProjectStrays(paths, { graceMs: options.graceMs });
  let records: RunRecord[];
  let corrupt: CorruptRun[] = [];
  if (options.run !== undefined) {
    const found = await readRunRecord(paths, options.run);
    if (found === undefined) {
      throw new SdkError('usage', `project ${paths.projectId} has no run "${options.run}"`, {
        remedy: '`scienceevolve status --data-dir D --project P` lists the runs',
        data: { project: paths.projectId, run: options.run },
      });
    }
    if (effectiveStatus(found) === 'running') {
      throw new SdkError('usage', `run ${found.run} is still running under host pid ${found.host.pid}`, {
        remedy: 'wait for it to finish, or stop that host first',
        data: { run: found.run, hostPid: found.host.pid },
      });
    }
    records = [found];
  } else {
    const listed = await listRunRecords(paths);
    records = listed.records.filter(resumable);
    corrupt = listed.corrupt;
  }
  // A damaged record cannot be continued: it is reported among the results (status failed, error
  // store_tampered naming the run and its file), never dropped; the file is left as it is.
  const results: RunResult[] = corrupt.map((c) => damagedResult(paths, c));
  for (const record of records) {
    if (record.status === 'succeeded' || record.status === 'failed') {
      results.push(await finishedResult(paths, record));
      continue;
    }
    const result = await resumeOne(paths, record, options);
    if (result !== undefined) results.push(result);
    else if (options.run !== undefined) {
      throw new SdkError('usage', `run ${record.run} was taken by another host while this one was resuming it`, {
        remedy: '`scienceevolve status` shows which host runs it now',
        data: { run: record.run },
      });
    }
  }
  return results;
}

/** The result {@link resumeRuns} reports for a run whose `run.json` is damaged. */
function damagedResult(paths: ProjectPaths, c: CorruptRun): RunResult {
  const runDir = join(paths.runsDir, c.run);
  return {
    run: c.run,
    project: paths.projectId,
    status: 'failed',
    output: null,
    error: {
      code: 'store_tampered',
      message: `run ${c.run} was not resumed: ${c.message.startsWith(`run ${c.run}: `) ? c.message.slice(`run ${c.run}: `.length) : c.message}`,
      remedy: 'restore the file from a backup, or remove the run directory if the run is not needed',
      data: { run: c.run, path: c.path },
    },
    events: [],
    runDir,
    eventsPath: join(runDir, 'events.jsonl'),
  };
}

/** Continues one run; undefined when another host claimed it first. */
async function resumeOne(
  paths: ProjectPaths,
  found: RunRecord,
  options: ResumeOptions,
): Promise<RunResult | undefined> {
  const harnesses = await RunHarnesses.load({
    script: found.script ?? undefined,
    factories: options.harnessFactories,
  });
  const version = await requireAccepted(paths);
  harnesses.check(version.workflow.agents);
  if (version.workflow.orchestration.git) await checkGitWorkspace(found.workspace);
  const queue = await openRunQueue(options);
  try {
    return await resumeClaimed(paths, found, options, harnesses, version.version, queue);
  } finally {
    await queue?.close();
  }
}

async function resumeClaimed(
  paths: ProjectPaths,
  found: RunRecord,
  options: ResumeOptions,
  harnesses: RunHarnesses,
  versionNumber: number,
  queue: Awaited<ReturnType<typeof openRunQueue>>,
): Promise<RunResult | undefined> {
  // Claimed under a lock: of two `resume` processes, one takes the run and the other finds it running.
  const claimed = await withFileLock(join(paths.runDir(found.run), '.resume.lock'), async () => {
    const current = await readRunRecord(paths, found.run);
    if (current === undefined || !resumable(current)) return undefined;
    const from = effectiveStatus(current);
    current.host = thisHost();
    current.status = 'running';
    current.finishedAt = null;
    current.resumes += 1;
    await writeJsonAtomic(runRecordPath(paths, current.run), current);
    return { record: current, from };
  });
  if (claimed === undefined) return undefined;
  const { record, from } = claimed;
  const traced = await startTelemetry();
  // A resume is a new trace (the host that started the run is gone); run.json keeps the latest trace id.
  const traceId = traced?.runStarted(record.run, true);
  if (traceId !== undefined) record.traceId = traceId;
  const file = new RunFile(runRecordPath(paths, record.run), record);
  const stream = new EventStream();
  try {
    const engine = new RunEngine(paths, file, harnesses, options, stream, queue);
    const unfinished = record.invocations
      .filter((i) => i.state === 'starting' || i.state === 'running' || i.state === 'interrupted')
      .map((i) => i.id);
    engine.emit({
      type: 'run.resumed',
      resumes: record.resumes,
      from,
      interrupted: unfinished,
      version: versionNumber,
      ...(traceId === undefined ? {} : { traceId }),
    });
    engine.interruptInFlight();
    await file.save();
    return await (traced === undefined ? engine.driveMain() : traced.inRun(record.run, () => engine.driveMain()));
  } finally {
    stream.end();
  }
}
