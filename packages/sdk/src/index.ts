/**
 * The public API of `@scienceevolve/sdk`: the names a user can rely on, each documented in docs/api.md
 * (generated from this list's TSDoc by `npm run api`). A test pins this list (test/sdk/api.test.ts).
 *
 * Named exports only, so that every addition is visible in review. What the CLI needs beyond these comes
 * from `internal.ts` (`@scienceevolve/sdk/internal`), which only the CLI imports (a lint rule). The light
 * sub-paths (`/workflow`, `/store`, `/status`, `/harness-config`, `/agent-services`, `/errors`,
 * `/protect-stdout`) load fewer modules; each of their names is exported here or by `internal.ts`.
 *
 * @packageDocumentation
 */

// Errors.
export { SdkError, isSdkError, toSdkError, ERROR_CODES } from './errors.js';
export type { ErrorCode, SdkErrorOptions } from './errors.js';

// Runs.
export { startRun, runWorkflow, resumeRuns } from './engine/runs.js';
export type { RunOptions, RunHandle, ResumeOptions, EngineOptions, RunResult } from './engine/runs.js';
export type { QueueSettings } from './queue/queueClient.js';
export { closeHostSupervisor } from './invocation/hostSupervision.js';

// Workflow and folders.
export { WorkflowSchema } from './workflow/workflowSchema.js';
export type {
  Workflow,
  WorkflowOrchestration,
  WorkflowAgent,
  Harness,
  ModelLoopOptions,
  CommandHarness,
  McpServerEntry,
  ToolFilter,
  RemoteOAuth,
  McpDefinition,
  ElicitationPolicy,
} from './workflow/workflowTypes.js';
export { parseWorkflow } from './workflow/validate.js';
export { packFolder, packServiceFolder } from './workflow/packFolder.js';
export type { PackedFolder } from './workflow/packFolder.js';
export { unpackWorkflow } from './workflow/unpackFolder.js';
export type { UnpackedFolder } from './workflow/unpackFolder.js';
export { loadWorkflow } from './store/workflowLoad.js';
export type { LoadWorkflowOptions, LoadWorkflowResult } from './store/workflowLoad.js';

// Agent services: one agent's services outside a run.
export { serveAgentServices } from './engine/agentServices.js';
export type { AgentServicesOptions, ServeAgentOptions, ServedAgent } from './engine/agentServices.js';
export type { CollectionPreference } from './processes/processGroup.js';
export type { CatalogNames } from './schemas/records.js';
export type { CatalogChange } from './schemas/serviceEvents.js';
export type { QuestionOptions } from './sessions/elicitation.js';
export type { Question, QuestionAnswer } from './schemas/records.js';
export type { SurfaceTaskOptions } from './surface/surfaceTypes.js';
export type { ProcessRegistry } from './processes/processRegistry.js';
export type { GateState } from './surface/serviceGate.js';
export type {
  Surface,
  SurfaceRoute,
  DuplicateListing,
  SurfaceRequestOptions,
  SurfaceProgress,
  SurfaceListChange,
} from './surface/surface.js';

// Faces and bridges: an agent's surface served to an MCP client.
export { serveStdio } from './faces/stdioFace.js';
export type { StdioFace, StdioFaceOptions } from './faces/stdioFace.js';
export type { LineLimits } from './faces/lineTransport.js';
export type { HttpTimeouts } from './faces/httpTimeouts.js';
export { serveHttp, createBridgeToken, writeBridgeTokenFile } from './faces/httpFace.js';
export type { HttpFace, HttpFaceOptions } from './faces/httpFace.js';
export { protectStdout } from './faces/protectStdout.js';
export type { ProtectedStdout } from './faces/protectStdout.js';

// The harness interface: your own harness behind a harness type of the workflow.
export { HARNESS_API_VERSION } from './harness/harness.js';
export type {
  AgentHarness,
  HarnessInput,
  HarnessOutput,
  HarnessReport,
  JournaledSteps,
  TokenUsage,
} from './harness/harness.js';
export type { HarnessFactory, HarnessFactories, HarnessRunContext, HarnessConfigOf } from './harness/harnessFor.js';

// Events: what a run journals (`events.jsonl`) and streams.
export { readEvents } from './events/journal.js';
export type {
  RunEvent,
  RunEventType,
  RunEventOf,
  EventBase,
  InvocationEventBase,
  ServiceEventFields,
  RunStatus,
  InvocationState,
  ErrorRecord,
  RunStartedEvent,
  RunResumedEvent,
  RunFinishedEvent,
  InvocationStartedEvent,
  InvocationStateEvent,
  InvocationAttemptFailedEvent,
  InvocationFinishedEvent,
  InvocationCheckpointEvent,
  ServiceReadyEvent,
  ServiceFailedEvent,
  ServiceExitedEvent,
  ServiceProtocolPollutionEvent,
  ServiceCatalogChangedEvent,
  ServiceCatalogRefreshFailedEvent,
  ServiceRestedEvent,
  ServiceRecoveredEvent,
  RunEventCatalogNames,
  ToolCallingEvent,
  ToolCalledEvent,
  ToolTaskAcceptedEvent,
  ToolAskingEvent,
  ToolQuestionEvent,
  WorkflowReconfiguredEvent,
  ModelCalledEvent,
  ModelRetryEvent,
  ModelCall,
  ModelRetry,
  PrestartReadyEvent,
  PrestartCollectedEvent,
  TokenCounts,
  UsageTotals,
} from './events/runEvents.js';
