/** The managed bridge's public names, for `src/index.ts` to re-export. */
export { createBridgeToken, serveHttp, HTTP_FACE_PATH, writeBridgeTokenFile } from './httpFace.js';
export type { HttpFace, HttpFaceOptions } from './httpFace.js';
export { DEFAULT_HTTP_TIMEOUTS, httpServerTimeouts } from './httpTimeouts.js';
export type { HttpTimeouts } from './httpTimeouts.js';
export { httpToStdio } from './httpToStdio.js';
export type { HttpToStdioBridge, HttpToStdioOptions } from './httpToStdio.js';
export { harnessConfig, HARNESS_CONFIG_FORMATS } from './harnessConfig.js';
export type { HarnessConfigFormat, HarnessConfigOptions } from './harnessConfig.js';
export { DEFAULT_LINE_LIMITS } from './lineTransport.js';
export type { LineLimits } from './lineTransport.js';
export { protectStdout } from './protectStdout.js';
export type { ProtectedStdout } from './protectStdout.js';
export { DEFAULT_FORWARD_LIMITS } from './serviceGate.js';
export type { ForwardLimits, GateEvent, GateState } from './serviceGate.js';
export { serveStdio } from './stdioFace.js';
export type { StdioFace, StdioFaceOptions } from './stdioFace.js';
export { createSurface, ERROR_META_KEY, SERVICE_META_KEY, SOURCE_NAME_META_KEY } from './surface.js';
export type {
  DuplicateListing,
  LocalService,
  LocalTool,
  LocalToolExtra,
  Surface,
  SurfaceEntry,
  SurfaceOptions,
  SurfaceRequestOptions,
  SurfaceProgress,
  SurfaceListChange,
  SurfaceRoute,
} from './surface.js';
export { assignSurfaceNames, MAX_SURFACE_NAME_LENGTH } from './surfaceNames.js';
export { startGateway, defaultGatewayLogDir, DEFAULT_GATEWAY_PORT, GATEWAY_PROJECT_ID } from './gateway.js';
export type { Gateway, GatewayEvent, GatewayOptions, GatewayState } from './gateway.js';
export { serveCommand } from './serveCommand.js';
export type { ServeCommandOptions } from './serveCommand.js';
