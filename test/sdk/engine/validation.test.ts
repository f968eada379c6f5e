/**
 * What a run refuses before it accepts the workflow or starts anything: bad scripts, harnesses this version
 * does not include, a missing script, a Git-on workspace that is not a repository, a workflow without Main.
 * Case by case, each with its error.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runWorkflow } from '../../../packages/sdk/src/engine/runs.js';
import { agent } from '../../fixtures/engine/workflows.js';
import { markedProcesses, sandbox } from './helpers.js';

interface Case {
  name: string;
  workflow?: Record<string, unknown>;
  /** A document, or raw text written to a file. */
  script?: unknown;
  /** Engine options beside the workflow and script. */
  options?: Record<string, unknown>;
  code: string;
  message: RegExp;
}

const plain = { agents: { main: agent([]) } };
const cases: Case[] = [
  { name: 'a script that is not JSON', script: '{"agents": ', code: 'invalid_json', message: /is not JSON/ },
  {
    name: 'a step that is neither call nor final',
    script: { agents: { main: [{ say: 'hi' }] } },
    code: 'invalid_script',
    message: /\$\.agents\.main\[0\]: a step is/,
  },
  {
    name: 'a call with a non-object arguments',
    script: { agents: { main: [{ call: 'x', arguments: [1] }] } },
    code: 'invalid_script',
    message: /\$\.agents\.main\[0\]/,
  },
  { name: 'a script without agents', script: { steps: [] }, code: 'invalid_script', message: /\$\.agents/ },
  { name: 'no script for a scripted agent', code: 'usage', message: /scripted harness, but the run has no script/ },
  {
    name: 'Git-on with a workspace that is not a repository',
    workflow: { orchestration: { git: true }, agents: { main: agent([]) } },
    script: { agents: {} },
    code: 'not_a_git_repo',
    message: /orchestration\.git is true, but the workspace .* is not a git repository/,
  },
  {
    name: 'a workflow without main',
    workflow: { agents: { worker: agent([]) } },
    script: { agents: {} },
    code: 'invalid_workflow',
    message: /no agent named "main"/,
  },
  {
    name: 'a startup budget past the timer ceiling (2^31 ms would fire at once)',
    script: { agents: {} },
    options: { startupBudgetMs: 2 ** 31 },
    code: 'usage',
    message: /startupBudgetMs must be a whole number of milliseconds from 1 to 2147483647/,
  },
  {
    name: 'a grace that is not a whole number',
    script: { agents: {} },
    options: { graceMs: 1.5 },
    code: 'usage',
    message: /graceMs must be a whole number/,
  },
  {
    name: 'a forwarding timeout of 0',
    script: { agents: {} },
    options: { forwardTimeoutMs: 0 },
    code: 'usage',
    message: /forwardTimeoutMs must be a whole number of milliseconds from 1/,
  },
];

for (const c of cases) {
  test(`refused before anything starts: ${c.name}`, async (t) => {
    const box = await sandbox(t);
    let script: string | Record<string, unknown> | undefined;
    if (typeof c.script === 'string') {
      script = join(box.base, 'script.json');
      await writeFile(script, c.script);
    } else script = c.script as Record<string, unknown> | undefined;
    await assert.rejects(
      runWorkflow({ ...box, ...c.options, workflow: c.workflow ?? plain, script, requirement: 'r' }),
      (error: { code: string; message: string; remedy?: string }) => {
        assert.equal(error.code, c.code, error.message);
        assert.match(error.message, c.message);
        assert.ok(error.remedy, 'a remedy');
        return true;
      },
    );
    const project = join(box.dataDir, 'projects', box.project);
    assert.equal(existsSync(join(project, 'workflow', 'accepted.json')), false, 'the workflow was not accepted');
    assert.equal(existsSync(join(project, 'runs')), false, 'no run was recorded');
    assert.deepEqual(markedProcesses(box.project), []);
  });
}
