#!/usr/bin/env node
// Using an agent's services from your own code, with the public API only: load a workflow into a data
// dir, start one agent's services, call a tool through the agent's surface, close. docs/api.md shows this
// file; test/e2e/apiExample.test.ts runs it. Usage: node examples/api/services.mjs <dataDir> <workspace>
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { closeHostSupervisor, isSdkError, loadWorkflow, serveAgentServices } from '@scienceevolve/sdk';

const [dataDir, workspace] = process.argv.slice(2);
if (dataDir === undefined || workspace === undefined) {
  console.error('usage: node examples/api/services.mjs <dataDir> <workspace>');
  process.exit(2);
}
// A workflow folder (workflow.yaml and services/), a workflow.json, or the document itself.
const workflow = fileURLToPath(new URL('../workflows/demo', import.meta.url));

try {
  await mkdir(workspace, { recursive: true }); // the directory the agent's services work in
  // Validates the workflow, stores every service's source and accepts it as the project's next version.
  const loaded = await loadWorkflow({ dataDir, workspace, workflow });
  console.log(`project ${loaded.project}: version ${loaded.version}`);

  // Starts the analyst's services (here: `stats`) as an invocation would, and builds its surface.
  const analyst = await serveAgentServices({ dataDir, project: loaded.project, workspace, agent: 'analyst' });
  try {
    console.log(`tools: ${analyst.surface.tools.map((tool) => tool.name).join(', ')}`);
    const result = await analyst.surface.callTool('stats__summarize', { numbers: [3, 5, 8, 13] });
    const text = result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
    console.log(`${result.isError ? 'error' : 'result'}: ${text}`);
  } finally {
    await analyst.close(); // collects every service process of the agent
  }
} catch (error) {
  // Every failure a user can cause is an SdkError with a stable code and a remedy.
  console.error(isSdkError(error) ? `${error.code}: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  await closeHostSupervisor(); // the supervisor is shared by every service of the process
}
