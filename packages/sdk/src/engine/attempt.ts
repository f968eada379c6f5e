/**
 * One attempt of an invocation (SPEC §10.2, §10.3), run from its {@link AttemptSpec} by an
 * {@link AttemptRunner} (the host that owns the run, or a queue worker): its checkpoint is checked, its
 * agent's services start, its surface is built and observed, its harness runs (from the checkpoint when
 * there is one) with channels for checkpoints and reports, its services are collected whatever happens,
 * and Git-on commits its work. It works on its own copy of the invocation and returns one
 * {@link AttemptOutcome}, which the coordinator applies (engine/attemptApply.ts) — the same way whoever ran
 * it (docs/decisions/attempt-seam.md).
 */
import { type GateEvent, gateEventFields } from '../surface/serviceGate.js';
import { type ErrorCode, SdkError, toSdkError } from '../errors.js';
import { type RunEventInput, emptyUsage } from '../events/runEvents.js';
import { type AgentHarness, type HarnessOutput, nothingJournaled } from '../harness/harness.js';
import type { RunHarnesses } from '../harness/harnessFor.js';
import { type InvocationServices, startInvocation } from '../invocation/invocation.js';
import { toolFiltersOf } from '../invocation/plan.js';
import { collectionMechanism } from '../processes/processGroup.js';
import type { ProcessRegistry } from '../processes/processRegistry.js';
import { ATTEMPT_FORMAT, type AttemptOutcome, type AttemptSpec } from '../schemas/attempt.js';
import type { ServiceEvent } from '../sessions/serviceEvents.js';
import type { ProjectPaths } from '../store/projectStore.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import { agentSurface } from './agentSurface.js';
import { type CheckpointFile, CheckpointWriter, checkpointPath, checkpointState } from './checkpoints.js';
import type { Prestarts } from './prestart.js';
import { type EngineOptions, startGateFor } from './engineOptions.js';
import { setInvocationState } from './invocationState.js';
import { fromJournaledJson } from './journaledSteps.js';
import { type AttemptState, harnessInput, mainCatalog, serviceEvent, workspaceFor } from './attemptParts.js';
import { type AttemptRecord, type InvocationRecord, now } from './runRecord.js';
import { observeSurface, type TaskAcceptedInput } from './toolJournal.js';
import { type RoleWorktrees, roleBranch } from './worktrees.js';

/** What Main's attempt needs of the host that owns the run: delegation and reconfiguration. */
export interface MainCapabilities {
  /** The worker agents of the version in force now (Main may reconfigure during its attempt). */
  workers(): Promise<string[]>;
  /** Main's delegation of `task` to worker `agent`. */
  delegate(agent: string, task: string, parent: string): Promise<InvocationRecord>;
  /** Main accepted a new version (journaled by the host: `workflow.reconfigured`). */
  reconfigured(invocation: string, result: { version: number; changedMcps: string[]; changedAgents: string[] }): void;
}

/**
 * What runs an attempt: the capabilities of the machine it runs on, never data about the attempt (that is
 * the {@link AttemptSpec}). The host that owns the run is one runner; a queue worker is another.
 */
export interface AttemptRunner {
  /** `<hostname>:<pid>`: who ran the attempt (the outcome's `worker`). */
  readonly id: string;
  /** This machine's project store: the attempt's runtime copies and its checkpoint are written here. */
  readonly paths: ProjectPaths;
  /** The spec's version as this machine holds it (its definitions stored and their digests checked). */
  readonly version: WorkflowVersion;
  readonly harnesses: RunHarnesses;
  /** Engine options: the spec's, with this machine's `hostEnv` and `signal`. */
  readonly options: EngineOptions;
  /** Where Git-on roles get their worktrees on this machine. */
  readonly worktrees: RoleWorktrees;
  /** Aborts when the attempt is cancelled. */
  readonly signal: AbortSignal;
  /** This machine's process registry (its supervisor started on first use). */
  registry(): Promise<ProcessRegistry>;
  /**
   * Receives each event of the attempt as it happens, with its time; the outcome's `events` is then empty
   * (delivered already). The host that owns the run journals them at once; a queue worker has no one to
   * tell before the result, so it gives no listener and its outcome carries them.
   */
  onEvent?(event: RunEventInput): void;
  /**
   * Called once each checkpoint the harness saved is durable, before the harness goes on: the host that
   * owns the run has `run.json` name it (with the usage so far) before the checkpoint is reported, so a
   * crash after the report finds both. A queue worker has no record to keep.
   */
  onCheckpoint?(): Promise<void>;
  /** The run's warm starts (engine/prestart.ts); absent: every attempt starts its services cold. */
  readonly prestarts?: Prestarts;
  /** Main's capabilities: only the host that owns the run has them, so Main's attempts run there. */
  readonly main?: MainCapabilities;
  /**
   * Awaited each time a service accepts a call as an MCP task, before the task is polled, with the
   * `tool.task_accepted` event (also emitted as any event): a queue worker records it in Redis at once (on
   * its job's log), so whoever takes the job or the invocation next re-attaches to the task. The host that
   * owns the run has journaled it already (its `onEvent`, synchronous). A throw cancels the task.
   */
  onTaskAccepted?(event: TaskAcceptedInput): Promise<void>;
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
 * - `limit_exceeded`: the CLI's prompt or an environment string is over the OS limit;
 * - `missing_dependency`: an optional package the harness loads (the AI SDK of a model loop) is not installed.
 * Everything else a harness throws (`harness_failed`, `harness_timeout`, `model_unreachable`,
 * `unknown_tool`, `io_error`, …) is retried up to `orchestration.invocationRetries`; a failure to start
 * services is retried unless its code is one of {@link NOT_RETRIED_START_CODES}.
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
  'missing_dependency',
]);

/**
 * Codes of service start failures that another attempt would only repeat, so the invocation fails at once
 * (a crash — `service_exited`, `startup_timeout`, `initialize_failed` — is retried: it may not repeat):
 * - `missing_env`: an `envFrom` host variable is not set or empty (the host's environment does not change);
 * - `command_not_found`, `invalid_command`: the service's command is not there;
 * - `sandbox_unavailable`: the sandbox is required and the host has none;
 * - `remote_auth_required`, `remote_auth_failed`: a remote needs a sign-in, or refused the stored one (only
 *   `auth login`, a person, changes that; a run never asks one);
 * - `insecure_file`, `invalid_header`: a remote's secret file is not the user's alone, or a header value
 *   from a host variable holds a line break.
 */
export const NOT_RETRIED_START_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'missing_env',
  'command_not_found',
  'invalid_command',
  'sandbox_unavailable',
  'remote_auth_required',
  'remote_auth_failed',
  'insecure_file',
  'invalid_header',
]);

/** What one attempt ended with, and whether another attempt may help. */
export interface AttemptResult {
  attempt: AttemptRecord;
  /** False for a failure another attempt would only repeat ({@link NOT_RETRIED_HARNESS_CODES}). */
  retryable: boolean;
}

/** The id the services of attempt `number` of `invocation` run under. */
export function servicesIdOf(invocation: string, number: number): string {
  return number === 1 ? invocation : `${invocation}-${number}`;
}

/**
 * One attempt (SPEC §10.2, §10.3) from its spec, on the runner's machine: checkpoint, services, surface,
 * harness, collection, commit. It never throws for what happens in the attempt: every failure is the
 * outcome's (its attempt record's `error`).
 */
export async function runAttempt(spec: AttemptSpec, runner: AttemptRunner): Promise<AttemptOutcome> {
  const invocation: InvocationRecord = structuredClone(spec.invocation);
  const agent = invocation.agent;
  const number = invocation.attempts.length + 1;
  const servicesId = servicesIdOf(invocation.id, number);
  const version = runner.version;
  const events: RunEventInput[] = [];
  const emit = (event: RunEventInput) => {
    const timed = { ...event, time: event.time ?? now() } as RunEventInput;
    // Delivered as they happen, or kept for the outcome: never both (a long attempt keeps nothing in memory).
    if (runner.onEvent === undefined) {
      events.push(timed);
      return;
    }
    try {
      runner.onEvent(timed);
    } catch {
      // A listener's failure never breaks the attempt.
    }
  };
  let failure: unknown;
  let saved: { state: unknown } | undefined;
  // A checkpoint that cannot be read is the harness's failure: the next attempt would read the same file.
  let checkpointFailure = false;
  let journaled = nothingJournaled();
  try {
    saved = checkpointState(
      spec.checkpoint,
      spec.run,
      invocation.id,
      checkpointPath(runner.paths, spec.run, invocation.id),
    );
    if (saved !== undefined) journaled = fromJournaledJson(spec.journaled ?? { responses: [], calls: [] });
  } catch (error) {
    failure = error;
    checkpointFailure = true;
  }
  const attempt: AttemptRecord = {
    attempt: number,
    servicesId,
    runtimePath: runner.paths.invocationDir(spec.run, servicesId),
    version: version.version,
    restarted: spec.restarted,
    startedAt: now(),
    finishedAt: null,
    outcome: null,
    error: null,
    fromCheckpoint: saved !== undefined,
    toolCalls: 0,
    toolCallsReached: null,
  };
  invocation.attempts.push(attempt);
  const state: AttemptState = { spec, runner, invocation, attempt, events, usage: emptyUsage(), emit };
  setInvocationState(invocation, 'starting', emit);
  const config = Object.hasOwn(version.workflow.agents, agent) ? version.workflow.agents[agent] : undefined;
  emit({
    type: 'invocation.started',
    invocation: invocation.id,
    agent,
    attempt: number,
    parent: invocation.parent,
    version: version.version,
    restarted: spec.restarted,
    fromCheckpoint: saved !== undefined,
    services: config?.mcpServers.map((s) => s.name) ?? [],
    runtimePath: attempt.runtimePath,
    // Decided once per process (lazily: this is the start path), journalled with every invocation.
    collection: collectionMechanism(),
  });

  // Set when the failure came from building or running the harness (not from the services or Git).
  let harnessFailure = false;
  let writer: CheckpointWriter | undefined;
  const finish = (outcome: 'succeeded' | 'failed' | 'interrupted', error?: unknown): AttemptOutcome => {
    attempt.outcome = outcome;
    attempt.finishedAt = now();
    // A harness that throws something uncoded (an embedder's own harness, a bug in a provider library)
    // crashed: `harness_failed`, retried like any crash, never `internal`.
    attempt.error =
      error === undefined ? null : toSdkError(error, harnessFailure ? 'harness_failed' : 'internal').toJSON();
    const final =
      outcome === 'failed' &&
      (harnessFailure ? NOT_RETRIED_HARNESS_CODES : NOT_RETRIED_START_CODES).has(attempt.error?.code as ErrorCode);
    // The checkpoint after the attempt: the last one its harness saved, else the one it started from (a file
    // that was not this invocation's checkpoint is not passed on: the coordinator keeps its own).
    const checkpoint = writer?.latest() ?? (saved === undefined ? null : (spec.checkpoint as CheckpointFile));
    return outcomeOf(state, !final, checkpoint);
  };

  if (runner.signal.aborted) return finish('interrupted', cancelled());
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
      harness = runner.harnesses.forAgent(agent, config.harness);
    } catch (error) {
      harnessFailure = true;
      throw error;
    }
    const workspace = await workspaceFor(state);
    const registry = await runner.registry();
    const onServiceEvent = (event: ServiceEvent) => {
      // The attempt's wait at the admission gate: its longest-waiting service's (saved with the state below).
      // A prestarted service's wait was the prestart's, not this attempt's.
      if (event.type === 'service.ready' && !('prestarted' in event) && (event.queuedMs ?? 0) > 0) {
        attempt.startQueuedMs = Math.max(attempt.startQueuedMs ?? 0, event.queuedMs ?? 0);
      }
      serviceEvent(state, servicesId, event);
    };
    // A first attempt takes the set prestarted under its id when it still fits; otherwise it starts cold.
    services =
      (number === 1 ? await runner.prestarts?.take(servicesId, version, workspace, onServiceEvent) : undefined) ??
      (await startInvocation({
        paths: runner.paths,
        version,
        agent,
        runId: spec.run,
        invocationId: servicesId,
        workspace,
        registry,
        startupBudgetMs: runner.options.startupBudgetMs,
        startGate: startGateFor(runner.options),
        mainProposed: new Set(spec.mainProposed),
        startQueueLimitMs: runner.options.startQueueLimitMs,
        graceMs: runner.options.graceMs,
        hostEnv: runner.options.hostEnv,
        onEvent: onServiceEvent,
        signal: runner.signal,
      }));
    runner.prestarts?.prepare(agent, version, workspace, registry);
    setInvocationState(invocation, 'running', emit);
    const entries = agent === 'main' ? [...services.sessions, mainCatalog(state)] : services.sessions;
    // The surface owns the forwarding limits; a service's rests and recoveries go into the journal.
    const gateEvent = (event: GateEvent) =>
      emit({ ...gateEventFields(event), invocation: invocation.id, agent } as RunEventInput);
    const live = agentSurface(entries, {
      forwardTimeoutMs: runner.options.forwardTimeoutMs,
      onGateEvent: gateEvent,
      toolFilters: toolFiltersOf(services.outcomes.map((o) => o.planned)),
    });
    const surface = observeSurface(live, {
      invocation: invocation.id,
      agent,
      emit,
      onCall: () => {
        attempt.toolCalls = (attempt.toolCalls ?? 0) + 1;
      },
      openTasks: spec.openTasks ?? [],
      ...(runner.onTaskAccepted === undefined ? {} : { onTaskAccepted: (event) => runner.onTaskAccepted!(event) }),
      ...(config.elicitation === undefined ? {} : { elicitation: config.elicitation }),
      ...(runner.options.askOperator === undefined
        ? {}
        : { askOperator: (question) => runner.options.askOperator!(question, { agent }) }),
      ...(version.workflow.orchestration.taskDeadlineMs === undefined
        ? {}
        : { taskDeadlineMs: version.workflow.orchestration.taskDeadlineMs }),
    });
    const path = checkpointPath(runner.paths, spec.run, invocation.id);
    writer = new CheckpointWriter(path, { run: spec.run, invocation: invocation.id, agent });
    let result: HarnessOutput;
    try {
      result = await harness.run(
        harnessInput(state, writer, {
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
    } finally {
      // Its writes finished and its log closed; the outcome's checkpoint is written whole by the coordinator.
      await writer.close();
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
  if (runner.signal.aborted) return finish('interrupted', cancelled());
  if (failure === undefined && version.workflow.orchestration.git) {
    try {
      const commit = await runner.worktrees.commit(agent, invocation.id, invocation.task);
      invocation.git = { branch: roleBranch(runner.paths, agent), commit };
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

/** The outcome of an ended attempt. */
function outcomeOf(state: AttemptState, retryable: boolean, checkpoint: CheckpointFile | null): AttemptOutcome {
  const { invocation, attempt } = state;
  return {
    format: ATTEMPT_FORMAT,
    worker: state.runner.id,
    attempt: attempt as AttemptOutcome['attempt'],
    retryable,
    events: state.events,
    state: invocation.state,
    output: attempt.outcome === 'succeeded' ? invocation.output : null,
    git: invocation.git,
    workspace: invocation.workspace,
    usage: state.usage,
    // A checkpoint file (engine/checkpoints.ts) as the outcome's passthrough object.
    checkpoint: checkpoint as AttemptOutcome['checkpoint'],
  };
}

function cancelled(): SdkError {
  return new SdkError('cancelled', 'the run was cancelled before this invocation finished', {
    remedy: 'continue it with `scienceevolve resume`',
  });
}
