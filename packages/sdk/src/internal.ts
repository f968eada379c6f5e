/**
 * `@scienceevolve/sdk/internal`: what the CLI needs beyond the public API (`index.ts`). Every name here is
 * internal: it may change or go in any release, without a CHANGELOG entry under "breaking". Only the CLI
 * imports this sub-path (lint rule `internal-for-the-cli-only`); code outside this repository should use
 * the package root, whose names docs/api.md documents.
 *
 * Named exports only, so that every addition is visible in review. A name is either public (`index.ts`) or
 * here, never both; each name of a light entry (`<name>Entry.ts`) is in one of the two (a test checks it).
 *
 * @internal
 * @packageDocumentation
 */

// The workflow layer (`@scienceevolve/sdk/workflow`).
export {
  HarnessSchema,
  McpDefinitionSchema,
  McpServerEntrySchema,
  ToolFilterSchema,
  AgentSchema,
  OrchestrationSchema,
  MAX_DURATION_MS,
} from './workflow/workflowSchema.js';
export type { WorkflowInput, McpDefinitionInput } from './workflow/workflowSchema.js';
export { validateWorkflow, validateWorkflowText } from './workflow/validate.js';
export type { ValidationIssue, ValidationResult } from './workflow/validate.js';
export { LIMITS, FIXED_CATALOG_NAMES, RESERVED_ENV_NAMES } from './workflow/limits.js';
export { definitionDigest, canonicalDefinitionJson } from './workflow/digest.js';
export {
  canonicalWorkflowJson,
  LAUNCH_FILE,
  SERVICES_DIR,
  WORKFLOW_BASE_JSON,
  WORKFLOW_YAML,
} from './workflow/folderLayout.js';
export type { FolderIssue } from './workflow/folderLayout.js';
export { workflowJsonSchema, workflowJsonSchemaText, WORKFLOW_JSON_SCHEMA_ID } from './workflow/workflowJsonSchema.js';
export { initFolder, INIT_HARNESSES } from './workflow/initFolder.js';
export type { InitFolderOptions, InitFolderResult, InitHarness } from './workflow/initFolder.js';

// The data dir (`@scienceevolve/sdk/store`).
export { openDataDir, checkDataDir, defaultDataDir, DATA_DIR_FORMAT } from './store/dataDir.js';
export { migrateDataDir } from './store/migrate.js';
export type { MigrateResult } from './store/migrate.js';
export { projectIdForWorkspace, resolveProjectId } from './store/projectId.js';
export { ProjectPaths, openProject } from './store/projectStore.js';
export { storeSource } from './store/sourceStore.js';
export type { StoredSource } from './store/sourceStore.js';
export {
  acceptWorkflow,
  readAccepted,
  requireAccepted,
  readVersion,
  readVersions,
  listVersions,
} from './store/workflowVersions.js';
export type {
  WorkflowVersion,
  AcceptResult,
  AcceptOptions,
  AcceptedBy,
  AcceptedPointer,
} from './store/workflowVersions.js';
export { verifyProjects } from './store/verify.js';
export type { VerifyReport, ProjectVerification, VerifyProblem } from './store/verify.js';
export { openPlainFile, readPlainFile } from './store/plainFile.js';
export { readTextFile } from './store/atomicFile.js';
export type { PlainFile } from './store/plainFile.js';
export { readWorkflowFile } from './store/workflowLoad.js';

// The status report (`@scienceevolve/sdk/status`: the `status --json` document).
export { runStatus } from './engine/runStatus.js';
export type {
  StatusOptions,
  StatusReport,
  ProjectStatus,
  RunStatusReport,
  InvocationStatus,
  LiveService,
  DamagedStore,
  PrestartedSet,
} from './engine/runStatus.js';

// Harness configurations for agent CLIs (`@scienceevolve/sdk/harness-config`).
export { harnessConfig, HARNESS_CONFIG_FORMATS } from './harness/harnessConfig.js';
export { HARNESS_PRESETS } from './schemas/harnessNames.js';
export type { HarnessConfigFormat, HarnessConfigOptions } from './harness/harnessConfig.js';
export { serveCommand } from './harness/serveCommand.js';
export type { ServeCommandOptions } from './harness/serveCommand.js';

// Probing an agent's services, their process limits, the HTTP face's path (`@scienceevolve/sdk/agent-services`).
export { probeServices } from './engine/probeServices.js';
export type { HeldProbe, ProbeOptions, ProbeReport, ProbedService } from './engine/probeServices.js';
export type { SandboxDecision, SandboxReason } from './processes/sandbox.js';
export type { CollectionMechanism } from './processes/processGroup.js';
export type { ServiceEvent, ServiceEventBase, ServiceState } from './sessions/serviceEvents.js';
export { DEFAULT_PIDS_MAX, MAX_PIDS_MAX, MIN_PIDS_MAX } from './processes/processGroup.js';
export { HTTP_FACE_PATH } from './faces/httpFace.js';

// What the heavy commands need: redaction, the viewer's checks, the bridge and gateway, the queue worker.
export { isSecretField, isSecretName, redactUrl } from './redact.js';
export { redactWorkflowUrls } from './reconfigure/workflowView.js';
export { diffWorkflows } from './workflow/diff.js';
export type { WorkflowDiff } from './workflow/diff.js';
export { publicError } from './events/publicError.js';
export { checkRunEvent } from './events/checkEvent.js';
export type { RunEventCheck } from './events/checkEvent.js';
export { httpServerTimeouts } from './faces/httpTimeouts.js';
export { httpToStdio } from './gateway/httpToStdio.js';
export type { HttpToStdioOptions, HttpToStdioBridge } from './gateway/httpToStdio.js';
export { startGateway } from './gateway/gateway.js';
export type { Gateway, GatewayOptions } from './gateway/gateway.js';
export { startQueueWorker } from './worker/queueWorker.js';
export type { QueueWorker, QueueWorkerOptions } from './worker/queueWorker.js';
export { QUEUE_URL_ENV, queueUrlFrom } from './queue/queueUrl.js';
