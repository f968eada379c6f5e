/**
 * The CLI's own files, found from this module's location. The one place in the CLI's light path that
 * reads `import.meta.url`: this module sits at `dist/` depth, and so does the light bundle
 * (`dist/light.bundle.cjs`) into which it is bundled, so the paths hold in both. The bundle's build
 * (`scripts/build-light.mjs`) refuses any other bundled module that reads `import.meta`.
 */
import { fileURLToPath } from 'node:url';

/** The CLI's package.json (`packages/cli/package.json`). */
export function cliPackageJsonUrl(): URL {
  return new URL('../package.json', import.meta.url);
}

/** The `scienceevolve` bin of this CLI (`packages/cli/bin/scienceevolve.js`), as a file path. */
export function cliBinPath(): string {
  return fileURLToPath(new URL('../bin/scienceevolve.js', import.meta.url));
}
