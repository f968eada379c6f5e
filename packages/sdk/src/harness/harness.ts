/**
 * The harness interface (SPEC §10.2): what turns an agent's instructions, task and tools into actions.
 * The engine builds the agent's surface, hands it to the harness, and records what the harness returns.
 */
import type { Surface } from '../bridge/surface.js';

/** What every harness receives for one invocation. */
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
}

/** What a harness returns: the agent's final answer. */
export interface HarnessOutput {
  output: string;
}

/**
 * A harness. `run` resolves with the final answer, or throws when the harness crashed (the engine then
 * retries the invocation with fresh services, SPEC §10.3).
 */
export interface AgentHarness {
  run(input: HarnessInput): Promise<HarnessOutput>;
}
