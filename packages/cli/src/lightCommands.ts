/**
 * Which commands run on the light path: plain data, read by the bin's first module (`entry.ts`, to choose
 * what to load) and by `light.ts` (whose table must have exactly these commands: it is typed by
 * {@link LightCommand}). It imports nothing.
 */
/**
 * The commands that only read files and print (no MCP, process or HTTP code): the bin runs them through
 * `light.ts`, built into one file (`dist/light.bundle.cjs`, `scripts/build-light.mjs`), instead of
 * `main.ts` and its ~200 modules. Help (`--help`, no command) and `--version` load little either way and
 * stay on `main.ts`, which loads no SDK entry for them.
 */
export const LIGHT_COMMANDS = ['validate', 'status', 'schema', 'harness-config'] as const;
export type LightCommand = (typeof LIGHT_COMMANDS)[number];

/** Whether `argv` (without node and the script) runs on the light path (see {@link LIGHT_COMMANDS}). */
export function usesLightPath(argv: readonly string[]): boolean {
  const name = argv[0];
  return name !== undefined && (LIGHT_COMMANDS as readonly string[]).includes(name);
}

/**
 * Whether `argv` runs `services probe`, which the bin runs from its own bundle (`dist/probe.bundle.cjs`,
 * `scripts/build-probe.mjs`; docs/decisions/probe-bundle.md) rather than `main.ts`.
 */
export function usesProbePath(argv: readonly string[]): boolean {
  return argv[0] === 'services' && argv[1] === 'probe';
}
