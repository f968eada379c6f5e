/**
 * What the viewer reads of versions: a version's workflow and its diff with every URL redacted, as Main's
 * `get_workflow` shows them (a token in a remote entry's query, a model endpoint or `allowedRemoteUrls`
 * never reaches the page), and a version file that cannot be read listed as damaged, not skipped.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { ViewerData } from '../../packages/cli/src/ui/viewerData.js';
import { acceptWorkflow } from '../../packages/sdk/src/store/workflowVersions.js';
import { openProject } from '../../packages/sdk/src/store/projectStore.js';
import { minimalWorkflow } from '../fixtures/workflows/documents.js';
import { tempDir } from '../fixtures/store/tempDir.js';

test('a version and its diff are shown with every URL redacted', async (t) => {
  const dataDir = await tempDir(t);
  const paths = await openProject(dataDir, 'p');
  await acceptWorkflow(paths, minimalWorkflow());
  const secretUrl = 'https://mcp.example.com/mcp?token=s3cret-viewer-value';
  const next = minimalWorkflow() as {
    orchestration?: unknown;
    agents: { main: { mcpServers: unknown[] } };
  };
  next.orchestration = { allowedRemoteUrls: [secretUrl] };
  next.agents.main.mcpServers.push({ name: 'remote', url: secretUrl });
  await acceptWorkflow(paths, next);
  const data = new ViewerData(dataDir);
  const shown = JSON.stringify(await data.version('p', '2'));
  assert.ok(!shown.includes('s3cret-viewer-value'), shown);
  assert.ok(shown.includes('https://mcp.example.com/mcp?token=REDACTED'), shown);
});

test('a version file that cannot be read is listed as damaged, not skipped', async (t) => {
  const dataDir = await tempDir(t);
  const paths = await openProject(dataDir, 'p');
  await acceptWorkflow(paths, minimalWorkflow());
  const next = minimalWorkflow() as { orchestration?: unknown };
  next.orchestration = { invocationRetries: 2 };
  await acceptWorkflow(paths, next);
  await writeFile(paths.versionPath(2), '{"torn":');
  const [project] = await new ViewerData(dataDir).projects();
  assert.ok(project !== undefined);
  // The version list checks every file of the chain: it fails as a whole, and says which file.
  assert.deepEqual(project.versions, []);
  assert.equal(project.corruptVersions.length, 1, JSON.stringify(project.corruptVersions));
  assert.match(project.corruptVersions[0]!.message, /2\.json was changed outside ScienceEvolve/);
});
