#!/usr/bin/env node
// Builds the probe's path into one file: packages/cli/dist/probe.js (the `services probe` table, built by tsc)
// with everything it reaches — the probe command, the SDK's probe entry, the store, the workflow schema, the
// invocation path, the supervisor client, the MCP client, zod — bundled by esbuild into one CommonJS file,
// packages/cli/dist/probe.bundle.cjs (the bin compiles it with V8's code cache, as the light bundle), with a
// source map that chains tsc's maps back to packages/*/src/*.ts. `npm run build` runs it after
// scripts/build-light.mjs. Why, and what it guarantees: docs/decisions/probe-bundle.md.
//
// The build refuses a bundle that would not behave like the modules it was made from, and then leaves no
// bundle at all (the bin runs main.js, the ES modules as tsc built them):
// - a dynamic import or a require of anything but a Node built-in left outside the bundle (the bin runs it
//   through vm.Script, where `import()` has no loader; and the bundle must need nothing beside it);
// - a bundled dependency (node_modules) that reads `import.meta`: our own modules' `import.meta.url` is
//   rewritten to their own file's URL, found from the bundle's (`../../sdk/dist/…` holds in the checkout and
//   where npm installs the packages side by side), but a dependency's file is not at a known place;
// - MCP, OpenTelemetry, ajv or yaml code evaluated before the service's spawn: the modules the probe
//   evaluates before it (the table, the command, the SDK's invocation path — PRE_SPAWN) must not reach them
//   through static imports; they stay behind the dynamic imports the bundle keeps lazy
//   (docs/decisions/probe-start.md).
import { readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleOutputs } from './lib/bundleOutputs.mjs';
import { CJS_FUNCTION_FOOTER, cjsFunctionBanner } from './lib/cjsFunction.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI_DIST = join(ROOT, 'packages', 'cli', 'dist');
const ENTRY = join(CLI_DIST, 'probe.js');
const OUT = join(CLI_DIST, 'probe.bundle.cjs');
const OUTPUTS = [OUT, `${OUT}.map`];

/** Our own built modules, whose `import.meta.url` is rewritten to their own file's URL. */
const OWN_DIST = /[\\/]packages[\\/](cli|sdk|supervisor)[\\/]dist[\\/].*\.js$/;
/**
 * The modules the probe evaluates before its service's spawn (each with what it imports statically): the
 * table, the command (a dynamic import of the table), the SDK's invocation path (a dynamic import of the
 * probe entry, after the supervisor's fork).
 */
const PRE_SPAWN = [
  'packages/cli/dist/probe.js',
  'packages/cli/dist/commands/servicesProbe.js',
  'packages/sdk/dist/engine/agentServicesStart.js',
];
/** What none of them may reach statically: it loads while the service boots, or never. */
const AFTER_SPAWN = /node_modules\/(@modelcontextprotocol|@opentelemetry|ajv|ajv-formats|yaml)\//;
/**
 * What the probe never holds, before or after the spawn: the model libraries (it runs no model loop) and the
 * SDK's root entry (which imports every layer). The bin loads the bundle as one file, so a module listing
 * cannot see them inside it: this check keeps them out.
 */
const NEVER = /(node_modules\/(ai|@ai-sdk\/[^/]+)\/|packages\/sdk\/dist\/index\.js$)/;
/**
 * The one way into OpenTelemetry: `events/telemetry.ts` imports this module (dynamically) only when export is
 * on, so a probe without OTEL_EXPORTER_OTLP_ENDPOINT evaluates no OpenTelemetry package.
 */
const TELEMETRY_EXPORT = 'packages/sdk/dist/events/telemetryExport.js';
const BUILTINS = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

/**
 * The bundle's prelude (after the function head and strict mode): `__probeOwnUrl(path)`, the URL of our module at `path`
 * relative to the bundle's directory, links resolved as Node's ES module loader resolves them for
 * `import.meta.url` (a package manager that links packages side by side — pnpm — gives the same file as
 * npm's flat install). A module of the SDK (`../../sdk/…`) is found in the SDK the CLI itself resolves (as
 * its ES modules import it: a copy nested under the CLI, when npm put another version at the top), one of the
 * supervisor (`../../supervisor/…`) in the supervisor that SDK resolves; the path beside the bundle is the
 * fallback. A path that does not exist is given as it is.
 */
const OWN_URL = [
  'var __probeRoots = Object.create(null);',
  'var __probeOwnUrl = (own) => {',
  "  const path = require('node:path');",
  '  let file = path.join(__dirname, own);',
  '  const pkg = /^\\.\\.\\/\\.\\.\\/(sdk|supervisor)\\/(.*)$/.exec(own);',
  '  if (pkg !== null) {',
  '    try {',
  '      const root = (name, from) => (__probeRoots[name] ??= path.dirname(require.resolve("@scienceevolve/" + name + "/package.json", { paths: [from] })));',
  "      const sdk = root('sdk', __dirname);",
  "      file = path.join(pkg[1] === 'sdk' ? sdk : root('supervisor', sdk), pkg[2]);",
  '    } catch {}',
  '  }',
  "  try { return require('node:url').pathToFileURL(require('node:fs').realpathSync(file)).href; }",
  "  catch { return require('node:url').pathToFileURL(file).href; }",
  '};',
].join(' ');

/**
 * Rewrites `import.meta.url` in our own built modules to the module's own file URL, found from the bundle's
 * place (`__probeOwnUrl`): `createRequire(import.meta.url)` (the supervisor's entry, the services'
 * NODE_PATH) and `new URL('../package.json', import.meta.url)` then resolve as they did unbundled.
 */
const ownImportMeta = {
  name: 'own-import-meta',
  setup(b) {
    b.onLoad({ filter: OWN_DIST }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!/\bimport\.meta\b/.test(text)) return undefined;
      const own = relative(CLI_DIST, args.path).split(sep).join('/');
      const url = `__probeOwnUrl(${JSON.stringify(own)})`;
      // Any other use of import.meta is left for esbuild, which refuses it (empty-import-meta, below).
      return { contents: text.replace(/\bimport\.meta\.url\b/g, url), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

const { clear, refuse, write } = bundleOutputs('build-probe', OUTPUTS);

// An earlier bundle is not left behind a build that fails: the bin then runs main.js.
clear();
const started = Date.now();
let result;
try {
  result = await build({
    entryPoints: [ENTRY],
    outfile: OUT,
    bundle: true,
    platform: 'node',
    // CommonJS, so that the bin can compile it with V8's code cache (entry.ts, loadBundle).
    format: 'cjs',
    target: 'node20',
    // One function of CommonJS's five arguments, strict (scripts/lib/cjsFunction.mjs), compiled as read.
    banner: { js: cjsFunctionBanner(OWN_URL) },
    footer: { js: CJS_FUNCTION_FOOTER },
    sourcemap: 'linked',
    sourcesContent: false,
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'eof',
    metafile: true,
    // In memory: written only once the checks below pass (scripts/lib/bundleOutputs.mjs).
    write: false,
    logLevel: 'silent',
    // import.meta left in the bundle (a dependency's, or ours other than `.url`) would be empty: refused.
    logOverride: { 'empty-import-meta': 'error' },
    plugins: [ownImportMeta],
  });
} catch (error) {
  refuse((error.errors ?? [{ text: String(error) }]).map((e) => `${e.location?.file ?? ''}: ${e.text}`));
}

const inputs = result.metafile.inputs;
const problems = [];
for (const [file, input] of Object.entries(inputs)) {
  const path = file.split(sep).join('/');
  if (NEVER.test(path)) problems.push(`${path}: the probe loads no model library and not the SDK's root`);
  if (path.includes('node_modules/') && /\bimport\.meta\b/.test(readFileSync(join(ROOT, file), 'utf8'))) {
    problems.push(`${path}: a dependency that reads import.meta (its file is not at a place the bundle knows)`);
  }
  for (const imp of input.imports) {
    if (imp.external && !BUILTINS.has(imp.path)) {
      problems.push(`${path}: ${imp.kind} of ${imp.path} left outside the bundle`);
    }
  }
}
// Everything the probe may evaluate (static and dynamic imports) but through the telemetry export module.
const reachable = new Set();
const toVisit = [relative(ROOT, ENTRY).split(sep).join('/')];
while (toVisit.length > 0) {
  const file = toVisit.pop();
  if (reachable.has(file)) continue;
  reachable.add(file);
  for (const imp of inputs[file]?.imports ?? []) {
    if (!imp.external && !(imp.kind === 'dynamic-import' && imp.path === TELEMETRY_EXPORT)) toVisit.push(imp.path);
  }
}
for (const file of reachable) {
  if (file.includes('node_modules/@opentelemetry/')) {
    problems.push(
      `${file}: OpenTelemetry reached other than through ${TELEMETRY_EXPORT} (loaded only when export is on)`,
    );
  }
}
// The static closure of what runs before the spawn.
const eager = new Set();
const pending = PRE_SPAWN.filter((file) => {
  if (inputs[file] === undefined) problems.push(`${file}: not in the bundle (the probe's path changed?)`);
  return inputs[file] !== undefined;
});
while (pending.length > 0) {
  const file = pending.pop();
  if (eager.has(file)) continue;
  eager.add(file);
  for (const imp of inputs[file]?.imports ?? []) {
    if (!imp.external && imp.kind !== 'dynamic-import') pending.push(imp.path);
  }
}
for (const file of eager) {
  if (AFTER_SPAWN.test(file.split(sep).join('/'))) {
    problems.push(`${file}: evaluated before the service's spawn (statically reached from ${PRE_SPAWN.join(', ')})`);
  }
}
if (problems.length > 0) refuse(problems);
write(result.outputFiles);
console.log(
  `build-probe: ${relative(ROOT, OUT)} (${Math.round(statSync(OUT).size / 1024)} KiB, ${Object.keys(inputs).length} modules) in ${Date.now() - started} ms`,
);
