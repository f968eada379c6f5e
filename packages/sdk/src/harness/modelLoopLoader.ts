/**
 * {@link createModelLoopHarness} as the SDK offers it: the loop (`modelLoop.ts`, and with it `ai` and the
 * `@ai-sdk/*` providers) loads when a harness first runs. Those packages are optional dependencies
 * (docs/decisions/optional-dependencies.md): without them a model-loop run stops with `missing_dependency`,
 * and everything else works.
 */
import { missingDependency } from '../errors.js';
import type { AgentHarness } from './harness.js';
import type { ModelLoopConfig, ModelLoopOptions } from './modelLoopLight.js';

/** The packages the model loops load: the AI SDK and its three providers. */
const MODEL_LOOP_PACKAGES = ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/google'] as const;

/**
 * The harness of `agent` for a model-loop configuration (defaults filled by the workflow schema). The loop
 * and the AI SDK load on the first run; `missing_dependency` then when they are not installed.
 */
export function createModelLoopHarness(
  agent: string,
  config: ModelLoopConfig,
  options: ModelLoopOptions = {},
): AgentHarness {
  let harness: Promise<AgentHarness> | undefined;
  return {
    run: async (input) => {
      harness ??= import('./modelLoop.js').then(
        (loop) => loop.createModelLoopHarness(agent, config, options),
        (error: unknown) => {
          throw (
            missingDependency(error, MODEL_LOOP_PACKAGES, `the ${config.type} model loop (agent "${agent}")`) ?? error
          );
        },
      );
      return (await harness).run(input);
    },
  };
}
