import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openProject } from '../../../packages/sdk/src/store/projectStore.ts';
import { loadWorkflow } from '../../../packages/sdk/src/store/workflowLoad.ts';
import { readAccepted, readVersion } from '../../../packages/sdk/src/store/workflowVersions.ts';
import { definitionDigest } from '../../../packages/sdk/src/workflow/digest.ts';
import { assertAllGone, tempDir } from '../invocation/helpers.ts';

const LOOP = new URL('../../fixtures/reconfigure/applyLoop.mjs', import.meta.url).pathname;
/**
 * 20 trials in `npm test` (each spawns a writer: ~0.3 s on 2 cores); `SE_CRASH_TRIALS=200 node
 * scripts/test.mjs test/sdk/reconfigure/crashAtomicity.test.ts` for the full run the issue asks for.
 */
const TRIALS = Number(process.env.SE_CRASH_TRIALS ?? 20);
const PARALLEL = 2;

async function oneTrial(dataDir: string, project: string, seed: number): Promise<number> {
  const child = spawn(process.execPath, [LOOP, dataDir, project], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`writer exited with ${code}`)));
  });
  // A kill point spread over several applies (each takes 50–150 ms here: 21 files and 2 version files fsynced).
  await new Promise((r) => setTimeout(r, (seed * 7919) % 400));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

async function checkConsistent(dataDir: string, project: string): Promise<number> {
  const paths = await openProject(dataDir, project);
  const accepted = (await readAccepted(paths))!;
  assert.ok(accepted, 'an accepted version exists');
  const versionFile = await readVersion(paths, accepted.version);
  assert.deepEqual(versionFile, accepted, 'accepted.json is exactly its version file');
  for (const [name, definition] of Object.entries(accepted.workflow.mcpDefinitions)) {
    assert.equal(accepted.digests[name], definitionDigest(definition));
    const dir = paths.sourceDir(accepted.digests[name]!, name);
    for (const [file, content] of Object.entries(definition.files)) {
      assert.equal(readFileSync(join(dir, file), 'utf8'), content, `${name}/${file} complete`);
    }
  }
  // No partial version directory is visible: every digest directory holds a complete source.
  for (const digest of readdirSync(paths.mcpDir).filter((d) => !d.startsWith('.'))) {
    for (const sub of readdirSync(join(paths.mcpDir, digest))) {
      assert.equal(readdirSync(join(paths.mcpDir, digest, sub, 'data')).length, 20, `${digest}/${sub} complete`);
    }
  }
  return accepted.version;
}

test(`SIGKILL at random points of apply never leaves a mixed version (${TRIALS} trials)`, {
  timeout: 600_000,
}, async (t) => {
  const pids: number[] = [];
  let next = 0;
  const worker = async (w: number) => {
    const dataDir = tempDir(t, 'se-crash-');
    const project = `crash-${w}`;
    let last = 0;
    while (next < TRIALS) {
      const trial = next++;
      pids.push(await oneTrial(dataDir, project, trial));
      const version = await checkConsistent(dataDir, project);
      assert.ok(version >= last, 'versions never go back');
      last = version;
    }
    // The next load works and lands on top.
    const result = await loadWorkflow({
      dataDir,
      project,
      workflow: { agents: { main: {} }, mcpDefinitions: {} },
    });
    assert.equal(result.version, last + 1);
  };
  await Promise.all(Array.from({ length: PARALLEL }, (_, w) => worker(w)));
  await assertAllGone(pids);
});
