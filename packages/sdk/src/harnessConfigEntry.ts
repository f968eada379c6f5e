/**
 * `@scienceevolve/sdk/harness-config`: the MCP configuration an external harness needs to reach a managed
 * bridge ({@link harnessConfig}, {@link serveCommand}). A light entry point: it builds text and loads
 * nothing of MCP, processes or HTTP. Every name here is also exported by the package root.
 */
export { harnessConfig, HARNESS_CONFIG_FORMATS } from './bridge/harnessConfig.js';
export type { HarnessConfigFormat, HarnessConfigOptions } from './bridge/harnessConfig.js';
export { serveCommand } from './bridge/serveCommand.js';
export type { ServeCommandOptions } from './bridge/serveCommand.js';
