#!/usr/bin/env node
// Stdout is protocol from the first byte: the guard goes in (for the commands that serve MCP on stdio)
// before the CLI and the SDK load, so nothing they print at load time reaches stdout. The compile cache
// (Node ≥ 22.1) is enabled before the CLI loads too, so every module after this one is cached.
import { enableCliCompileCache, guardStdoutFor } from '../dist/entry.js';

const argv = process.argv.slice(2);
enableCliCompileCache();
guardStdoutFor(argv);
const { run } = await import('../dist/main.js');
process.exitCode = await run(argv);
