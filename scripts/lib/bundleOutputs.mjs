// The outputs of one bundle build (scripts/build-light.mjs, build-probe.mjs, build-supervisor.mjs): removed
// when the build starts and again when it is refused, so no bundle is left behind a build that failed — a
// bundle written before a check refused it would be newer than every tsc build, and the bin (or the host, for
// the supervisor's) would take it as fresh and run it.
import { rmSync } from 'node:fs';

/** The build named `name` writing `outputs`: `clear()` removes them; `refuse(lines)` too, then exits 1. */
export function bundleOutputs(name, outputs) {
  const clear = () => {
    for (const file of outputs) rmSync(file, { force: true });
  };
  return {
    clear,
    refuse(lines) {
      clear();
      console.error(`${name}: refused\n  ${lines.join('\n  ')}`);
      process.exit(1);
    },
  };
}
