/**
 * The tasks extension's schemas load at a session's first task message, not with the session
 * (docs/decisions/probe-bundle.md): a service session — and every probe — that meets no task does not build
 * them. What the session names without loading the extension (its id, the v1 tool-call capability check)
 * agrees with the extension's own.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { hasTaskToolCallCapabilityV1 } from '@modelcontextprotocol/ext-tasks/core/v1';
import { TASKS_EXTENSION_ID_V2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import {
  declaresTaskToolCalls,
  TASK_CLIENT_CAPABILITIES,
  TASKS_EXTENSION_ID,
} from '../../../packages/sdk/src/sessions/tasks.js';
import { assertGone } from '../../fixtures/store/children.js';
import { tempDir } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PRELOAD = fileURLToPath(new URL('../../fixtures/cli/moduleLog.mjs', import.meta.url));

test("the session's copies of the extension's id and v1 tool-call check agree with the extension's", () => {
  assert.equal(TASKS_EXTENSION_ID, TASKS_EXTENSION_ID_V2);
  assert.deepEqual(TASK_CLIENT_CAPABILITIES, { extensions: { [TASKS_EXTENSION_ID_V2]: {} } });
  for (const capabilities of [
    {},
    { requests: {} },
    { requests: { tools: {} } },
    { requests: { tools: { call: {} } } },
    { requests: { tools: { call: null } } },
    { list: {}, cancel: {} },
  ]) {
    assert.equal(
      declaresTaskToolCalls(capabilities as never),
      hasTaskToolCallCapabilityV1(capabilities as never),
      JSON.stringify(capabilities),
    );
  }
});

test('loading the session code (built) loads no module of the tasks extension', async (t) => {
  const dir = tempDir(t);
  const log = join(dir, 'modules.log');
  writeFileSync(log, '');
  const child = spawn(
    process.execPath,
    [
      '--import',
      PRELOAD,
      '--input-type=module',
      '-e',
      "await import('./packages/sdk/dist/sessions/stdioService.js'); await import('./packages/sdk/dist/sessions/tasks.js');",
    ],
    { cwd: ROOT, env: { ...process.env, SCIENCEEVOLVE_MODULE_LOG: log }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  assert.equal(code, 0, stderr);
  const loaded = readFileSync(log, 'utf8').split('\n');
  assert.ok(
    loaded.some((m) => m.endsWith('/packages/sdk/dist/sessions/tasks.js')),
    'the listing sees the session code',
  );
  assert.ok(
    loaded.some((m) => m.includes('/node_modules/@modelcontextprotocol/client/')),
    'the listing sees the MCP client',
  );
  assert.deepEqual(
    loaded.filter((m) => m.includes('/node_modules/@modelcontextprotocol/ext-tasks/')),
    [],
    'no module of the tasks extension',
  );
});
