#!/usr/bin/env node
// Builds the CLI's light path into one file: packages/cli/dist/light.js (the light commands' table, built
// by tsc) with everything it reaches — the CLI's own modules, the SDK's light entries, the supervisor's
// /proc readers, zod — bundled by esbuild into one CommonJS file, packages/cli/dist/light.bundle.cjs (the
// bin compiles it with V8's code cache), with a source map that chains tsc's own maps back to
// packages/*/src/*.ts. `npm run build` runs it after `tsc --build`. Why, and
// what it guarantees: docs/decisions/cli-light-bundle.md.
//
// The build refuses a bundle that would not behave like the modules it was made from:
// - a bundled module from a heavy package (MCP, model, queue, HTTP gateway code), or a dynamic import left
//   outside the bundle (the bin runs it through vm.Script, where `import()` has no loader);
// - a bundled module that reads `import.meta` other than packages/cli/dist/cliPaths.js: in the bundle,
//   `import.meta.url` is the bundle's, so only a module at the bundle's own depth (dist/) finds its files.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleOutputs } from './lib/bundleOutputs.mjs';
import { CJS_FUNCTION_FOOTER, cjsFunctionBanner } from './lib/cjsFunction.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI_DIST = join(ROOT, 'packages', 'cli', 'dist');
const ENTRY = join(CLI_DIST, 'light.js');
const OUT = join(CLI_DIST, 'light.bundle.cjs');

/** Packages the light path never loads (the same list as the lint rule `light-entries-stay-light`). */
const HEAVY = /node_modules\/(@modelcontextprotocol|@ai-sdk|ai|bullmq|ioredis|supergateway|@opentelemetry)\//;
/** The one bundled module allowed to read `import.meta` (it sits at the bundle's depth). */
const IMPORT_META_OK = 'packages/cli/dist/cliPaths.js';
/** Our own built modules: side-effect free at import (declarations, constants, schemas), so unused ones drop. */
const OWN_DIST = /[\\/]packages[\\/](cli|sdk|supervisor)[\\/]dist[\\/]/;

/**
 * Marks our own built modules side-effect free, so a re-export the light commands do not use (the
 * workflow entry's folder packing, which loads `yaml`) is left out of the bundle rather than evaluated.
 * Dependencies keep their own package.json's `sideEffects`.
 */
const ownModulesArePure = {
  name: 'own-modules-are-pure',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData?.ownModulesArePure) return undefined;
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { ownModulesArePure: true },
      });
      if (resolved.errors.length > 0 || !OWN_DIST.test(resolved.path)) return undefined;
      return { path: resolved.path, sideEffects: false };
    });
  },
};

/**
 * Node built-ins whose load costs milliseconds on Node 24 (they are not in its start-up snapshot: `node:crypto`
 * ~5 ms, `node:fs/promises` ~3 ms) but which most light commands never call (`validate` hashes nothing).
 * In the bundle, an import of one of them becomes a module of functions that load the built-in on first
 * call; every name imported from it must be a function (the build fails on any other: esbuild finds no
 * such export).
 */
const LAZY_BUILTINS = ['crypto', 'fs/promises'];

const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join('|').replace('/', '\\/')})$`);
    // Imports only: the lazy module's own require() of the built-in stays an external require.
    b.onResolve({ filter }, (args) =>
      args.kind === 'import-statement'
        ? { path: args.path.replace(/^node:/, ''), namespace: 'lazy-builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, async (args) => {
      const real = await import(`node:${args.path}`);
      const names = Object.keys(real).filter((n) => n !== 'default' && typeof real[n] === 'function');
      const lines = [
        'let loaded;',
        `const builtin = () => (loaded ??= require(${JSON.stringify(`node:${args.path}`)}));`,
        ...names.map(
          (n) =>
            `export function ${n}(...args) { return new.target ? Reflect.construct(builtin().${n}, args, new.target) : builtin().${n}(...args); }`,
        ),
      ];
      return { contents: lines.join('\n'), loader: 'js' };
    });
  },
};

const ENTRY_CJS = join(CLI_DIST, 'entry.cjs');
/** Everything this script writes: removed first, and again when the build is refused. */
const OUTPUTS = [OUT, `${OUT}.map`, ENTRY_CJS, `${ENTRY_CJS}.map`];

const { clear, refuse, write } = bundleOutputs('build-light', OUTPUTS);

// An earlier bundle is not left behind a build that fails: the bin then runs the unbundled light path.
clear();
const started = Date.now();
const result = await build({
  entryPoints: [ENTRY],
  outfile: OUT,
  bundle: true,
  platform: 'node',
  // CommonJS, so that the bin can compile it with V8's code cache (entry.ts, loadLightBundle).
  format: 'cjs',
  target: 'node20',
  // `import.meta.url` (cliPaths.ts only) is the bundle's own URL, as it was in the module.
  define: { 'import.meta.url': '__lightBundleUrl' },
  // The text is one function of CommonJS's five arguments (scripts/lib/cjsFunction.mjs), compiled as read.
  banner: { js: cjsFunctionBanner("var __lightBundleUrl = require('node:url').pathToFileURL(__filename).href;") },
  footer: { js: CJS_FUNCTION_FOOTER },
  sourcemap: 'linked',
  sourcesContent: false,
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'eof',
  metafile: true,
  // In memory: written only once the checks below pass (scripts/lib/bundleOutputs.mjs).
  write: false,
  logLevel: 'warning',
  plugins: [lazyBuiltins, ownModulesArePure],
});

// The bin's own start for the light commands, as CommonJS (`dist/entry.cjs`): entry.ts and the plain data it
// imports, nothing more (the stdout guard it imports on demand stays outside: the light commands never
// serve stdio). A CommonJS start skips the ES module loader's start on the light path.
const start = await build({
  entryPoints: [join(CLI_DIST, 'entry.js')],
  outfile: ENTRY_CJS,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  define: { 'import.meta.url': '__entryUrl' },
  banner: { js: "var __entryUrl = require('node:url').pathToFileURL(__filename).href;" },
  external: ['@scienceevolve/sdk/protect-stdout'],
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  write: false,
  logLevel: 'warning',
});
const startInputs = Object.keys(start.metafile.inputs).map((f) => f.split(sep).join('/'));
const START_OK = ['packages/cli/dist/entry.js', 'packages/cli/dist/lightCommands.js'];
for (const input of startInputs) {
  if (!START_OK.includes(input)) {
    refuse([`dist/entry.cjs would bundle ${input}; entry.ts imports Node built-ins only`]);
  }
}

const problems = [];
for (const file of Object.keys(result.metafile.inputs)) {
  if (file.startsWith('lazy-builtin:')) continue;
  const path = file.split(sep).join('/');
  if (HEAVY.test(path)) problems.push(`${path}: a heavy package in the light bundle`);
  if (path !== IMPORT_META_OK && /\bimport\.meta\b/.test(readFileSync(join(ROOT, file), 'utf8')))
    problems.push(`${path}: reads import.meta, which is the bundle's own URL once bundled (use cliPaths.ts)`);
}
for (const [file, input] of Object.entries(result.metafile.inputs)) {
  for (const imp of input.imports) {
    if (imp.external && imp.kind === 'dynamic-import')
      problems.push(`${file}: dynamic import of ${imp.path} left outside the bundle`);
  }
}
if (problems.length > 0) refuse(problems);
// entry.cjs first, the bundle last: without entry.cjs the bin runs the ES entry, whatever the bundle.
write(start.outputFiles, { ownSources: false });
write(result.outputFiles);
const size = statSync(OUT).size;
console.log(
  `build-light: ${relative(ROOT, OUT)} (${Math.round(size / 1024)} KiB, ${Object.keys(result.metafile.inputs).length} modules) in ${Date.now() - started} ms`,
);
