/**
 * Issue 13, item 3: names that are also Object.prototype's keys (`constructor`, `toString`, `__proto__`,
 * `hasOwnProperty`, `valueOf`) behave like any other name on every path through the CLI — validate,
 * `workflow load` and `show`, `--agent` (`unknown_agent` when absent), `delegate` (a coded tool error,
 * never an invocation left `starting`), and `envFrom` (`missing_env` when the host lacks the variable).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertErrorJson, runCli } from './runCli.js';

const SERVER = "require('node:process').stdin.resume();";
const ABSENT = ['toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];

async function box(t: { after: (fn: () => Promise<void>) => void }) {
  const dir = await mkdtemp(join(tmpdir(), 'se-proto-'));
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const workspace = join(dir, 'ws');
  await mkdir(workspace);
  const file = async (name: string, value: unknown) => {
    const path = join(dir, name);
    await writeFile(path, JSON.stringify(value));
    return path;
  };
  return { dir, dataDir: join(dir, 'data'), workspace, file };
}

test('a definition and an agent named constructor, files named for prototype keys: validate, load, show, --agent', async (t) => {
  const b = await box(t);
  const files = { 's.cjs': SERVER, toString: 'a', valueOf: 'b', hasOwnProperty: 'c', constructor: 'd' };
  const workflow = await b.file('wf.json', {
    agents: { main: {}, constructor: { mcpServers: [{ name: 'c', project: 'constructor' }] } },
    mcpDefinitions: { constructor: { entrypoint: 's.cjs', files } },
  });
  assert.equal((await runCli(['validate', workflow])).code, 0);
  const loaded = await runCli(['workflow', 'load', workflow, '--data-dir', b.dataDir, '--project', 'p', '--json']);
  assert.equal(loaded.code, 0, loaded.stderr);
  assert.deepEqual(Object.keys((loaded.json as { digests: object }).digests), ['constructor']);
  const shown = await runCli(['workflow', 'show', '--data-dir', b.dataDir, '--project', 'p', '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  const stored = JSON.stringify(shown.json);
  for (const name of Object.keys(files))
    assert.ok(stored.includes(`"${name}":`), `${name} is kept in the stored source`);

  for (const agent of ABSENT) {
    const probed = await runCli([
      'services',
      'probe',
      '--data-dir',
      b.dataDir,
      '--project',
      'p',
      '--workspace',
      b.workspace,
      '--agent',
      agent,
      '--json',
    ]);
    assert.equal(probed.code, 1, `${agent}: ${probed.stderr}`);
    const error = assertErrorJson(probed.json, 'unknown_agent');
    assert.match(error.message, new RegExp(`no agent "${agent.replace(/\$/g, '\\$')}"`));
  }
});

test('envFrom {"X": "constructor"} is missing_env when the host has no such variable, never a function text', async (t) => {
  const b = await box(t);
  const workflow = await b.file('wf.json', {
    agents: { main: { mcpServers: [{ name: 'c', project: 'tools' }] } },
    mcpDefinitions: {
      tools: { entrypoint: 's.cjs', files: { 's.cjs': SERVER }, envFrom: { X: 'constructor', Y: 'toString' } },
    },
  });
  const probed = await runCli([
    'services',
    'probe',
    '--data-dir',
    b.dataDir,
    '--workflow',
    workflow,
    '--workspace',
    b.workspace,
    '--agent',
    'main',
    '--json',
  ]);
  assert.equal(probed.code, 1, probed.stderr);
  const service = (
    probed.json as { services: Array<{ state: string; pid: number | null; error: { code: string; message: string } }> }
  ).services[0];
  assert.equal(service?.state, 'failed');
  assert.equal(service?.error.code, 'missing_env');
  assert.match(service?.error.message ?? '', /constructor \(for X\), toString \(for Y\)/);
  assert.doesNotMatch(probed.stdout + probed.stderr, /native code/);
});

test('delegate to a prototype name is unknown_agent for Main; to a worker named constructor it runs; nothing left starting', async (t) => {
  const b = await box(t);
  const workflow = await b.file('wf.json', { agents: { main: {}, constructor: {} } });
  const script = await b.file('script.json', {
    agents: {
      main: [
        ...ABSENT.map((agent) => ({ call: 'scienceevolve__delegate', arguments: { agent, task: 'anything' } })),
        { call: 'scienceevolve__delegate', arguments: { agent: 'constructor', task: 'work' } },
        { final: ABSENT.map((_, i) => `{{${i}}}`).join('|') + `|{{${ABSENT.length}}}` },
      ],
      constructor: [{ final: 'the worker named constructor answered' }],
    },
  });
  const run = await runCli([
    'run',
    '--data-dir',
    b.dataDir,
    '--workflow',
    workflow,
    '--workspace',
    b.workspace,
    '--project',
    'p',
    '--script',
    script,
    '--json',
    'delegate',
  ]);
  assert.equal(run.code, 0, run.stderr);
  const output = (run.json as { output: string }).output;
  const parts = output.split('|');
  for (const [i, agent] of ABSENT.entries()) {
    assert.match(parts[i] ?? '', /unknown_agent/, `${agent}: ${parts[i]}`);
  }
  assert.equal(parts[ABSENT.length], 'the worker named constructor answered');
  const status = await runCli(['status', '--data-dir', b.dataDir, '--project', 'p', '--json']);
  assert.equal(status.code, 0, status.stderr);
  assert.doesNotMatch(JSON.stringify(status.json), /"starting"/);
});
