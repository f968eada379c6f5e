/**
 * The harness interface carries a version (`HARNESS_API_VERSION`): a harness of another version is refused
 * with `usage` naming both versions before a run accepts or writes anything; one that states the SDK's
 * version, or none (version 1), is accepted.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { type AgentHarness, HARNESS_API_VERSION, isSdkError, runWorkflow } from '../../../packages/sdk/src/index.js';
import { type EngineSandbox, assertNothingLeft, sandbox } from './helpers.js';

const WORKFLOW = { agents: { main: { instructions: 'Answer.', mcpServers: [] } } };

function harness(apiVersion: number | undefined): AgentHarness {
  return {
    ...(apiVersion === undefined ? {} : { apiVersion }),
    run: async () => ({ output: `answered by a version-${apiVersion ?? 'less'} harness` }),
  };
}

async function run(box: EngineSandbox, apiVersion: number | undefined) {
  return runWorkflow({
    dataDir: box.dataDir,
    project: box.project,
    workspace: box.workspace,
    workflow: WORKFLOW,
    requirement: 'Say hello.',
    harnessFactories: { scripted: () => harness(apiVersion) },
  });
}

test('a harness written for another interface version is refused before anything is written', async (t) => {
  const box = await sandbox(t);
  for (const version of [0, HARNESS_API_VERSION + 1]) {
    await assert.rejects(run(box, version), (error: unknown) => {
      assert.ok(isSdkError(error));
      assert.equal(error.code, 'usage');
      assert.match(error.message, new RegExp(`version ${version}; this SDK speaks version ${HARNESS_API_VERSION}`));
      assert.match(error.message, /agent "main"/);
      assert.deepEqual(error.data, { agent: 'main', harness: 'scripted', apiVersion: version });
      return true;
    });
  }
  assert.equal(existsSync(box.dataDir), false, 'nothing was written');
});

test('a harness of the SDK version, or of no stated version, runs', async (t) => {
  const box = await sandbox(t);
  for (const version of [HARNESS_API_VERSION, undefined]) {
    const result = await run(box, version);
    assert.equal(result.status, 'succeeded', JSON.stringify(result.error));
    assert.equal(result.output, `answered by a version-${version ?? 'less'} harness`);
    await assertNothingLeft(box.project, result.events);
  }
});
