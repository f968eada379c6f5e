/** Picks the harness an agent's `harness` configuration names (SPEC §10.2). */
import { SdkError } from '../errors.js';
import type { Harness } from '../workflow/workflowSchema.js';
import type { AgentHarness } from './harness.js';
import { createModelLoopHarness } from './modelLoop.js';
import { isModelLoopConfig } from './modelProviders.js';
import type { ScriptedHarness } from './scriptedHarness.js';

/** The harness types this version runs. */
export const AVAILABLE_HARNESS_TYPES = ['scripted', 'openai', 'anthropic', 'gemini'] as const;

/**
 * The harness for `agent`. `scripted` uses the run's script; `openai`, `anthropic` and `gemini` are model
 * loops; every other type throws `harness_unavailable`: this version does not include it (see docs/harnesses.md).
 */
export function harnessFor(agent: string, config: Harness, scripted: ScriptedHarness | undefined): AgentHarness {
  if (config.type === 'scripted') {
    if (scripted === undefined) {
      throw new SdkError('usage', `agent "${agent}" uses the scripted harness, but the run has no script`, {
        remedy: 'pass --script <script.json> (API: `script`) with the steps of every scripted agent',
        data: { agent },
      });
    }
    return scripted;
  }
  if (isModelLoopConfig(config)) return createModelLoopHarness(agent, config);
  throw new SdkError(
    'harness_unavailable',
    `agent "${agent}" uses the "${config.type}" harness, which is not available in this version (available: ${AVAILABLE_HARNESS_TYPES.join(', ')})`,
    {
      remedy: `set agents.${agent}.harness to {"type": "scripted"} and pass --script, or drive the agent yourself through \`scienceevolve services serve\``,
      data: { agent, harness: config.type },
    },
  );
}
