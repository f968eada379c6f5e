/**
 * `@scienceevolve/sdk/agent-services`: one agent's services outside a run — {@link probeServices},
 * {@link serveAgentServices} and the bridge faces that serve them. A narrower entry than the package root
 * for `services probe` and `services serve`: it loads the MCP SDK, the invocation path and the bridge,
 * but not the engine's harnesses (the AI SDK, agent CLIs, Git). Every name here is also exported by the
 * package root (public) or by `internal.ts` (internal).
 */
export { serveAgentServices } from './engine/agentServices.js';
export { probeServices } from './engine/probeServices.js';
export type {
  ProbeOptions,
  ProbeReport,
  ProbedService,
  HeldProbe,
  ServedAgent,
  ServeAgentOptions,
  AgentServicesOptions,
} from './engine/agentServices.js';
export type { SandboxDecision, SandboxReason } from './processes/sandbox.js';
export type { CollectionMechanism, CollectionPreference } from './processes/processGroup.js';
export { DEFAULT_PIDS_MAX, MAX_PIDS_MAX, MIN_PIDS_MAX } from './processes/processGroup.js';
export { createBridgeToken, serveHttp, HTTP_FACE_PATH, writeBridgeTokenFile } from './faces/httpFace.js';
export type { HttpFace, HttpFaceOptions } from './faces/httpFace.js';
export { serveStdio } from './faces/stdioFace.js';
export type { StdioFace, StdioFaceOptions } from './faces/stdioFace.js';
export { protectStdout } from './faces/protectStdout.js';
export type { ProtectedStdout } from './faces/protectStdout.js';
