/**
 * A failing service says why and what to do (issue 27, item 1): `services probe` and `run` of the built CLI
 * against a real service that exits at start, printing a mapped secret to stderr first. Each failure is one
 * line, followed by the end of the service's stderr (the secret redacted) and a `fix:` line; `missing_env`
 * (an empty mapped variable included) fails at once, without a second attempt. Nothing is left running.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { BIN, assertNothingLeft, spawnNode, tempDir } from './helpers.js';

const SECRET = 'sk-test-3f9a7c1e55d0';

/** Fails at once: a file it requires is not there; it prints why, and (a mistake) the mapped token. */
const CRASHES = `try {
  require('./config.json');
} catch (error) {
  console.error(error.message);
  console.error('starting with token ' + process.env.API_TOKEN);
  process.exit(1);
}
`;
function workflowDir(t: TestContext): { dir: string; workflow: string; workspace: string; script: string } {
  const dir = tempDir(t, 'se-failure-');
  const workflow = join(dir, 'workflow.json');
  writeFileSync(
    workflow,
    JSON.stringify({
      agents: { main: { instructions: 'x', mcpServers: [{ name: 'broken', project: 'broken' }] } },
      mcpDefinitions: {
        broken: { entrypoint: 'server.cjs', files: { 'server.cjs': CRASHES }, envFrom: { API_TOKEN: 'SE_TEST_TOKEN' } },
      },
    }),
  );
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ agents: { main: [{ final: 'done' }] } }));
  mkdirSync(join(dir, 'ws'));
  return { dir, workflow, workspace: join(dir, 'ws'), script };
}

async function cli(t: TestContext, args: string[], env: NodeJS.ProcessEnv) {
  const spawned = spawnNode(t, [BIN, ...args], { env: { ...process.env, ...env } });
  spawned.child.stdin?.end();
  const { code } = await spawned.exited;
  return { code, stdout: spawned.stdout(), stderr: spawned.stderr() };
}

function count(text: string, pattern: RegExp): number {
  return text.match(new RegExp(pattern.source, 'g'))?.length ?? 0;
}

// 90 s: each case starts the CLI, its supervisor and one or two service processes on a shared 2-core machine.
test('services probe: one line for the failure, the end of its stderr (secret redacted) and a fix', {
  timeout: 90_000,
}, async (t) => {
  const w = workflowDir(t);
  const out = await cli(
    t,
    [
      'services',
      'probe',
      '--data-dir',
      join(w.dir, 'data'),
      '--workflow',
      w.workflow,
      '--workspace',
      w.workspace,
      '--agent',
      'main',
    ],
    { SE_TEST_TOKEN: SECRET },
  );
  const all = out.stdout + out.stderr;
  assert.equal(out.code, 1, all);
  assert.equal(count(all, /failed \[service_exited\]/), 1, `one line per failure:\n${all}`);
  assert.doesNotMatch(out.stderr, /^failed: /m, 'the progress line does not repeat the report');
  assert.match(out.stdout, /broken: failed \[service_exited\]: service "broken" exited with code 1/);
  assert.match(out.stdout, /stderr of broken \(its last lines\):\n(.*\n)*\s+\| Cannot find module '\.\/config\.json'/);
  assert.match(out.stdout, /\| starting with token REDACTED/);
  assert.match(out.stdout, /\s+fix: fix what the end of its stderr names/);
  assert.ok(!all.includes(SECRET), `the mapped value never shows:\n${all}`);
  await assertNothingLeft({ dir: w.dir });
});

test('run: one line per failed attempt, then the error with the end of the stderr and a fix', {
  timeout: 90_000,
}, async (t) => {
  const w = workflowDir(t);
  const out = await cli(
    t,
    [
      'run',
      '--data-dir',
      join(w.dir, 'data'),
      '--workflow',
      w.workflow,
      '--workspace',
      w.workspace,
      '--script',
      w.script,
      'go',
    ],
    { SE_TEST_TOKEN: SECRET },
  );
  const all = out.stdout + out.stderr;
  assert.equal(out.code, 1, all);
  // The default invocationRetries is 1: two attempts, each with one line for the service and one for the attempt.
  assert.equal(count(out.stderr, /\[main\] service broken failed: /), 2, all);
  assert.match(out.stderr, /\[main\] attempt 1 failed \(service_exited, above\) — retrying with fresh services\n/);
  assert.match(out.stderr, /\[main\] attempt 2 failed \(service_exited, above\)\n/);
  assert.match(out.stderr, /error \[service_exited\]: service "broken" exited with code 1 during initialize/);
  assert.match(out.stderr, /\| Cannot find module '\.\/config\.json'/);
  assert.match(out.stderr, /\| starting with token REDACTED/);
  assert.match(out.stderr, /\n {2}fix: fix what the end of its stderr names/);
  assert.ok(!all.includes(SECRET), `the mapped value never shows:\n${all}`);
  await assertNothingLeft({ dir: w.dir });
});

for (const [name, value] of [
  ['unset', undefined],
  ['empty', ''],
] as const) {
  test(`run: a mapped variable that is ${name} is missing_env, not retried`, { timeout: 90_000 }, async (t) => {
    const w = workflowDir(t);
    const base = { ...process.env };
    delete base.SE_TEST_TOKEN;
    const spawned = spawnNode(
      t,
      [
        BIN,
        'run',
        '--data-dir',
        join(w.dir, 'data'),
        '--workflow',
        w.workflow,
        '--workspace',
        w.workspace,
        '--script',
        w.script,
        'go',
      ],
      { env: value === undefined ? base : { ...base, SE_TEST_TOKEN: value } },
    );
    spawned.child.stdin?.end();
    const { code } = await spawned.exited;
    const stderr = spawned.stderr();
    assert.equal(code, 1, stderr);
    assert.match(
      stderr,
      /\[main\] attempt 1 failed: service "broken" cannot start: host variable SE_TEST_TOKEN \(for API_TOKEN\) is not set or empty\n/,
    );
    assert.doesNotMatch(stderr, /retrying|attempt 2/, 'a failure that can only repeat is not retried');
    assert.match(stderr, /error \[missing_env\]: .*SE_TEST_TOKEN/);
    assert.match(stderr, /\n {2}fix: set SE_TEST_TOKEN to a non-empty value/);
    await assertNothingLeft({ dir: w.dir });
  });
}
