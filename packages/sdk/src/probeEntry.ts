/**
 * `@scienceevolve/sdk/probe`: {@link probeServices}, for `services probe`. Narrower than
 * `@scienceevolve/sdk/agent-services` (no bridge faces, no surface): what it loads at first is little more
 * than the supervisor client, so the probe forks the host's supervisor before it loads the store, and
 * spawns the service before it loads the MCP client (docs/decisions/probe-start.md). Every name here is
 * also exported by `internal.ts`.
 */
export { probeServices } from './engine/probeServices.js';
export type { HeldProbe, ProbeOptions, ProbeReport, ProbedService } from './engine/probeServices.js';
export type { SandboxDecision, SandboxReason } from './processes/sandbox.js';
