/**
 * The harness name lists, written once and importing nothing: the SDK's schemas (`states.ts`) build their
 * enums from them, and the CLI's option table (which may import nothing else, so that `--help` stays light)
 * takes its `choices` from them through `@scienceevolve/sdk/harness-names`.
 */

/** The external agent CLIs the SDK has presets (and `harness-config` formats) for. @internal */
export const HARNESS_PRESETS = ['claude', 'codex', 'gemini', 'opencode', 'pi'] as const;

/**
 * The harness choices of `init`: the built-in harness types and the agent CLI presets (`gemini-cli` is the
 * Gemini CLI; `gemini` the Gemini API model loop).
 * @internal
 */
export const INIT_HARNESSES = [
  'scripted',
  'openai',
  'anthropic',
  'gemini',
  'claude',
  'codex',
  'gemini-cli',
  'opencode',
  'pi',
  'command',
] as const;
