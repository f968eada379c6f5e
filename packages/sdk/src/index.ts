/** The public API of `@scienceevolve/sdk`: named exports only, never `export *`. A test pins this list. */
export { SdkError, isSdkError, toSdkError, ERROR_CODES } from './errors.js';
export type { ErrorCode, SdkErrorOptions } from './errors.js';

export {
  WorkflowSchema,
  McpDefinitionSchema,
  McpServerEntrySchema,
  AgentSchema,
  HarnessSchema,
  OrchestrationSchema,
} from './workflow/workflowSchema.js';
export type {
  Workflow,
  WorkflowInput,
  McpDefinition,
  McpDefinitionInput,
  McpServerEntry,
  Agent,
  Harness,
  Orchestration,
} from './workflow/workflowSchema.js';
export { validateWorkflow, validateWorkflowText, parseWorkflow } from './workflow/validate.js';
export type { ValidationIssue, ValidationResult } from './workflow/validate.js';
export { LIMITS, FIXED_CATALOG_NAMES, RESERVED_ENV_NAMES } from './workflow/limits.js';
export { definitionDigest, canonicalDefinitionJson } from './workflow/digest.js';
export { diffWorkflows } from './workflow/diff.js';
export type { WorkflowDiff } from './workflow/diff.js';

export { openDataDir, migrateDataDir, defaultDataDir, DATA_DIR_FORMAT } from './store/dataDir.js';
export { projectIdForWorkspace, resolveProjectId } from './store/projectId.js';
export { ProjectPaths, openProject } from './store/projectStore.js';
export { storeSource } from './store/sourceStore.js';
export type { StoredSource } from './store/sourceStore.js';
export { acceptWorkflow, readAccepted, readVersion, listVersions } from './store/workflowVersions.js';
export type { WorkflowVersion, AcceptResult, AcceptOptions, AcceptedBy } from './store/workflowVersions.js';
export { loadWorkflow, readWorkflowFile } from './store/workflowLoad.js';
export type { LoadWorkflowOptions, LoadWorkflowResult } from './store/workflowLoad.js';
