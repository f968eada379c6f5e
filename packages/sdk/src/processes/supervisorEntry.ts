/**
 * Which file a host forks as its supervisor: `@scienceevolve/supervisor/main`, or the same modules bundled
 * as one CommonJS file beside it when that is fresh (docs/decisions/probe-bundle.md, "The supervisor's
 * entry").
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The supervisor's default entry file: `@scienceevolve/supervisor/main`, resolved from this module — its
 * CommonJS bundle beside it (`main.bundle.cjs`, `npm run build`) when that is fresh
 * ({@link supervisorBundleFresh}): the same modules in one file, so the supervisor's Node starts without
 * the ES module loader (~10 ms of CPU less on Node 20; docs/decisions/probe-bundle.md).
 */
export function defaultSupervisorEntry(): string {
  const main = createRequire(import.meta.url).resolve('@scienceevolve/supervisor/main');
  return supervisorBundleFresh(dirname(main)) ? join(dirname(main), 'main.bundle.cjs') : main;
}

/**
 * Whether `dist` (the supervisor package's) holds a `main.bundle.cjs` newer than the package's last tsc
 * build (`dist/.tsbuildinfo`, which `tsc --build` rewrites when it emits; a build of the bundle's own time
 * may have come after it). A published package ships no `.tsbuildinfo`: its bundle is used when present.
 * A missing or stale bundle is never forked: `dist/main.js` is.
 */
export function supervisorBundleFresh(dist: string): boolean {
  const mtime = (file: string) => {
    try {
      return statSync(join(dist, file)).mtimeMs;
    } catch {
      return undefined;
    }
  };
  const bundle = mtime('main.bundle.cjs');
  if (bundle === undefined) return false;
  const built = mtime('.tsbuildinfo');
  return built === undefined || built < bundle;
}
