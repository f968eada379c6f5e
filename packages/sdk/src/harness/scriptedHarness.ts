/**
 * The `scripted` harness (SPEC §10.2): simulated model decisions from a script file,
 * `{"agents": {"<agent>": [{"call": "<surface tool>", "arguments": {…}}, …, {"final": "text"}]}}`.
 * Each agent's list is consumed in order across its invocations; `{{N}}` in a final text is the text
 * content of this invocation's N-th call result (0-based), and `{{task}}` in a final text or in any string
 * of a call's arguments is the invocation's task (Main's: the run's requirement). Deterministic: the
 * offline demo and the tests use it.
 */
import * as z from 'zod';
import { SdkError, toSdkError } from '../errors.js';
import { readTextFile } from '../store/atomicFile.js';
import { type ScriptCheckpoint, ScriptCheckpointSchema } from '../schemas/checkpoints.js';
import { recordProblem } from '../schemas/parseRecord.js';
import { type AgentHarness, type HarnessInput, type HarnessOutput, resultText } from './harness.js';

/** One call step: a tool of the agent's surface (`<service>__<tool>`) and its arguments. */
export const ScriptCallSchema = z.strictObject({
  call: z.string().min(1, { error: 'name a tool of the agent\'s surface, e.g. "workspace-tools__read_file"' }),
  arguments: z.record(z.string(), z.unknown()).default({}),
});
/** The final step: the agent's answer; `{{N}}` is the text of the N-th call result of the invocation. */
export const ScriptFinalSchema = z.strictObject({ final: z.string() });
/** One step. */
export const ScriptStepSchema = z.union([ScriptCallSchema, ScriptFinalSchema], {
  error: 'a step is {"call": "<tool>", "arguments": {…}} or {"final": "text"}',
});
/** A script file. */
export const ScriptSchema = z.strictObject({
  agents: z.record(z.string(), z.array(ScriptStepSchema)),
});
/** A script, defaults filled. */
export type Script = z.infer<typeof ScriptSchema>;
/** One step of a script. */
export type ScriptStep = z.infer<typeof ScriptStepSchema>;

/** Validates a script document; throws `usage` naming every problem with its JSON path. */
export function parseScript(value: unknown, source = 'the script'): Script {
  const result = ScriptSchema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => ({
    path: `$${issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}`,
    message: issue.message,
  }));
  throw new SdkError(
    'invalid_script',
    `${source} is not a valid script:\n${problems.map((p) => `  - ${p.path}: ${p.message}`).join('\n')}`,
    {
      remedy:
        'write {"agents": {"<agent>": [{"call": "<service>__<tool>", "arguments": {…}}, …, {"final": "text"}]}} (see docs/harnesses.md)',
      data: { errors: problems },
    },
  );
}

/** Reads and validates a script file. */
export async function readScriptFile(path: string): Promise<Script> {
  const text = await readTextFile(path, 'script file', 'check the --script path');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SdkError('invalid_json', `the script file ${path} is not JSON: ${(error as Error).message}`, {
      remedy: 'fix the JSON syntax of the script file',
      data: { path },
      cause: error,
    });
  }
  return parseScript(value, `the script file ${path}`);
}

/** Where each agent is in its step list: agent → index of its next step. */
export type ScriptPositions = Record<string, number>;

/**
 * An agent's position after an invocation that succeeded from `checkpointState` (its last checkpoint): the
 * step after the one it checkpointed, which was its final step; undefined for a state that is not this
 * harness's checkpoint. This is how a run learns where an agent is when the invocation ran elsewhere (a
 * queue worker): the position is in the checkpoint, like any harness's state.
 */
export function scriptPositionAfter(checkpointState: unknown): number | undefined {
  const parsed = ScriptCheckpointSchema.safeParse(checkpointState);
  return parsed.success ? parsed.data.position + 1 : undefined;
}

/**
 * The scripted harness of one run. It keeps each agent's position, shared by the agent's invocations. It
 * checkpoints each invocation when it starts and after every call, so a retried or resumed invocation
 * continues after its last recorded call instead of calling its tools again.
 */
export class ScriptedHarness implements AgentHarness {
  private positions: ScriptPositions = Object.create(null) as ScriptPositions;

  constructor(readonly script: Script) {}

  /** A copy of every agent's position. */
  snapshot(): ScriptPositions {
    return { ...this.positions };
  }

  /** Puts every agent back where a {@link snapshot} found it. */
  restore(positions: ScriptPositions): void {
    this.positions = Object.assign(Object.create(null) as ScriptPositions, positions);
  }

  /** Puts one agent back where a {@link snapshot} found it, leaving the others where they are. */
  restoreAgent(agent: string, positions: ScriptPositions): void {
    this.positions[agent] = Object.hasOwn(positions, agent) ? positions[agent]! : 0;
  }

  async run(input: HarnessInput): Promise<HarnessOutput> {
    const steps = Object.hasOwn(this.script.agents, input.agent) ? this.script.agents[input.agent]! : [];
    const results = await this.begin(input);
    const known = new Set(input.surface.tools.map((t) => t.name));
    for (;;) {
      const index = this.positions[input.agent] ?? 0;
      const step = steps[index];
      if (step === undefined) {
        throw new SdkError(
          'invalid_script',
          `the script has no more steps for agent "${input.agent}" (it used ${steps.length}; this invocation needs a "final" step)`,
          {
            remedy: `add steps ending in {"final": "…"} to agents.${input.agent} of the script: one list per invocation of the agent, in order`,
            data: { agent: input.agent, steps: steps.length },
          },
        );
      }
      this.positions[input.agent] = index + 1;
      if ('final' in step) return { output: substitute(step.final, results, input.task) };
      if (input.signal.aborted) throw toSdkError(input.signal.reason);
      if (!known.has(step.call)) {
        throw new SdkError(
          'unknown_tool',
          `step ${index} of the script for agent "${input.agent}" calls "${step.call}", which is not on the agent's surface`,
          {
            remedy: `use one of: ${[...known].sort().join(', ') || '(the agent has no tools)'}`,
            data: { agent: input.agent, step: index, tool: step.call, tools: [...known].sort() },
          },
        );
      }
      let text: string;
      try {
        const args = withTask(step.arguments, input.task) as Record<string, unknown>;
        text = resultText(await input.surface.callTool(step.call, args, { signal: input.signal }));
      } catch (error) {
        // A call that fails does not stop the script: like a model, it sees the error as the result.
        if (input.signal.aborted) throw error;
        text = toSdkError(error).message;
      }
      // A result that arrives after the cancel (a call cut short) is not recorded.
      if (input.signal.aborted) throw toSdkError(input.signal.reason);
      results.push(text);
      await this.checkpoint(input, results);
    }
  }

  /**
   * Puts the agent where the invocation's checkpoint left it (Main's also puts every other agent back), or,
   * on a fresh start, checkpoints the starting position; returns the results recorded so far.
   */
  private async begin(input: HarnessInput): Promise<string[]> {
    if (input.checkpoint === undefined) {
      await this.checkpoint(input, []);
      return [];
    }
    const parsed = ScriptCheckpointSchema.safeParse(input.checkpoint);
    if (!parsed.success) {
      throw new SdkError(
        'invalid_checkpoint',
        `the checkpoint of invocation ${input.invocationId} (agent "${input.agent}") is not a scripted harness's checkpoint: ${recordProblem(ScriptCheckpointSchema, input.checkpoint, (at) => (at.length === 0 ? 'its state' : `field "state.${at.map(String).join('.')}"`))}`,
        {
          remedy:
            "the agent's harness changed since the checkpoint was saved, or the file was edited: remove the checkpoint file (the invocation then restarts from its start) or restore the harness",
          data: { invocation: input.invocationId, agent: input.agent },
        },
      );
    }
    const saved: ScriptCheckpoint = parsed.data;
    if (input.agent === 'main') this.restore(saved.positions);
    this.positions[input.agent] = saved.position;
    return [...saved.results];
  }

  private async checkpoint(input: HarnessInput, results: readonly string[]): Promise<void> {
    const position = this.positions[input.agent] ?? 0;
    const state: ScriptCheckpoint = {
      harness: 'scripted',
      position,
      results: [...results],
      positions: this.snapshot(),
    };
    await input.saveCheckpoint(state);
    input.report({ kind: 'checkpoint', step: position });
  }
}

export { resultText };

/** Replaces `{{N}}` by the N-th result and `{{task}}` by the task; a reference past the results is left as written. */
function substitute(text: string, results: readonly string[], task: string): string {
  return text.replace(/\{\{(\d+|task)\}\}/g, (whole, n: string) =>
    n === 'task' ? task : (results[Number(n)] ?? whole),
  );
}

/** Levels of a call's arguments {@link withTask} looks into: 32 (deeper values are left as written). */
const TASK_DEPTH = 32;

/** `value` with `{{task}}` replaced by `task` in every string (keys untouched), to {@link TASK_DEPTH} levels. */
function withTask(value: unknown, task: string, depth = 0): unknown {
  if (typeof value === 'string') return value.replaceAll('{{task}}', task);
  if (depth >= TASK_DEPTH || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => withTask(v, task, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    Object.defineProperty(out, key, {
      value: withTask(v, task, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
