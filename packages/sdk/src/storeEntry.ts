/**
 * `@scienceevolve/sdk/store`: the data directory (projects, stored sources, accepted versions, operator
 * loads). A light entry point for commands that read or write stored workflows: it loads the workflow
 * layer below it and nothing of MCP, processes or HTTP. Every name here is also exported by the package root (public) or by `internal.ts` (internal).
 */
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
export { loadWorkflow, readWorkflowFile } from './store/workflowLoad.js';
export type { LoadWorkflowOptions, LoadWorkflowResult } from './store/workflowLoad.js';
