/**
 * `scienceevolve workflow pack|unpack`, `schema` and `init` as a user runs them: the built CLI in a child
 * process. The scripted folder `init` writes is run for real (a real service; about 2–4 s on 2 cores).
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { RunEvent } from '../../packages/sdk/src/events/runEvents.js';
import { packFolder } from '../../packages/sdk/src/index.js';
import {
  INIT_HARNESSES,
  initFolder,
  validateWorkflowText,
  workflowJsonSchema,
} from '../../packages/sdk/src/internal.js';
import { runCliToEnd } from '../fixtures/engine/cli.js';
import { assertNothingLeft, ofType, sandbox } from '../sdk/engine/helpers.js';

const DEMO = fileURLToPath(new URL('../../examples/workflows/demo', import.meta.url));

test('workflow pack prints the demo workflow.json as checked in; unpack and pack again give it back', async (t) => {
  const box = await sandbox(t);
  const pack = await runCliToEnd(t, ['workflow', 'pack', DEMO]);
  assert.equal(pack.code, 0, pack.stderr);
  assert.equal(pack.stdout, await readFile(join(DEMO, 'workflow.json'), 'utf8'));
  const dir = join(box.base, 'demo');
  const unpack = await runCliToEnd(t, ['workflow', 'unpack', join(DEMO, 'workflow.json'), dir]);
  assert.equal(unpack.code, 0, unpack.stderr);
  assert.match(unpack.stdout, /^wrote 5 files to /);
  assert.equal(
    await readFile(join(dir, 'services/stats/server.cjs'), 'utf8'),
    await readFile(join(DEMO, 'services/stats/server.cjs'), 'utf8'),
  );
  const again = await runCliToEnd(t, ['workflow', 'pack', dir, '--out', join(box.base, 'again.json')]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(await readFile(join(box.base, 'again.json'), 'utf8'), pack.stdout);
  // The folder is never written over.
  const refused = await runCliToEnd(t, ['workflow', 'unpack', join(DEMO, 'workflow.json'), dir, '--json']);
  assert.equal(refused.code, 1);
  assert.equal((refused.json as { error: { code: string } }).error.code, 'folder_not_empty');
});

test('pack errors name the folder file; usage errors exit 2', async (t) => {
  const box = await sandbox(t);
  const flow = join(box.base, 'flow');
  assert.equal((await runCliToEnd(t, ['init', flow])).code, 0);
  await writeFile(join(flow, 'services/text-tools/data.bin'), Buffer.from([0xff, 0x00, 0xfe]));
  const bad = await runCliToEnd(t, ['workflow', 'pack', flow, '--json']);
  assert.equal(bad.code, 1);
  const error = (bad.json as { error: { code: string; data: { errors: Array<{ path: string }> } } }).error;
  assert.equal(error.code, 'binary_file');
  assert.deepEqual(
    error.data.errors.map((e) => e.path),
    ['services/text-tools/data.bin'],
  );
  assert.match(bad.stderr, /services\/text-tools\/data\.bin: is not UTF-8 text/);
  for (const args of [
    ['workflow', 'unpack', 'only-one'],
    ['init', flow, '--harness', 'nope'],
  ]) {
    const usage = await runCliToEnd(t, args);
    assert.equal(usage.code, 2, `${args.join(' ')}: ${usage.stderr}`);
  }
});

test('schema prints the JSON Schema of workflow.json', async (t) => {
  const schema = await runCliToEnd(t, ['schema']);
  assert.equal(schema.code, 0, schema.stderr);
  assert.deepEqual(schema.json, workflowJsonSchema());
});

test('init writes a folder that packs and validates, for every harness, and refuses a non-empty folder', async (t) => {
  const box = await sandbox(t);
  // The CLI for one harness (each CLI start costs a second or more on 2 cores), the SDK for every one.
  const cli = await runCliToEnd(t, ['init', join(box.base, 'claude-cli'), '--harness', 'claude', '--json']);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(cli.json, {
    dir: join(box.base, 'claude-cli'),
    harness: 'claude',
    files: [
      'workflow.yaml',
      'services/text-tools/service.json',
      'services/text-tools/server.cjs',
      'workflow.schema.json',
      'README.md',
    ],
    env: ['ANTHROPIC_API_KEY'],
  });
  for (const harness of INIT_HARNESSES) {
    const dir = join(box.base, harness);
    const init = { json: await initFolder({ dir, harness }) };
    const packed = await packFolder(dir);
    const result = validateWorkflowText(packed.text);
    assert.ok(result.ok, `${harness}: ${JSON.stringify(result.errors)}`);
    const main = result.workflow.agents.main!;
    assert.deepEqual(main.mcpServers, [{ name: 'text-tools', project: 'text-tools' }]);
    const type = main.harness.type;
    if (harness === 'scripted' || harness === 'openai' || harness === 'anthropic' || harness === 'gemini') {
      assert.equal(type, harness);
    } else assert.equal(type, 'command');
    // The variables the harness reads are named in the workflow and in the README.
    const env = (init.json as { env: string[] }).env;
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    for (const name of env) {
      assert.ok(packed.text.includes(`"${name}"`), `${harness}: ${name} in the workflow`);
      assert.ok(readme.includes(name), `${harness}: ${name} in the README`);
    }
    assert.equal(env.length === 0, harness === 'scripted' || harness === 'command', harness);
  }
  const again = await runCliToEnd(t, ['init', join(box.base, 'scripted')]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /folder_not_empty/);
});

test('the scripted folder of init runs as written and answers the requirement: run --workflow <folder>, a real service, nothing left', async (t) => {
  const box = await sandbox(t);
  const flow = join(box.base, 'flow');
  assert.equal((await runCliToEnd(t, ['init', flow])).code, 0);
  // The script passes the requirement ({{task}}) to the service, which counts what follows its ":".
  for (const [requirement, answer] of [
    ['How many words: one two', 'The text has 2 words.'],
    ['How many words: the quick brown fox', 'The text has 4 words.'],
  ] as const) {
    const run = await runCliToEnd(t, [
      'run',
      '--data-dir',
      box.dataDir,
      '--project',
      box.project,
      '--workspace',
      box.workspace,
      '--workflow',
      flow,
      '--script',
      join(flow, 'script.json'),
      '--grace-ms',
      '500',
      '--json',
      requirement,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const doc = run.json as { status: string; output: string; events: RunEvent[] };
    assert.equal(doc.status, 'succeeded');
    assert.equal(doc.output, answer);
    assert.deepEqual(
      ofType(doc.events, 'service.ready').map((e) => e.service),
      ['text-tools'],
    );
    await assertNothingLeft(box.project, doc.events);
  }
});
