/** The options of the engine's entry points and what a run reports (shared by runs.ts, runLoop.ts and attempt.ts). */
import { SdkError } from '../errors.js';
import { StartGate } from '../processes/admission.js';
import type { ErrorRecord, RunEvent, RunStatus } from '../events/runEvents.js';
import type { HarnessFactories } from '../harness/harnessFor.js';
import { QueueClient, type QueueSettings } from '../queue/queueClient.js';
import type { Question, QuestionAnswer } from '../sessions/elicitation.js';
import { MAX_DURATION_MS } from '../workflow/workflowSchema.js';

/** Options shared by `startRun` and `resumeRuns`. @public */
export interface EngineOptions {
  /** Receives every public event as it is journaled. A throw in it is ignored. */
  onEvent?: (event: RunEvent) => void;
  /** Milliseconds every service of one invocation together has to be ready. Default 35,000. */
  startupBudgetMs?: number;
  /**
   * How many project-service starts of this run may run at once; the rest queue at the admission gate and
   * their start budget counts from admission. Default: the process's gate, one start per core.
   */
  maxConcurrentStarts?: number;
  /** Milliseconds a service start may wait at the admission gate before `start_queue_timeout`. Default 300,000. */
  startQueueLimitMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL when services and harness processes are collected. Default 2,000. */
  graceMs?: number;
  /** Milliseconds a forwarded call may take. Default 60,000. */
  forwardTimeoutMs?: number;
  /** Where `envFrom` and `apiKeyEnv` read host variables. Default `process.env` (never modified). */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * Cancels the run: in-flight harness work stops, every process is collected, the run is left
   * `cancelled` for `resume`.
   */
  signal?: AbortSignal;
  /**
   * Harness factories by type that replace the built-in ones for this run (and this resume): an
   * embedder's own harness behind a type of the workflow schema. Default none.
   */
  harnessFactories?: HarnessFactories;
  /**
   * Warm starts: when Main delegates to a worker, start that worker's services again for its next
   * invocation, so the next `delegate` to it finds them ready. Default true; false turns it off.
   */
  prestart?: boolean;
  /** Milliseconds a prestarted set waits for its invocation before it is collected. Default 60,000. */
  prestartIdleMs?: number;
  /**
   * The queue backend (scale-out): a Redis URL (`redis://…`, `rediss://…`, `unix:///…`) or its settings.
   * Each worker invocation becomes a BullMQ job that a `scienceevolve worker` takes, on any machine; Main
   * still runs in this process. Default none: every invocation runs in this process, and no Redis is used.
   */
  queue?: string | QueueSettings | undefined;
  /**
   * Answers a service's question for an agent whose `elicitation` is `operator` (an attended run: the
   * CLI prompts on its terminal). Absent (unattended), such a question fails the call `question_unanswered`.
   */
  askOperator?: (question: Question, context: { agent: string }) => Promise<QuestionAnswer>;
}

/**
 * Opens the run's queue when `options.queue` names one (BullMQ is loaded only then); undefined otherwise.
 * `usage` for a bad address, `queue_unreachable` when Redis does not answer.
 */
export async function openRunQueue(options: EngineOptions): Promise<QueueClient | undefined> {
  if (options.queue === undefined) return undefined;
  return QueueClient.open(typeof options.queue === 'string' ? { url: options.queue } : options.queue);
}

/**
 * Refuses, with `usage` naming the option, a duration of `options` that is not an integer from its floor to
 * {@link MAX_DURATION_MS} (2^31 − 1 ms: a longer `setTimeout` fires at once). Run and resume check this
 * before anything is written or started.
 */
export function checkEngineDurations(options: EngineOptions): void {
  const durations: [keyof EngineOptions, number | undefined, number][] = [
    ['startupBudgetMs', options.startupBudgetMs, 1],
    ['graceMs', options.graceMs, 0],
    ['forwardTimeoutMs', options.forwardTimeoutMs, 1],
    ['startQueueLimitMs', options.startQueueLimitMs, 0],
    ['prestartIdleMs', options.prestartIdleMs, 0],
    // Not a duration, but the same rule: a whole number in range, or usage before anything starts.
    ['maxConcurrentStarts', options.maxConcurrentStarts, 1],
  ];
  for (const [name, value, floor] of durations) {
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < floor || value > MAX_DURATION_MS) {
      throw new SdkError(
        'usage',
        name === 'maxConcurrentStarts'
          ? `${name} must be a whole number from ${floor} to ${MAX_DURATION_MS}`
          : `${name} must be a whole number of milliseconds from ${floor} to ${MAX_DURATION_MS}`,
        {
          remedy: `pass ${name} as an integer in that range, or leave it out for its default`,
          data: { option: name },
        },
      );
    }
  }
}

const runGates = new WeakMap<EngineOptions, StartGate>();

/**
 * The admission gate of a run's service starts: its own gate of `maxConcurrentStarts` places (one per
 * options object, so every attempt of the run shares it), or undefined for the process's gate.
 */
export function startGateFor(options: EngineOptions): StartGate | undefined {
  if (options.maxConcurrentStarts === undefined) return undefined;
  let gate = runGates.get(options);
  if (gate === undefined) {
    gate = new StartGate(options.maxConcurrentStarts);
    runGates.set(options, gate);
  }
  return gate;
}

/** What a finished (or stopped) run reports: the shape of `run --json` plus where things are. @public */
export interface RunResult {
  /** The run id. */
  run: string;
  /** The project id. */
  project: string;
  /** How the run ended (or stopped). */
  status: RunStatus;
  /** Main's final answer, or null when Main did not finish. */
  output: string | null;
  /** Why the run failed or stopped, or null. */
  error: ErrorRecord | null;
  /** Every event of the run, in order. */
  events: RunEvent[];
  /** `runs/<runId>`: run.json, events.jsonl, script.json, checkpoints/, and each invocation's services and logs. */
  runDir: string;
  /** `runs/<runId>/events.jsonl`: the journal (see {@link readEvents}). */
  eventsPath: string;
}
