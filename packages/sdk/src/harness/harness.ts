/**
 * The harness interface (SPEC §10.2): what turns an agent's instructions, task and tools into actions.
 * The engine builds the agent's surface, hands it to the harness, and records what the harness returns.
 * Every harness — scripted, model loop, agent CLI — plugs in through this file alone: the engine never
 * imports a particular harness.
 */
import type { CallToolResult } from '@modelcontextprotocol/client';
import type { Surface } from '../surface/surface.js';
import type { ProcessRegistry } from '../processes/processRegistry.js';
import type { ModelCall, ModelRetry, TokenCounts } from '../schemas/records.js';

/** Token usage of one model call, as the provider reported it: the event's {@link TokenCounts}. @public */
export type TokenUsage = TokenCounts;

/**
 * What a harness reports as it goes. The engine journals each as a public event (with the invocation's
 * id and agent) and keeps usage totals per invocation and per run for `status`.
 * @public
 */
export type HarnessReport =
  /** One model call finished: the turn number (1-based), its usage and how long it took. */
  | ({ kind: 'model.called' } & ModelCall)
  /** A model call is retried after a 429/5xx/network failure. */
  | ({ kind: 'model.retry' } & ModelRetry)
  /** A checkpoint was written (the step number it holds). */
  | { kind: 'checkpoint'; step: number };

/**
 * What the host journaled of an invocation (`runs/<run>/events.jsonl`): the digest of every model response
 * (`model.called`), and every completed tool call that named a call id (`tool.called`, and the calls a
 * provider library answered itself), each with the digests of its results.
 * @public
 */
export interface JournaledSteps {
  /** `responseDigest` of every model call. */
  responses: ReadonlySet<string>;
  /** Completed calls by call id: the tool and the result digest of each completion journaled. */
  calls: ReadonlyMap<string, readonly { tool: string; resultDigest: string }[]>;
}

/** Nothing journaled (a fresh invocation). */
export function nothingJournaled(): JournaledSteps {
  return { responses: new Set(), calls: new Map() };
}

/** What every harness receives for one invocation attempt. @public */
export interface HarnessInput {
  /** The agent (role) name; `main` is Main. */
  agent: string;
  /** The agent's standing instructions from the workflow. */
  instructions: string;
  /** The task of this invocation: the run's requirement for Main, the delegated task for a worker. */
  task: string;
  /** Every tool the agent may use, already started, listed and bridged. */
  surface: Surface;
  /** The directory the agent works in (its worktree when Git-on). */
  workspace: string;
  /** Aborts when the run is cancelled; a harness stops and throws (or returns) promptly. */
  signal: AbortSignal;
  /** The invocation's id (for logs and tracing). */
  invocationId: string;
  /**
   * This attempt's runtime path (`runs/<run>/invocations/<servicesId>/`), created; a harness keeps its
   * own files (a CLI's home, its MCP configuration) under it.
   */
  runtimePath: string;
  /** Where host variables are read (`apiKeyEnv`, `envFrom`). Never modified. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The host's process registry: a harness that starts processes registers their groups here. */
  registry: ProcessRegistry;
  /** Milliseconds between SIGTERM and SIGKILL when a harness's processes are collected. */
  graceMs: number;
  /**
   * The invocation's last checkpoint (what the harness passed to `saveCheckpoint`), when this
   * attempt continues an invocation that was interrupted or retried; undefined on a fresh start.
   */
  checkpoint: unknown;
  /**
   * What the host journaled of this invocation's earlier attempts (empty on a fresh start): a harness
   * believes a checkpoint's recorded steps only where they match it, since the checkpoint file can be
   * rewritten by anything running as the user (SPEC §10.3).
   */
  journaled: JournaledSteps;
  /**
   * Writes the invocation's checkpoint atomically beside its record; resolves once it (or a newer one)
   * is durable. A harness calls it after each completed step (a model turn and its recorded tool
   * results), so `resume` continues from there without calling recorded tools again. The value must be
   * JSON; it is serialized when called, so the harness may change the object as soon as the call returns.
   */
  saveCheckpoint(state: unknown): Promise<void>;
  /** Reports progress (usage, retries) to the run's journal. Never throws. */
  report(report: HarnessReport): void;
}

/** What a harness returns. @public */
export interface HarnessOutput {
  /** The agent's final answer. */
  output: string;
  /**
   * For harnesses that do not call through the in-process surface themselves (agent CLIs): how many
   * tool calls reached the surface during the attempt, so an exit code is never the only verdict.
   */
  toolCallsReached?: number;
}

/**
 * The version of the harness interface ({@link AgentHarness}, {@link HarnessInput}, {@link HarnessOutput},
 * {@link HarnessReport}) this SDK speaks: 1.
 *
 * @remarks
 * It changes only when a harness written for the old version would break or be misread: a member of
 * `HarnessInput` removed or changing meaning, a new member a harness must act on, a new `HarnessReport`
 * kind the engine requires, or a different contract for checkpoints. A member a harness may ignore is
 * added without a change. A harness states the version it was written for in
 * {@link AgentHarness.apiVersion}; the engine refuses a harness of another version (`usage`, naming both)
 * before a run or resume starts anything.
 * @public
 */
export const HARNESS_API_VERSION = 1;

/**
 * A harness. `run` resolves with the final answer, or throws an `SdkError` when the harness failed (the
 * engine then retries the invocation with fresh services, SPEC §10.3).
 * @public
 */
export interface AgentHarness {
  /**
   * The {@link HARNESS_API_VERSION} this harness was written for. Absent means 1. The engine refuses a
   * harness whose version is not the SDK's.
   */
  readonly apiVersion?: number;
  /** Runs one invocation attempt to its final answer. */
  run(input: HarnessInput): Promise<HarnessOutput>;
}

/** The text content of a tool result, its text items joined by newlines (what a harness reads back). */
export function resultText(result: CallToolResult): string {
  return (result.content ?? [])
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}
