#!/usr/bin/env node
// Stdout is protocol from the first byte: the guard goes in (for the commands that serve MCP on stdio)
// before the CLI and the SDK load, so nothing they print at load time reaches stdout.
import { guardStdoutFor } from '../dist/entry.js';

const argv = process.argv.slice(2);
guardStdoutFor(argv);
const { run } = await import('../dist/main.js');
process.exitCode = await run(argv);
