/**
 * `@scienceevolve/sdk/harness-config`: the MCP configuration an external harness needs to reach a managed
 * bridge ({@link harnessConfig}, {@link serveCommand}). A light entry point: it builds text and loads
 * nothing of MCP, processes or HTTP. Every name here is also exported by the package root (public) or by `internal.ts` (internal).
 */
export { harnessConfig, HARNESS_CONFIG_FORMATS } from './harness/harnessConfig.js';
export type { HarnessConfigFormat, HarnessConfigOptions } from './harness/harnessConfig.js';
export { serveCommand } from './harness/serveCommand.js';
export type { ServeCommandOptions } from './harness/serveCommand.js';
