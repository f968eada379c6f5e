// The outputs of one bundle build (scripts/build-light.mjs, build-probe.mjs, build-supervisor.mjs). esbuild
// builds them in memory (`write: false`); they reach the disk only once every check passed, each under a
// temporary name renamed over its real one, the bundle itself last. So no bundle that was not checked, and no
// bundle cut short by a build stopped on the way, is ever under its real name: the bin (or the host, for the
// supervisor's) would take it as fresh — it is newer than every tsc build — and run it. An earlier build's
// outputs are removed when a build starts and when it is refused.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { ownSourcesOnly } from './bundleSourceMap.mjs';

/** The build named `name` writing `outputs` (its bundles and their maps, the real names). */
export function bundleOutputs(name, outputs) {
  const clear = () => {
    for (const file of outputs) {
      rmSync(file, { force: true });
      rmSync(`${file}.tmp`, { force: true });
    }
  };
  return {
    /** Removes every output (and a temporary one a stopped build left). */
    clear,
    /** Removes every output, says why the build is refused, and exits 1. */
    refuse(lines) {
      clear();
      console.error(`${name}: refused\n  ${lines.join('\n  ')}`);
      process.exit(1);
    },
    /**
     * Writes esbuild's in-memory `outputFiles` after the checks: source maps first (cut down to our own
     * sources when `ownSources`), the code last, each to `<file>.tmp` then renamed over `<file>`.
     */
    write(outputFiles, { ownSources = true } = {}) {
      const ordered = [...outputFiles].sort(
        (a, b) => Number(b.path.endsWith('.map')) - Number(a.path.endsWith('.map')),
      );
      for (const file of ordered) {
        if (!outputs.includes(file.path)) throw new Error(`${name}: an output not declared: ${file.path}`);
        const isMap = file.path.endsWith('.map');
        const data = isMap && ownSources ? JSON.stringify(ownSourcesOnly(JSON.parse(file.text))) : file.contents;
        writeFileSync(`${file.path}.tmp`, data);
        renameSync(`${file.path}.tmp`, file.path);
      }
    },
  };
}
