/**
 * `@scienceevolve/sdk/workflow`: the workflow layer alone (schema, validation, digests, diffs, limits).
 * A light entry point for tools that only read `workflow.json`: it loads zod and nothing of MCP, processes
 * or HTTP. Every name here is also exported by the package root (public) or by `internal.ts` (internal).
 */
export { SdkError, isSdkError, toSdkError, ERROR_CODES } from './errors.js';
export type { ErrorCode, SdkErrorOptions } from './errors.js';
export {
  WorkflowSchema,
  McpDefinitionSchema,
  McpServerEntrySchema,
  ToolFilterSchema,
  AgentSchema,
  HarnessSchema,
  OrchestrationSchema,
  MAX_DURATION_MS,
} from './workflow/workflowSchema.js';
export type { WorkflowInput, McpDefinitionInput } from './workflow/workflowSchema.js';
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
export { validateWorkflow, validateWorkflowText, parseWorkflow } from './workflow/validate.js';
export type { ValidationIssue, ValidationResult } from './workflow/validate.js';
export { LIMITS, FIXED_CATALOG_NAMES, RESERVED_ENV_NAMES } from './workflow/limits.js';
export { definitionDigest, canonicalDefinitionJson } from './workflow/digest.js';
export { diffWorkflows } from './workflow/diff.js';
export type { WorkflowDiff } from './workflow/diff.js';
export { packFolder, packServiceFolder } from './workflow/packFolder.js';
export type { PackedFolder } from './workflow/packFolder.js';
export { unpackWorkflow } from './workflow/unpackFolder.js';
export type { UnpackedFolder } from './workflow/unpackFolder.js';
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
