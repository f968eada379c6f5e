#!/usr/bin/env node
// Builds the supervisor's entry into one CommonJS file: packages/supervisor/dist/main.js (tsc's output) and
// the supervisor modules it imports, bundled by esbuild into packages/supervisor/dist/main.bundle.cjs, with a
// source map back to packages/supervisor/src/*.ts. A host forks it (`defaultSupervisorEntry` in the SDK's
// processes/supervisorEntry.ts) when it is newer than the package's last tsc build: a second Node start without the
// ES module loader's (~10 ms of CPU less per host on Node 20). `npm run build` runs it after tsc. Why, and
// what it guarantees: docs/decisions/probe-bundle.md ("The supervisor's entry").
//
// The build refuses — and then leaves no bundle, so hosts fork dist/main.js — a bundle that holds anything
// but the supervisor's own built modules (the supervisor stands alone: no dependency, no other package), that
// leaves an import of anything but a Node built-in outside, or that reads import.meta.
import { statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleOutputs } from './lib/bundleOutputs.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'packages', 'supervisor', 'dist');
const OUT = join(DIST, 'main.bundle.cjs');
const OUTPUTS = [OUT, `${OUT}.map`];
const BUILTINS = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

const { clear, refuse, write } = bundleOutputs('build-supervisor', OUTPUTS);

// An earlier bundle is not left behind a build that fails: hosts then fork dist/main.js.
clear();
const started = Date.now();
let result;
try {
  result = await build({
    entryPoints: [join(DIST, 'main.js')],
    outfile: OUT,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Strict, as the ES modules it is made from were (the directive must be the file's first statement).
    banner: { js: "'use strict';" },
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    // In memory: written only once the checks below pass (scripts/lib/bundleOutputs.mjs).
    write: false,
    logLevel: 'silent',
    logOverride: { 'empty-import-meta': 'error' },
  });
} catch (error) {
  refuse((error.errors ?? [{ text: String(error) }]).map((e) => `${e.location?.file ?? ''}: ${e.text}`));
}

const problems = [];
for (const [file, input] of Object.entries(result.metafile.inputs)) {
  const path = file.split(sep).join('/');
  if (!path.startsWith('packages/supervisor/dist/')) problems.push(`${path}: not one of the supervisor's own modules`);
  for (const imp of input.imports) {
    if (imp.external && !BUILTINS.has(imp.path)) problems.push(`${path}: ${imp.kind} of ${imp.path} left outside`);
  }
}
if (problems.length > 0) refuse(problems);
write(result.outputFiles);
console.log(
  `build-supervisor: ${relative(ROOT, OUT)} (${Math.round(statSync(OUT).size / 1024)} KiB, ${Object.keys(result.metafile.inputs).length} modules) in ${Date.now() - started} ms`,
);
