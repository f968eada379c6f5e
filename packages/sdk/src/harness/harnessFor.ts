/**
 * The harness registry (SPEC §10.2): which factory builds the harness an agent's `harness` configuration
 * names, and what a run loads for its harnesses (the scripted harness's script). The engine reaches
 * harnesses through this file and harness.ts alone.
 */
import { SdkError } from '../errors.js';
import type { Harness } from '../workflow/workflowSchema.js';
import { createCommandHarness } from './commandHarness.js';
import { type AgentHarness, HARNESS_API_VERSION } from './harness.js';
import { createModelLoopHarness } from './modelLoopLoader.js';
import { type Script, ScriptedHarness, parseScript, readScriptFile, scriptPositionAfter } from './scriptedHarness.js';

/** One harness type's configuration. @public */
export type HarnessConfigOf<T extends Harness['type']> = Extract<Harness, { type: T }>;

/** What a run offers every factory: the harnesses shared by the run's agents. @public */
export interface HarnessRunContext {
  /** The run's scripted harness, or undefined when the run has no script. */
  readonly scripted: AgentHarness | undefined;
}

/** Builds the harness of `agent` from its configuration. Throws an `SdkError` when it cannot. @public */
export type HarnessFactory<T extends Harness['type']> = (
  agent: string,
  config: HarnessConfigOf<T>,
  run: HarnessRunContext,
) => AgentHarness;

/** Factories by harness type. @public */
export type HarnessFactories = { readonly [T in Harness['type']]?: HarnessFactory<T> };

/**
 * The built-in factories: one for every harness type of the schema (the type makes a missing one a compile
 * error, so no harness type is ever "unavailable"). A factory that needs nothing of the run takes
 * `(agent, config)` only.
 */
const FACTORIES: { readonly [T in Harness['type']]: HarnessFactory<T> } = {
  scripted: scriptedFor,
  command: (agent, config) => createCommandHarness(agent, config),
  openai: (agent, config) => createModelLoopHarness(agent, config),
  anthropic: (agent, config) => createModelLoopHarness(agent, config),
  gemini: (agent, config) => createModelLoopHarness(agent, config),
};

/** The harness types this version runs. */
export const AVAILABLE_HARNESS_TYPES: readonly Harness['type'][] = Object.keys(FACTORIES) as Harness['type'][];

/** The harness for `agent`. Throws `usage` for a scripted agent in a run without a script. */
export function harnessFor(
  agent: string,
  config: Harness,
  run: HarnessRunContext,
  overrides: HarnessFactories = {},
): AgentHarness {
  const factory = (overrides[config.type] ?? FACTORIES[config.type]) as HarnessFactory<typeof config.type>;
  const harness = factory(agent, config, run);
  const version = harness.apiVersion ?? 1;
  if (version !== HARNESS_API_VERSION) {
    throw new SdkError(
      'usage',
      `the ${config.type} harness of agent "${agent}" was written for harness interface version ${JSON.stringify(version)}; this SDK speaks version ${HARNESS_API_VERSION}`,
      {
        remedy: `use a harness written for version ${HARNESS_API_VERSION} (see HARNESS_API_VERSION in docs/api.md), or the SDK version the harness was written for`,
        data: { agent, harness: config.type, apiVersion: version },
      },
    );
  }
  return harness;
}

function scriptedFor(agent: string, _config: HarnessConfigOf<'scripted'>, run: HarnessRunContext): AgentHarness {
  if (run.scripted === undefined) {
    throw new SdkError('usage', `agent "${agent}" uses the scripted harness, but the run has no script`, {
      remedy: 'pass --script <script.json> (API: `script`) with the steps of every scripted agent',
      data: { agent },
    });
  }
  return run.scripted;
}

/** What a run gives the harness layer: the sources its harnesses need. */
export interface HarnessSources {
  /** The scripted harness's script: a file path or the document. */
  script?: string | Record<string, unknown> | undefined;
  /**
   * Factories that replace the built-in ones for their types (an embedder's own harness, a test's fake
   * model loop). Default none.
   */
  factories?: HarnessFactories | undefined;
}

/**
 * The harnesses of one run in one host: loads what they need once (the script), checks every agent's
 * harness before anything starts, and builds each invocation's harness.
 */
export class RunHarnesses implements HarnessRunContext {
  private constructor(
    /** The run's script, to be kept with the run so `resume` replays the same decisions; undefined without one. */
    readonly script: Script | undefined,
    readonly scripted: ScriptedHarness | undefined,
    private readonly overrides: HarnessFactories,
  ) {}

  /** Loads and validates the sources (`invalid_script`, `invalid_json`, `io_error` name the problem). */
  static async load(sources: HarnessSources): Promise<RunHarnesses> {
    const script =
      sources.script === undefined
        ? undefined
        : typeof sources.script === 'string'
          ? await readScriptFile(sources.script)
          : parseScript(sources.script);
    return new RunHarnesses(
      script,
      script === undefined ? undefined : new ScriptedHarness(script),
      sources.factories ?? {},
    );
  }

  /** Throws for the first agent whose harness cannot be built (before the run accepts anything). */
  check(agents: Readonly<Record<string, { harness: Harness }>>): void {
    for (const [agent, config] of Object.entries(agents)) harnessFor(agent, config.harness, this, this.overrides);
  }

  /**
   * What an invocation's checkpoint tells the run's harnesses once the invocation succeeded wherever it
   * ran (this host or a queue worker): the scripted harness takes the agent's position from it.
   */
  settle(agent: string, checkpointState: unknown): void {
    const position = scriptPositionAfter(checkpointState);
    if (position !== undefined) this.scripted?.restoreAgent(agent, { [agent]: position });
  }

  /** The harness of one invocation of `agent`. */
  forAgent(agent: string, config: Harness): AgentHarness {
    return harnessFor(agent, config, this, this.overrides);
  }
}
