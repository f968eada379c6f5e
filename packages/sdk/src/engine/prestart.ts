/**
 * Warm starts: when Main delegates to a worker, the engine starts that worker's services once more for its
 * *next* invocation, so the next `delegate` to it finds them ready. A prestarted set is an ordinary
 * invocation's set in every respect but its timing: it runs under the id the next invocation of the agent
 * will carry (its runtime path `runs/<run>/invocations/<id>`, its marker and its events name that
 * invocation), it is registered with the supervisor like any service (a host's death collects it), and it
 * serves one invocation only — the one that claims its id. A set nobody takes is collected: when it has
 * waited `prestartIdleMs`, when an `apply_workflow` changes what the agent's plan would start (a digest, an
 * alias, a filter, a URL), when a service of it exits, and at the run's end.
 */
import { toSdkError } from '../errors.js';
import type { RunEventInput } from '../events/runEvents.js';
import { type InvocationServices, newInvocationId, processFacts, startInvocation } from '../invocation/invocation.js';
import { type PlannedService, planServices } from '../invocation/plan.js';
import type { ProcessRegistry } from '../processes/processRegistry.js';
import type { ServiceEvent } from '../sessions/serviceEvents.js';
import type { ProjectPaths } from '../store/projectStore.js';
import type { WorkflowVersion } from '../store/workflowVersions.js';
import { type EngineOptions, startGateFor } from './engineOptions.js';

/** Milliseconds a prestarted set waits for its invocation before it is collected: 60,000. */
export const DEFAULT_PRESTART_IDLE_MS = 60_000;

/** Why a prestarted set was collected without serving an invocation. */
export type PrestartCollectReason =
  /** Nobody delegated to the agent within `prestartIdleMs`. */
  | 'idle'
  /** An `apply_workflow` changed what the agent's plan starts (or its workspace changed). */
  | 'workflow_changed'
  /** One of its services exited or failed while it waited. */
  | 'service_exited'
  /** Its start failed (the next invocation starts cold). */
  | 'start_failed'
  /** The run ended (or was cancelled) with the set unused. */
  | 'run_end';

/** What the prestarts of a run need of its engine. */
export interface PrestartHost {
  readonly paths: ProjectPaths;
  readonly record: { readonly run: string };
  readonly options: EngineOptions;
  /** Aborts when the run is cancelled. */
  readonly signal: AbortSignal;
  emit(event: RunEventInput): void;
  currentVersion(): Promise<WorkflowVersion>;
}

/** Where a set's service events go; `prestarted` marks the `service.ready` of a taken set. */
type Sink = (event: ServiceEvent & { invocation: string; agent: string; prestarted?: true }) => void;

interface Entry {
  readonly id: string;
  readonly agent: string;
  readonly signature: string;
  readonly workspace: string;
  readonly abort: AbortController;
  /** Resolves to the started set, or undefined when its start failed (already collected then). */
  readonly services: Promise<InvocationServices | undefined>;
  /** Events of the set while nobody has taken it. */
  readonly buffered: (ServiceEvent & { invocation: string; agent: string })[];
  sink: Sink;
  /** Set once one of its services failed or exited while it waited. */
  broken: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * What a plan starts, as a comparable string: each entry's kind, names, definition and digest (or URL) and
 * tool filters. Two versions with the same signature for an agent start the same processes for it.
 */
export function planSignature(plan: readonly PlannedService[]): string {
  return JSON.stringify(
    plan.map((p) => [
      p.kind,
      p.name,
      p.aliases,
      p.kind === 'project' ? [p.definitionName, p.digest] : p.url,
      [...p.toolFilters].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ]),
  );
}

/** The warm starts of one run in one host (see the module comment). */
export class Prestarts {
  /** Sets waiting for an invocation, by agent (at most one per agent). */
  private readonly waiting = new Map<string, Entry>();
  /** Sets claimed by an invocation id that has not taken them yet. */
  private readonly claimed = new Map<string, Entry>();
  private ended = false;
  /** Collections in flight (an idle bound, an apply_workflow): the run's end waits for them too. */
  private readonly collecting = new Set<Promise<void>>();

  constructor(private readonly host: PrestartHost) {}

  /** False when `prestart: false` was given. */
  get enabled(): boolean {
    return this.host.options.prestart !== false;
  }

  /**
   * After an attempt of worker `agent` has its services: starts a set for the agent's next invocation with
   * the same version, workspace and environment, unless one already waits for it. Never throws; a failed
   * prestart only means the next invocation starts cold.
   */
  prepare(agent: string, version: WorkflowVersion, workspace: string, registry: ProcessRegistry): void {
    if (!this.enabled || this.ended || agent === 'main' || this.host.signal.aborted) return;
    if (this.waiting.has(agent)) return;
    let plan: PlannedService[];
    try {
      plan = planServices(version, agent);
    } catch {
      return;
    }
    // Only project services cost a start worth saving; an agent with none is not prestarted.
    if (!plan.some((p) => p.kind === 'project')) return;
    const id = newInvocationId();
    const abort = new AbortController();
    const onRunAbort = () => abort.abort(this.host.signal.reason);
    this.host.signal.addEventListener('abort', onRunAbort, { once: true });
    const buffered: Entry['buffered'] = [];
    const options = this.host.options;
    const entry: Entry = {
      id,
      agent,
      signature: planSignature(plan),
      workspace,
      abort,
      buffered,
      broken: false,
      sink: (event) => {
        if (event.type === 'service.failed' || event.type === 'service.exited') entry.broken = true;
        buffered.push(event);
      },
      services: startInvocation({
        paths: this.host.paths,
        version,
        agent,
        runId: this.host.record.run,
        invocationId: id,
        workspace,
        registry,
        startupBudgetMs: options.startupBudgetMs,
        startGate: startGateFor(options),
        startQueueLimitMs: options.startQueueLimitMs,
        graceMs: options.graceMs,
        hostEnv: options.hostEnv,
        onEvent: (event) => entry.sink(event),
        signal: abort.signal,
      }).then(
        (services) => {
          this.host.signal.removeEventListener('abort', onRunAbort);
          if (this.waiting.get(agent) === entry) {
            const idleMs = options.prestartIdleMs ?? DEFAULT_PRESTART_IDLE_MS;
            this.host.emit({
              type: 'prestart.ready',
              invocation: id,
              agent,
              runtimePath: services.runtimePath,
              pids: pidsOf(services),
              services: plan.map((p) => p.name),
              idleDeadline: new Date(Date.now() + idleMs).toISOString(),
            });
            entry.timer = setTimeout(() => void this.collect(entry, 'idle'), idleMs);
            entry.timer.unref();
          }
          return services;
        },
        (error) => {
          this.host.signal.removeEventListener('abort', onRunAbort);
          // startInvocation collected whatever had started; nothing of the set is left.
          if (this.waiting.get(agent) === entry) this.waiting.delete(agent);
          this.claimed.delete(id);
          entry.sink = () => {};
          this.host.emit({
            type: 'prestart.collected',
            invocation: id,
            agent,
            reason: abort.signal.aborted ? 'run_end' : 'start_failed',
            pids: [],
            ...(abort.signal.aborted
              ? {}
              : { error: { code: toSdkError(error).code, message: toSdkError(error).message } }),
          });
          return undefined;
        },
      ),
    };
    this.waiting.set(agent, entry);
  }

  /**
   * For a new invocation of `agent`: the id of the set waiting for it, now reserved for that invocation
   * alone (the invocation must carry this id), or undefined when none waits.
   */
  claim(agent: string): string | undefined {
    const entry = this.waiting.get(agent);
    if (entry === undefined) return undefined;
    this.waiting.delete(agent);
    clearTimeout(entry.timer);
    this.claimed.set(entry.id, entry);
    return entry.id;
  }

  /**
   * The set claimed for invocation `id` (waiting for its start when it is still starting), when it still
   * fits `version` and `workspace` and every service of it is alive; its buffered events are handed to
   * `onEvent` first (`service.ready` with `prestarted: true`), then its live ones. Undefined when nothing
   * was claimed for `id` or the set no longer fits (it is collected then): the caller starts cold.
   */
  async take(
    id: string,
    version: WorkflowVersion,
    workspace: string,
    onEvent: Sink,
  ): Promise<InvocationServices | undefined> {
    const entry = this.claimed.get(id);
    if (entry === undefined) return undefined;
    this.claimed.delete(id);
    const services = await entry.services;
    if (services === undefined) return undefined;
    let fits = entry.workspace === workspace;
    try {
      fits &&= planSignature(planServices(version, entry.agent)) === entry.signature;
    } catch {
      fits = false;
    }
    if (!fits || entry.broken) {
      await this.collect(entry, entry.broken ? 'service_exited' : 'workflow_changed');
      return undefined;
    }
    for (const event of entry.buffered)
      onEvent(event.type === 'service.ready' ? { ...event, prestarted: true } : event);
    entry.buffered.length = 0;
    entry.sink = onEvent;
    return services;
  }

  /** Collects a set claimed for invocation `id` that it did not take (its first attempt failed before). */
  async release(id: string): Promise<void> {
    const entry = this.claimed.get(id);
    if (entry === undefined) return;
    this.claimed.delete(id);
    await this.collect(entry, 'run_end');
  }

  /** After an `apply_workflow`: collects every waiting set whose agent's plan no longer starts the same. */
  async reconfigured(): Promise<void> {
    let version: WorkflowVersion;
    try {
      version = await this.host.currentVersion();
    } catch {
      return;
    }
    const stale = [...this.waiting.values()].filter((entry) => {
      try {
        return planSignature(planServices(version, entry.agent)) !== entry.signature;
      } catch {
        return true;
      }
    });
    await Promise.all(stale.map((entry) => this.collect(entry, 'workflow_changed')));
  }

  /** At the run's end (or cancellation): no new set, and every set not taken is collected. */
  async closeAll(): Promise<void> {
    this.ended = true;
    const entries = [...this.waiting.values(), ...this.claimed.values()];
    await Promise.all([...entries.map((entry) => this.collect(entry, 'run_end')), ...this.collecting]);
  }

  /** Collects `entry` (stopping its start if it is still starting) and journals why; tracked until done. */
  private collect(entry: Entry, reason: PrestartCollectReason): Promise<void> {
    const done = this.collectNow(entry, reason);
    this.collecting.add(done);
    const forget = () => this.collecting.delete(done);
    done.then(forget, forget);
    return done;
  }

  private async collectNow(entry: Entry, reason: PrestartCollectReason): Promise<void> {
    if (this.waiting.get(entry.agent) === entry) this.waiting.delete(entry.agent);
    this.claimed.delete(entry.id);
    clearTimeout(entry.timer);
    entry.sink = () => {};
    if (reason === 'run_end') entry.abort.abort(new Error('the run ended'));
    const services = await entry.services;
    // A failed start was collected and journaled by startInvocation's caller above.
    if (services === undefined) return;
    let error: { code: string; message: string } | undefined;
    try {
      await services.close();
    } catch (caught) {
      const sdk = toSdkError(caught);
      error = { code: sdk.code, message: sdk.message };
    }
    this.host.emit({
      type: 'prestart.collected',
      invocation: entry.id,
      agent: entry.agent,
      reason,
      pids: pidsOf(services),
      ...(error ? { error } : {}),
    });
  }
}

function pidsOf(services: InvocationServices): number[] {
  return services.sessions.flatMap((s) => {
    const { pid } = processFacts(s);
    return pid === undefined ? [] : [pid];
  });
}
