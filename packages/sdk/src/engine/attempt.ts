/**
 * One attempt of an invocation (SPEC §10.2, §10.3): its checkpoint is read, its agent's services start,
 * its surface is built and observed, its harness runs (from the checkpoint when there is one) with channels
 * for checkpoints and reports, its services are collected whatever happens, and Git-on commits its work.
 */
import { type GateEvent, gateEventFields } from '../surface/serviceGate.js';
import { DEFAULT_GRACE_MS } from '@scienceevolve/supervisor/terminate';
import { type ErrorCode, SdkError, toSdkError } from '../errors.js';
import { type InvocationState, type RunEventInput, addUsage, emptyUsage } from '../events/runEvents.js';
import {
  type AgentHarness,
  type HarnessInput,
  type HarnessOutput,
  type HarnessReport,
  type JournaledSteps,
  nothingJournaled,
} from '../harness/harness.js';
import type { RunHarnesses } from '../harness/harnessFor.js';
import { type InvocationServices, startInvocation } from '../invocation/invocation.js';
import { toolFiltersOf } from '../invocation/plan.js';
import { collectionMechanism } from '../processes/processGroup.js';
import type { ProcessRegistry } from '../processes/processRegistry.js';
import type { ServiceEvent } from '../sessions/serviceEvents.js';
import type { ProjectPaths } from '../store/projectStore.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import { agentSurface } from './agentSurface.js';
import { CheckpointWriter, checkpointPath, readCheckpoint } from './checkpoints.js';
import type { Prestarts } from './prestart.js';
import { type EngineOptions, startGateFor } from './engineOptions.js';
import { delegateTool, fixedCatalog } from './fixedCatalog.js';
import { type AttemptRecord, type InvocationRecord, type RunFile, type RunRecord, now } from './runRecord.js';
import type { OpenTask } from './taskResume.js';
import { observeSurface } from './toolJournal.js';
import { type RoleWorktrees, roleBranch } from './worktrees.js';

/** What an attempt needs of the engine of its run. */
export interface AttemptHost {
  readonly paths: ProjectPaths;
  readonly file: RunFile;
  readonly record: RunRecord;
  readonly harnesses: RunHarnesses;
  readonly options: EngineOptions;
  readonly worktrees: RoleWorktrees;
  /** Aborts when the run is cancelled. */
  readonly signal: AbortSignal;
  /** Journals an event of the run. */
  emit(event: RunEventInput): void;
  /**
   * What the host journaled of the invocation's steps so far (model responses, completed tool calls), for
   * the harness to check a checkpoint against. Read only when there is a checkpoint.
   */
  journaled(invocation: string): Promise<JournaledSteps>;
  /** Tasks journaled as accepted for the invocation and never answered (re-attached, not called again). Optional: a queued attempt has none. */
  openTasks?(invocation: string): Promise<OpenTask[]>;
  /** Changes an invocation's state, journaling the transition. */
  setState(invocation: InvocationRecord, to: InvocationState): void;
  /** The workflow version in force. */
  currentVersion(): Promise<WorkflowVersion>;
  /**
   * The digests Main proposed, when this host has no history of its own to read them from (a queue
   * worker: the job carries them). Absent: read from the project's versions.
   */
  mainProposed?: ReadonlySet<string>;
  /** The host's process registry (its supervisor started on first use). */
  registry(): Promise<ProcessRegistry>;
  /** Main's delegation of `task` to worker `agent`. */
  delegateTo(agent: string, task: string, parent: string): Promise<InvocationRecord>;
  /** The run's warm starts (engine/prestart.ts); absent: every attempt starts its services cold. */
  readonly prestarts?: Prestarts;
}

/**
 * Codes of harness failures that another attempt would only repeat, so the invocation fails at once instead
 * of paying for a retry with fresh services (SPEC §10.3 retries a harness that *crashed*). Each is decided
 * by the workflow, the host or the checkpoint, none of which a retry changes:
 * - `missing_env`: `apiKeyEnv` / `envFrom` names a host variable that is not set;
 * - `model_auth_failed`: the provider refused the key (401/403);
 * - `model_request_failed`: the provider refused the request (400/404: model, endpoint, options) or
 *   answered in a shape the provider library cannot read;
 * - `max_turns_reached`: the checkpoint already holds `maxTurns` model calls;
 * - `invalid_checkpoint`: the checkpoint the next attempt would read is the same file;
 * - `invalid_script`: the script has no step left for the agent (positions come back from the checkpoint);
 * - `invalid_workflow`, `usage`: the harness configuration cannot be built;
 * - `command_not_found`: the agent CLI (or pi's MCP adapter) is not installed;
 * - `limit_exceeded`: the CLI's prompt or an environment string is over the OS limit.
 * Everything else a harness throws (`harness_failed`, `harness_timeout`, `model_unreachable`,
 * `unknown_tool`, `io_error`, …) is retried up to `orchestration.invocationRetries`; a failure to start
 * services is always retried.
 */
export const NOT_RETRIED_HARNESS_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'missing_env',
  'model_auth_failed',
  'model_request_failed',
  'max_turns_reached',
  'invalid_checkpoint',
  'invalid_script',
  'invalid_workflow',
  'usage',
  'command_not_found',
  'limit_exceeded',
]);

/** What one attempt ended with, and whether another attempt may help. */
export interface AttemptResult {
  attempt: AttemptRecord;
  /** False for a failure another attempt would only repeat ({@link NOT_RETRIED_HARNESS_CODES}). */
  retryable: boolean;
}

/** One attempt: checkpoint, services, surface, harness, collection, commit. */
export async function runAttempt(
  host: AttemptHost,
  invocation: InvocationRecord,
  restarted: boolean,
): Promise<AttemptResult> {
  const agent = invocation.agent;
  const number = invocation.attempts.length + 1;
  const servicesId = number === 1 ? invocation.id : `${invocation.id}-${number}`;
  const version = await host.currentVersion();
  let failure: unknown;
  let saved: { state: unknown } | undefined;
  // A checkpoint that cannot be read is the harness's failure: the next attempt would read the same file.
  let checkpointFailure = false;
  let journaled = nothingJournaled();
  try {
    saved = await readCheckpoint(host.paths, host.record.run, invocation.id);
    if (saved !== undefined) journaled = await host.journaled(invocation.id);
  } catch (error) {
    failure = error;
    checkpointFailure = true;
  }
  const attempt: AttemptRecord = {
    attempt: number,
    servicesId,
    runtimePath: host.paths.invocationDir(host.record.run, servicesId),
    version: version.version,
    restarted,
    startedAt: now(),
    finishedAt: null,
    outcome: null,
    error: null,
    fromCheckpoint: saved !== undefined,
    toolCalls: 0,
    toolCallsReached: null,
  };
  invocation.attempts.push(attempt);
  host.setState(invocation, 'starting');
  await host.file.save();
  const config = Object.hasOwn(version.workflow.agents, agent) ? version.workflow.agents[agent] : undefined;
  host.emit({
    type: 'invocation.started',
    invocation: invocation.id,
    agent,
    attempt: number,
    parent: invocation.parent,
    version: version.version,
    restarted,
    fromCheckpoint: saved !== undefined,
    services: config?.mcpServers.map((s) => s.name) ?? [],
    runtimePath: attempt.runtimePath,
    // Decided once per process (lazily: this is the start path), journalled with every invocation.
    collection: collectionMechanism(),
  });

  // Set when the failure came from building or running the harness (not from the services or Git).
  let harnessFailure = false;
  const finish = async (outcome: 'succeeded' | 'failed' | 'interrupted', error?: unknown): Promise<AttemptResult> => {
    attempt.outcome = outcome;
    attempt.finishedAt = now();
    // A harness that throws something uncoded (an embedder's own harness, a bug in a provider library)
    // crashed: `harness_failed`, retried like any crash, never `internal`.
    attempt.error =
      error === undefined ? null : toSdkError(error, harnessFailure ? 'harness_failed' : 'internal').toJSON();
    await host.file.save();
    const final =
      outcome === 'failed' && harnessFailure && NOT_RETRIED_HARNESS_CODES.has(attempt.error?.code as ErrorCode);
    return { attempt, retryable: !final };
  };

  if (host.signal.aborted) return finish('interrupted', cancelled());
  if (failure !== undefined) {
    harnessFailure = checkpointFailure;
    return finish('failed', failure);
  }
  let services: InvocationServices | undefined;
  let output: string | undefined;
  try {
    if (config === undefined) {
      throw new SdkError(
        'unknown_agent',
        `the accepted workflow (version ${version.version}) has no agent "${agent}"`,
        { remedy: 'add the agent to the workflow', data: { agent } },
      );
    }
    let harness: AgentHarness;
    try {
      harness = host.harnesses.forAgent(agent, config.harness);
    } catch (error) {
      harnessFailure = true;
      throw error;
    }
    const workspace = await workspaceFor(host, invocation);
    const registry = await host.registry();
    const onServiceEvent = (event: ServiceEvent) => {
      // The attempt's wait at the admission gate: its longest-waiting service's (saved with the state below).
      // A prestarted service's wait was the prestart's, not this attempt's.
      if (event.type === 'service.ready' && !('prestarted' in event) && (event.queuedMs ?? 0) > 0) {
        attempt.startQueuedMs = Math.max(attempt.startQueuedMs ?? 0, event.queuedMs ?? 0);
      }
      serviceEvent(host, invocation, servicesId, event);
    };
    // A first attempt takes the set prestarted under its id when it still fits; otherwise it starts cold.
    services =
      (number === 1 ? await host.prestarts?.take(servicesId, version, workspace, onServiceEvent) : undefined) ??
      (await startInvocation({
        paths: host.paths,
        version,
        agent,
        runId: host.record.run,
        invocationId: servicesId,
        workspace,
        registry,
        startupBudgetMs: host.options.startupBudgetMs,
        startGate: startGateFor(host.options),
        ...(host.mainProposed === undefined ? {} : { mainProposed: host.mainProposed }),
        startQueueLimitMs: host.options.startQueueLimitMs,
        graceMs: host.options.graceMs,
        hostEnv: host.options.hostEnv,
        onEvent: onServiceEvent,
        signal: host.signal,
      }));
    host.prestarts?.prepare(agent, version, workspace, registry);
    host.setState(invocation, 'running');
    await host.file.save();
    const entries =
      agent === 'main'
        ? [
            ...services.sessions,
            fixedCatalog({
              paths: host.paths,
              allowReconfiguration: version.workflow.orchestration.allowMainReconfiguration,
              onReconfigured: (r) => {
                void host.prestarts?.reconfigured();
                host.emit({
                  type: 'workflow.reconfigured',
                  invocation: invocation.id,
                  agent,
                  version: r.version,
                  changedMcps: r.changedMcps,
                  changedAgents: r.changedAgents,
                });
              },
              delegate: delegateTool({
                workers: async () =>
                  Object.keys((await host.currentVersion()).workflow.agents).filter((a) => a !== 'main'),
                run: (worker, task) => host.delegateTo(worker, task, invocation.id),
              }),
            }),
          ]
        : services.sessions;
    // The surface owns the forwarding limits; a service's rests and recoveries go into the journal.
    const gateEvent = (event: GateEvent) =>
      host.emit({ ...gateEventFields(event), invocation: invocation.id, agent } as RunEventInput);
    const live = agentSurface(entries, {
      forwardTimeoutMs: host.options.forwardTimeoutMs,
      onGateEvent: gateEvent,
      toolFilters: toolFiltersOf(services.outcomes.map((o) => o.planned)),
    });
    const surface = observeSurface(live, {
      invocation: invocation.id,
      agent,
      emit: (event) => host.emit(event),
      onCall: () => {
        attempt.toolCalls = (attempt.toolCalls ?? 0) + 1;
      },
      openTasks: (await host.openTasks?.(invocation.id)) ?? [],
      ...(config.elicitation === undefined ? {} : { elicitation: config.elicitation }),
      ...(host.options.askOperator === undefined
        ? {}
        : { askOperator: (question) => host.options.askOperator!(question, { agent }) }),
      ...(version.workflow.orchestration.taskDeadlineMs === undefined
        ? {}
        : { taskDeadlineMs: version.workflow.orchestration.taskDeadlineMs }),
    });
    let result: HarnessOutput;
    try {
      result = await harness.run(
        harnessInput(host, invocation, attempt, {
          registry,
          instructions: config.instructions,
          surface,
          workspace,
          checkpoint: saved?.state,
          journaled,
        }),
      );
    } catch (error) {
      harnessFailure = true;
      throw error;
    }
    attempt.toolCallsReached = result.toolCallsReached ?? null;
    output = result.output;
  } catch (error) {
    failure = error;
  } finally {
    // Collected whatever happened; a failure to collect is the attempt's failure if nothing else was.
    try {
      await services?.close();
    } catch (error) {
      failure ??= error;
    }
  }
  if (host.signal.aborted) return finish('interrupted', cancelled());
  if (failure === undefined && version.workflow.orchestration.git) {
    try {
      const commit = await host.worktrees.commit(agent, invocation.id, invocation.task);
      invocation.git = { branch: roleBranch(host.paths, agent), commit };
    } catch (error) {
      // A coded cause (a queue worker's refused push) keeps its remedy and facts (branch, commit).
      const cause = toSdkError(error);
      // A tampered worktree keeps its own code: nothing was run there, and the fix is not git's.
      failure =
        cause.code === 'worktree_tampered'
          ? cause
          : new SdkError('io_error', `could not commit the changes of ${agent} on its branch: ${cause.message}`, {
              remedy: cause.remedy ?? 'check the worktree with `git status`',
              data: { ...cause.data, agent, worktree: invocation.workspace },
              cause: error,
            });
    }
  }
  if (failure !== undefined) return finish('failed', failure);
  invocation.output = output ?? '';
  return finish('succeeded');
}

/** What the harness of one attempt receives: the surface, and the checkpoint and report channels. */
function harnessInput(
  host: AttemptHost,
  invocation: InvocationRecord,
  attempt: AttemptRecord,
  given: Pick<HarnessInput, 'instructions' | 'surface' | 'workspace' | 'checkpoint' | 'journaled' | 'registry'>,
): HarnessInput {
  const path = checkpointPath(host.paths, host.record.run, invocation.id);
  const writer = new CheckpointWriter(path, {
    run: host.record.run,
    invocation: invocation.id,
    agent: invocation.agent,
  });
  return {
    ...given,
    agent: invocation.agent,
    task: invocation.task,
    signal: host.signal,
    invocationId: invocation.id,
    runtimePath: attempt.runtimePath,
    hostEnv: host.options.hostEnv ?? process.env,
    graceMs: host.options.graceMs ?? DEFAULT_GRACE_MS,
    saveCheckpoint: async (state) => {
      // Once the run is cancelled, what the harness learns (a call cut short, a worker's cancellation)
      // is not a result to keep: `resume` continues from the checkpoint before it.
      if (host.signal.aborted) return;
      await writer.save(attempt.attempt, state);
      if (invocation.checkpoint !== path) {
        invocation.checkpoint = path;
        await host.file.save();
      }
    },
    report: (report) => {
      try {
        onReport(host, invocation, report, path);
      } catch {
        // Reporting never breaks a harness.
      }
    },
  };
}

/** A harness's report as a journal event; model usage is added to the invocation's and the run's totals. */
function onReport(host: AttemptHost, invocation: InvocationRecord, report: HarnessReport, checkpoint: string): void {
  const base = { invocation: invocation.id, agent: invocation.agent };
  switch (report.kind) {
    case 'model.called': {
      invocation.usage ??= emptyUsage();
      host.record.usage ??= emptyUsage();
      addUsage(invocation.usage, report.usage);
      addUsage(host.record.usage, report.usage);
      // Totals reach run.json with the next save at the latest; a failed write here is retried by it.
      host.file.save().catch(() => {});
      const { kind: _kind, ...rest } = report;
      host.emit({ type: 'model.called', ...base, ...rest });
      return;
    }
    case 'model.retry': {
      const { kind: _kind, ...rest } = report;
      host.emit({ type: 'model.retry', ...base, ...rest });
      return;
    }
    case 'checkpoint':
      host.emit({ type: 'invocation.checkpoint', ...base, step: report.step, path: checkpoint });
      return;
  }
}

async function workspaceFor(host: AttemptHost, invocation: InvocationRecord): Promise<string> {
  const version = await host.currentVersion();
  if (!version.workflow.orchestration.git) return host.record.workspace;
  const dir = await host.worktrees.worktree(invocation.agent);
  invocation.workspace = dir;
  invocation.git ??= { branch: roleBranch(host.paths, invocation.agent), commit: null };
  return dir;
}

/**
 * Publishes a service's events (ready, failed, exited, protocol pollution, catalog changed or its refresh
 * failed) under the invocation's id; state transitions stay in the service's own log.
 */
function serviceEvent(host: AttemptHost, invocation: InvocationRecord, servicesId: string, event: ServiceEvent): void {
  if (event.type === 'service.state') return;
  host.emit({ ...event, invocation: invocation.id, agent: invocation.agent, servicesId });
}

function cancelled(): SdkError {
  return new SdkError('cancelled', 'the run was cancelled before this invocation finished', {
    remedy: 'continue it with `scienceevolve resume`',
  });
}
