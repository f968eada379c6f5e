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

export type { ServiceSession, ServiceCatalog, ForwardOptions } from './services/serviceSession.js';
export type { ServiceEvent, ServiceState, CatalogChange } from './services/serviceEvents.js';
export { startStdioService } from './services/stdioService.js';
export type { StdioServiceSpec, StdioServiceSession, StartServiceOptions } from './services/stdioService.js';
export type { EraLookup, EraMemory, EraVerdict } from './services/eraCache.js';
export { connectRemoteService } from './services/remoteService.js';
export type { RemoteServiceSpec, RemoteServiceSession } from './services/remoteService.js';
export { buildServiceEnv } from './services/serviceEnv.js';
export { BWRAP_ENV, decideSandbox, sandboxAvailability, sandboxCommand } from './services/sandbox.js';
export { DEFAULT_PIDS_MAX, MAX_PIDS_MAX, MIN_PIDS_MAX } from './services/processGroup.js';
export type { CollectionMechanism, CollectionPreference } from './services/processGroup.js';
export type {
  SandboxAvailability,
  SandboxDecision,
  SandboxLaunch,
  SandboxPolicy,
  SandboxQuestion,
  SandboxReason,
  ServiceSandbox,
} from './services/sandbox.js';
export { SupervisorClient } from './services/supervisorClient.js';
export type { SupervisorClientOptions } from './services/supervisorClient.js';
export { sweepStrays } from './services/strayProcesses.js';
export type { SweepReport } from './services/strayProcesses.js';

export {
  createSurface,
  serveStdio,
  serveHttp,
  createBridgeToken,
  writeBridgeTokenFile,
  protectStdout,
  httpToStdio,
  HTTP_FACE_PATH,
} from './bridge/index.js';
export type {
  Surface,
  SurfaceOptions,
  LocalService,
  LocalTool,
} from './bridge/index.js';
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
export { DEFAULT_PRESTART_IDLE_MS } from './engine/prestart.js';
export {
  startGateway,
  defaultGatewayLogDir,
  DEFAULT_GATEWAY_PORT,
  GATEWAY_PROJECT_ID,
} from './bridge/index.js';
export type {
  Gateway,
  GatewayEvent,
  GatewayOptions,
  GatewayState,
  HttpToStdioOptions,
  HttpToStdioBridge,
} from './bridge/index.js';

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
export type { AgentHarness, HarnessInput, HarnessOutput, HarnessReport, TokenUsage } from './harness/harness.js';
export {
  createModelLoopHarness,
  ModelLoopCheckpointSchema,
  DEFAULT_MODEL_LOOP_OPTIONS,
} from './harness/modelLoop.js';
export type { ModelLoopConfig, ModelLoopOptions, ModelLoopCheckpoint } from './harness/modelLoop.js';
export { DEFAULT_BASE_URLS, DEFAULT_API_KEY_ENVS } from './harness/modelProviders.js';
export { createCommandHarness, DEFAULT_COMMAND_TIMEOUT_MS } from './harness/commandHarness.js';
export type { CommandHarnessConfig } from './harness/commandHarness.js';
export { COMMAND_PRESETS } from './harness/presets.js';
export { startSocketFace, relayPath } from './bridge/socketFace.js';
export type { SocketFace, SocketFaceOptions } from './bridge/socketFace.js';
