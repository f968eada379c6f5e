#!/usr/bin/env node
'use strict';
// Stdout is protocol from the first byte: the guard goes in (for the commands that serve MCP on stdio)
// before the CLI and the SDK load, so nothing they print at load time reaches stdout. The compile cache
// (Node ≥ 22.1) is enabled before the CLI's ES modules load too, so every module after this one is cached. With
// --debug, stack traces point at the TypeScript sources.
//
// This file is CommonJS (bin/package.json). The light commands (validate, status, schema, harness-config)
// and `services probe` start from CommonJS all the way: dist/entry.cjs (src/entry.ts, built by `npm run
// build`) loads the one bundled file that runs them, without the ES module loader's start. Every other
// command — and these when `tsc --build` ran after their bundle was made — goes through the ES modules as
// tsc builds them.
const argv = process.argv.slice(2);
const START = '../dist/entry.cjs';
let start;
try {
  start = require(START);
} catch (error) {
  if (error?.code !== 'MODULE_NOT_FOUND') throw error;
}
// Which module runs argv, chosen once (a bundle's freshness is four stats) and handed to loadCli. An
// entry.cjs that predates `runsBundled` (an earlier `npm run build`, followed by `tsc --build` alone) is not
// asked: its bundles are of that build, so the ES entry, tsc's own output, runs.
const bundled = typeof start?.runsBundled === 'function' ? start.cliModuleFor(argv) : undefined;
if (bundled?.endsWith('.bundle.cjs')) {
  // The light path loads no module through Node's loader after this file and entry.cjs (its bundle has its
  // own code cache), so the module compile cache would only cost there (measured: cli-light-bundle.md);
  // the probe's bundle keeps it as it was measured (probe-bundle.md).
  if (!start.usesLightPath(argv)) start.enableCliCompileCache();
  if (argv.includes('--debug')) process.setSourceMapsEnabled(true);
  start
    .loadCli(argv, bundled)
    .then(({ run }) => run(argv))
    .then((code) => {
      process.exitCode = code;
    });
} else {
  import('../dist/entry.js')
    .then(async ({ enableCliCompileCache, guardStdoutFor, loadCli }) => {
      enableCliCompileCache();
      await guardStdoutFor(argv);
      if (argv.includes('--debug')) process.setSourceMapsEnabled(true);
      const { run } = await loadCli(argv);
      return run(argv);
    })
    .then((code) => {
      process.exitCode = code;
    });
}
