#!/usr/bin/env node
// Stdout is protocol from the first byte: the guard goes in (for the commands that serve MCP on stdio)
// before the CLI and the SDK load, so nothing they print at load time reaches stdout. The compile cache
// (Node ≥ 22.1) is enabled before the CLI loads too, so every module after this one is cached. The light
// commands (validate, status, schema, harness-config) run from one bundled file, the others from main.js
// (loadCli in src/entry.ts). With --debug, stack traces point at the TypeScript sources.
import { enableCliCompileCache, guardStdoutFor, loadCli } from '../dist/entry.js';

const argv = process.argv.slice(2);
enableCliCompileCache();
await guardStdoutFor(argv);
if (argv.includes('--debug')) process.setSourceMapsEnabled(true);
const { run } = await loadCli(argv);
process.exitCode = await run(argv);
