/**
 * The parts of one attempt (engine/attempt.ts) that connect it to its harness and services: the state an
 * attempt works on, Main's fixed tools, the harness's input with its checkpoint and report channels, the
 * role's workspace, and the services' events under the invocation's id.
 */
import { DEFAULT_GRACE_MS } from '@scienceevolve/supervisor/terminate';
import { SdkError } from '../errors.js';
import { type RunEventInput, type UsageTotals, addUsage, emptyUsage } from '../events/runEvents.js';
import type { HarnessInput, HarnessReport } from '../harness/harness.js';
import type { AttemptSpec } from '../schemas/attempt.js';
import type { ServiceEvent } from '../sessions/serviceEvents.js';
import type { AttemptRunner } from './attempt.js';
import type { CheckpointWriter } from './checkpoints.js';
import { delegateTool, fixedCatalog } from './fixedCatalog.js';
import type { AttemptRecord, InvocationRecord } from './runRecord.js';
import { roleBranch } from './worktrees.js';

/** The state an attempt works on: its own copy of the invocation, its events, its usage, its checkpoint. */
export interface AttemptState {
  readonly spec: AttemptSpec;
  readonly runner: AttemptRunner;
  /** The attempt's copy of the invocation: the coordinator's record changes only by applying the outcome. */
  readonly invocation: InvocationRecord;
  readonly attempt: AttemptRecord;
  readonly events: RunEventInput[];
  readonly usage: UsageTotals;
  emit(event: RunEventInput): void;
}

/** Main's fixed tools: the workflow tools and `delegate`, through the host's {@link MainCapabilities}. */
export function mainCatalog(state: AttemptState) {
  const { runner, invocation } = state;
  const main = runner.main;
  if (main === undefined) {
    throw new SdkError('usage', `Main's invocation ${invocation.id} can only run in the host that owns the run`, {
      remedy: 'run Main in the coordinator (a queue worker runs worker invocations only)',
      data: { invocation: invocation.id },
    });
  }
  return fixedCatalog({
    paths: runner.paths,
    allowReconfiguration: runner.version.workflow.orchestration.allowMainReconfiguration,
    onReconfigured: (r) => {
      void runner.prestarts?.reconfigured();
      main.reconfigured(invocation.id, r);
    },
    delegate: delegateTool({
      workers: () => main.workers(),
      run: (worker, task) => main.delegate(worker, task, invocation.id),
    }),
  });
}

/** What the harness of one attempt receives: the surface, and the checkpoint and report channels. */
export function harnessInput(
  state: AttemptState,
  writer: CheckpointWriter,
  given: Pick<HarnessInput, 'instructions' | 'surface' | 'workspace' | 'checkpoint' | 'journaled' | 'registry'>,
): HarnessInput {
  const { runner, invocation, attempt } = state;
  return {
    ...given,
    agent: invocation.agent,
    task: invocation.task,
    signal: runner.signal,
    invocationId: invocation.id,
    runtimePath: attempt.runtimePath,
    hostEnv: runner.options.hostEnv ?? process.env,
    graceMs: runner.options.graceMs ?? DEFAULT_GRACE_MS,
    saveCheckpoint: async (checkpoint) => {
      // Once the run is cancelled, what the harness learns (a call cut short, a worker's cancellation)
      // is not a result to keep: `resume` continues from the checkpoint before it.
      if (runner.signal.aborted) return;
      // Appended to the checkpoint's log after the first save: one synced write a step.
      await writer.append(attempt.attempt, checkpoint);
      invocation.checkpoint = writer.path;
      // The host that owns the run records it durably before the harness goes on (and reports it).
      await runner.onCheckpoint?.();
    },
    report: (report) => {
      try {
        onReport(state, report, writer.path);
      } catch {
        // Reporting never breaks a harness.
      }
    },
  };
}

/** A harness's report as an event of the attempt; model usage is added to the attempt's and the copy's totals. */
function onReport(state: AttemptState, report: HarnessReport, checkpoint: string): void {
  const { invocation } = state;
  const base = { invocation: invocation.id, agent: invocation.agent };
  switch (report.kind) {
    case 'model.called': {
      invocation.usage ??= emptyUsage();
      addUsage(invocation.usage, report.usage);
      addUsage(state.usage, report.usage);
      const { kind: _kind, ...rest } = report;
      state.emit({ type: 'model.called', ...base, ...rest });
      return;
    }
    case 'model.retry': {
      const { kind: _kind, ...rest } = report;
      state.emit({ type: 'model.retry', ...base, ...rest });
      return;
    }
    case 'checkpoint':
      state.emit({ type: 'invocation.checkpoint', ...base, step: report.step, path: checkpoint });
      return;
  }
}

export async function workspaceFor(state: AttemptState): Promise<string> {
  const { runner, invocation, spec } = state;
  if (!runner.version.workflow.orchestration.git) return spec.workspace;
  const dir = await runner.worktrees.worktree(invocation.agent);
  invocation.workspace = dir;
  invocation.git ??= { branch: roleBranch(runner.paths, invocation.agent), commit: null };
  return dir;
}

/**
 * Publishes a service's events (ready, failed, exited, protocol pollution, catalog changed or its refresh
 * failed) under the invocation's id; state transitions stay in the service's own log.
 */
export function serviceEvent(state: AttemptState, servicesId: string, event: ServiceEvent): void {
  if (event.type === 'service.state') return;
  state.emit({ ...event, invocation: state.invocation.id, agent: state.invocation.agent, servicesId });
}
