/**
 * The public API of `@scienceevolve/sdk`. A test pins this list. Named exports only, with one exception: the
 * light entries (`workflowEntry.ts`, `storeEntry.ts`, `statusEntry.ts`, `harnessConfigEntry.ts`, each a
 * named list behind a sub-path export) are re-exported whole, so each of their names is listed once, there.
 */
export * from './workflowEntry.js';
export { isSecretName, redactUrl } from './redact.js';

export * from './storeEntry.js';

export {
  startInvocation,
  startInvocationServices,
  newInvocationId,
  DEFAULT_STARTUP_BUDGET_MS,
} from './invocation/invocation.js';
export type { InvocationOptions, InvocationServices, ServiceOutcome } from './invocation/invocation.js';
export { planServices } from './invocation/plan.js';
export type { PlannedService, PlannedProjectService, PlannedRemoteService } from './invocation/plan.js';
export { hostSupervisor, closeHostSupervisor, sweepProjectStrays } from './invocation/hostSupervision.js';

export type { ServiceSession, ServiceCatalog, ForwardOptions } from './sessions/serviceSession.js';
export type { ServiceEvent, ServiceState, CatalogChange } from './sessions/serviceEvents.js';
export { startStdioService } from './sessions/stdioService.js';
export type { StdioServiceSpec, StdioServiceSession, StartServiceOptions } from './sessions/stdioService.js';
export type { EraLookup, EraMemory, EraVerdict, ListedCounts } from './sessions/eraCache.js';
export { connectRemoteService } from './sessions/remoteService.js';
export type { RemoteServiceSpec, RemoteServiceSession } from './sessions/remoteService.js';
export { buildServiceEnv } from './processes/serviceEnv.js';
export { BWRAP_ENV, decideSandbox, sandboxAvailability, sandboxCommand } from './processes/sandbox.js';
export { DEFAULT_PIDS_MAX, MAX_PIDS_MAX, MIN_PIDS_MAX } from './processes/processGroup.js';
export type { CollectionMechanism, CollectionPreference } from './processes/processGroup.js';
export type {
  SandboxAvailability,
  SandboxDecision,
  SandboxLaunch,
  SandboxPolicy,
  SandboxQuestion,
  SandboxReason,
  ServiceSandbox,
} from './processes/sandbox.js';
export { SupervisorClient } from './processes/supervisorClient.js';
export type { SupervisorClientOptions } from './processes/supervisorClient.js';
export { sweepStrays } from './processes/strayProcesses.js';
export type { SweepReport } from './processes/strayProcesses.js';

export { createSurface } from './surface/surface.js';
export type { Surface, SurfaceOptions, LocalService, LocalTool } from './surface/surface.js';
export { serveStdio } from './faces/stdioFace.js';
export { serveHttp, createBridgeToken, writeBridgeTokenFile, HTTP_FACE_PATH } from './faces/httpFace.js';
export { protectStdout } from './faces/protectStdout.js';
export { httpToStdio } from './gateway/httpToStdio.js';
export { DEFAULT_HTTP_TIMEOUTS, httpServerTimeouts } from './faces/httpTimeouts.js';
export type { HttpTimeouts } from './faces/httpTimeouts.js';
export type { HttpFace, HttpFaceOptions } from './faces/httpFace.js';
export * from './harnessConfigEntry.js';

export { applyWorkflow } from './reconfigure/applyWorkflow.js';
export { redactWorkflowUrls } from './reconfigure/workflowView.js';
export type { ApplyResult, ApplyOptions } from './reconfigure/applyWorkflow.js';
export { fixedCatalog, FIXED_CATALOG_SERVICE } from './engine/fixedCatalog.js';
export { probeServices, serveAgentServices } from './engine/agentServices.js';
export type {
  ProbeReport,
  ProbedService,
  HeldProbe,
  ServedAgent,
  ServeAgentOptions,
  AgentServicesOptions,
} from './engine/agentServices.js';
export { EventJournal, readEvents } from './events/journal.js';
export type { PublicEvent, EventSink } from './events/journal.js';
export type {
  RunEvent,
  RunEventType,
  RunEventOf,
  RunEventInput,
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
  CatalogNames,
  ToolCallingEvent,
  ToolCalledEvent,
  WorkflowReconfiguredEvent,
  ModelCalledEvent,
  ModelRetryEvent,
  PrestartReadyEvent,
  PrestartCollectedEvent,
} from './events/runEvents.js';
export { checkRunEvent, type RunEventCheck } from './events/checkEvent.js';
export { DEFAULT_PRESTART_IDLE_MS } from './engine/prestart.js';
export { startGateway, defaultGatewayLogDir, DEFAULT_GATEWAY_PORT, GATEWAY_PROJECT_ID } from './gateway/gateway.js';
export type { Gateway, GatewayEvent, GatewayOptions, GatewayState } from './gateway/gateway.js';
export type { HttpToStdioOptions, HttpToStdioBridge } from './gateway/httpToStdio.js';

export { startRun, runWorkflow, resumeRuns } from './engine/runs.js';
export type { RunOptions, RunResult, RunHandle, ResumeOptions, EngineOptions } from './engine/runs.js';
export { startQueueWorker } from './worker/queueWorker.js';
export type { QueueWorker, QueueWorkerOptions } from './worker/queueWorker.js';
export { parseQueueUrl, QUEUE_URL_ENV, queueUrlFrom, redactUrlsIn } from './queue/queueUrl.js';
export type { QueueAddress, QueueUrlOptions, QueueUrlSource } from './queue/queueUrl.js';
export { DEFAULT_QUEUE_NAME } from './queue/queueClient.js';
export type { QueueSettings } from './queue/queueClient.js';
export { CONSUMER_RANGES } from './queue/queueConsumer.js';
export type { ConsumerSettings } from './queue/queueConsumer.js';
export { TOOL_SUMMARY_BYTES } from './engine/toolJournal.js';
export * from './statusEntry.js';
export type {
  RunRecord,
  RunStatus,
  InvocationRecord,
  InvocationState,
  AttemptRecord,
  ErrorRecord,
  CorruptRun,
} from './engine/runRecord.js';
export { EventStream } from './events/eventStream.js';
export { publicError } from './events/publicError.js';
export { ScriptedHarness, ScriptSchema, parseScript, readScriptFile } from './harness/scriptedHarness.js';
export type { Script, ScriptStep, ScriptPositions } from './harness/scriptedHarness.js';
export { harnessFor, AVAILABLE_HARNESS_TYPES } from './harness/harnessFor.js';
export type { HarnessFactory, HarnessFactories, HarnessRunContext, HarnessConfigOf } from './harness/harnessFor.js';
export type {
  AgentHarness,
  HarnessInput,
  HarnessOutput,
  HarnessReport,
  JournaledSteps,
  TokenUsage,
} from './harness/harness.js';
export { createModelLoopHarness } from './harness/modelLoopLoader.js';
export { ModelLoopCheckpointSchema, DEFAULT_MODEL_LOOP_OPTIONS } from './harness/modelLoopLight.js';
export type { ModelLoopConfig, ModelLoopOptions, ModelLoopCheckpoint } from './harness/modelLoopLight.js';
export { DEFAULT_BASE_URLS, DEFAULT_API_KEY_ENVS } from './harness/modelLoopLight.js';
export { createCommandHarness, DEFAULT_COMMAND_TIMEOUT_MS } from './harness/commandHarness.js';
export type { CommandHarnessConfig } from './harness/commandHarness.js';
export { COMMAND_PRESETS } from './harness/presets.js';
export { startSocketFace, relayPath } from './faces/socketFace.js';
export type { SocketFace, SocketFaceOptions } from './faces/socketFace.js';
