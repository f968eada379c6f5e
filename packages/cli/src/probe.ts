/**
 * The probe's path: `scienceevolve services probe`. `npm run build` bundles this module with everything it
 * reaches — the probe command, the SDK's probe entry, the store, the invocation path, the supervisor client,
 * the MCP client and zod — into one CommonJS file, `dist/probe.bundle.cjs` (`scripts/build-probe.mjs`;
 * docs/decisions/probe-bundle.md), which the bin compiles with V8's code cache of its last run: one file
 * instead of ~300 ES modules. What loads after the service's spawn (the session code, the MCP client) stays
 * lazy inside the bundle. The bin runs this for `services probe` (`usesProbePath` in `lightCommands.ts`)
 * and `main.ts` for everything else.
 */
import { type CommandRun, runCommands } from './dispatch.js';
import { type Io, processIo, usageError } from './output.js';

/** `services probe` only: the bin sends nothing else here. */
const probeOnly: CommandRun = async (argv, io) => {
  const [sub, ...rest] = argv;
  if (sub !== 'probe') throw usageError(`the probe's path runs \`services probe\` only, not \`services ${sub}\``);
  const { probe } = await import('./commands/servicesProbe.js');
  return probe(rest, io);
};

const TABLE = new Map<string, () => Promise<CommandRun>>([['services', async () => probeOnly]]);

/** Runs `services probe` (or its help) with `argv`; resolves to the exit code. */
export function run(argv: string[], io: Io = processIo): Promise<number> {
  return runCommands(TABLE, argv, io);
}
