/**
 * The cheap commands load only what they need (issue 14): `validate`, `workflow load/show/history/diff`,
 * `status`, `harness-config` and `migrate`, run as the built bin, load no MCP, model, queue, process or
 * HTTP code. Every module the process loads is listed by a preload (test/fixtures/cli/moduleLog.mjs: the
 * ESM load hook, require.cache and process.moduleLoadList); a command that does load the heavy layers
 * (`run`) shows the listing sees them, and `services probe` loads its one bundle.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertGone } from '../fixtures/store/children.js';
import { tempDir } from '../fixtures/store/tempDir.js';
import { labWorkflow } from '../e2e/helpers.js';
import { BIN, ROOT, workflowFixture } from './runCli.js';

const PRELOAD = fileURLToPath(new URL('../fixtures/cli/moduleLog.mjs', import.meta.url));
/** The light path's bundle (`npm run build`; docs/decisions/cli-light-bundle.md). */
const BUNDLE = '/packages/cli/dist/light.bundle.cjs';
const MINIMAL = workflowFixture('minimal.json');

/** What no cheap command may load: package directories (as URL parts) and Node built-ins. */
const FORBIDDEN_PACKAGES = [
  '/node_modules/@modelcontextprotocol/',
  '/node_modules/ai/',
  '/node_modules/@ai-sdk/',
  '/node_modules/bullmq/',
  '/node_modules/ioredis/',
  '/node_modules/supergateway/',
  // OpenTelemetry is loaded only when export is on (OTEL_EXPORTER_OTLP_ENDPOINT), never by a cheap command.
  '/node_modules/@opentelemetry/',
];
const FORBIDDEN_BUILTINS = ['child_process', 'http', 'https', 'http2'];

/** The forbidden modules among `loaded` (package URLs and `builtin:` names). */
function forbiddenAmong(loaded: readonly string[]): string[] {
  return loaded.filter(
    (m) =>
      FORBIDDEN_PACKAGES.some((p) => m.includes(p)) ||
      (m.startsWith('builtin:') && FORBIDDEN_BUILTINS.includes(m.slice('builtin:'.length))),
  );
}

/** This process's environment without OTEL_* (export off unless a test turns it on). */
function withoutOtel(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('OTEL_')));
}

/** Runs the bin with the module-listing preload; returns its exit code, output and every module it loaded. */
async function runListed(
  dir: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string; loaded: string[] }> {
  const log = join(dir, `modules-${Math.random().toString(36).slice(2)}.log`);
  await writeFile(log, '');
  const child = spawn(process.execPath, ['--import', PRELOAD, BIN, ...args], {
    cwd: ROOT,
    env: { ...withoutOtel(), ...env, SCIENCEEVOLVE_MODULE_LOG: log },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  const loaded = [...new Set((await readFile(log, 'utf8')).split('\n').filter(Boolean))];
  return { code, stdout, stderr, loaded };
}

describe('cheap commands load no MCP, process or HTTP code', { concurrency: 2 }, () => {
  test('validate, workflow load/show/history/diff/verify, status, harness-config, migrate, schema', async (t) => {
    const dir = await tempDir(t);
    const dataDir = join(dir, 'data');
    const workspace = join(dir, 'ws');
    const second = join(dir, 'second.json');
    const doc = JSON.parse(await readFile(MINIMAL, 'utf8'));
    doc.agents.main.instructions = 'Answer the requirement briefly.';
    await writeFile(second, JSON.stringify(doc));

    const commands: string[][] = [
      ['validate', MINIMAL, '--json'],
      ['workflow', 'load', MINIMAL, '--data-dir', dataDir, '--project', 'study', '--json'],
      ['workflow', 'load', second, '--data-dir', dataDir, '--project', 'study', '--json'],
      ['workflow', 'show', '--data-dir', dataDir, '--project', 'study', '--json'],
      ['workflow', 'history', '--data-dir', dataDir, '--project', 'study', '--json'],
      ['workflow', 'diff', '1', '2', '--data-dir', dataDir, '--project', 'study', '--json'],
      ['status', '--data-dir', dataDir, '--json'],
      ['harness-config', '--format', 'claude', '--data-dir', dataDir, '--workspace', workspace, '--agent', 'main'],
      ['migrate', '--data-dir', dataDir, '--json'],
      ['workflow', 'verify', '--data-dir', dataDir, '--json'],
      ['schema'],
    ];
    // One after another: `workflow show` needs the loads before it.
    for (const args of commands) {
      const r = await runListed(dir, args);
      const name = args.slice(0, 2).join(' ');
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      // The listing saw the CLI itself and the SDK layers it used, so an empty list cannot pass. The light
      // commands run from the bundle (the CLI and the SDK's light entries in one file), the others from
      // main.js and the SDK's own files.
      const bundled = r.loaded.some((m) => m.endsWith(BUNDLE));
      assert.ok(
        bundled || r.loaded.some((m) => m.endsWith('/packages/cli/dist/main.js')),
        `${name}: the listing saw main.js or the light bundle`,
      );
      assert.ok(bundled || r.loaded.some((m) => m.includes('/packages/sdk/dist/')), `${name}: the listing saw the SDK`);
      assert.deepEqual(forbiddenAmong(r.loaded), [], `${name} loaded forbidden modules`);
      // Not the SDK root either: it imports every layer.
      assert.ok(!r.loaded.some((m) => m.endsWith('/packages/sdk/dist/index.js')), `${name} loaded the SDK root`);
    }
  });

  test('the light commands load one bundled file: no module of the SDK, of zod or of the CLI but the bin and its start', async (t) => {
    const dir = await tempDir(t);
    const dataDir = join(dir, 'data');
    const commands: string[][] = [
      ['validate', MINIMAL],
      ['validate', MINIMAL, '--json'],
      ['status', '--data-dir', dataDir, '--json'],
      ['schema'],
      [
        'harness-config',
        '--format',
        'claude',
        '--data-dir',
        dataDir,
        '--workspace',
        join(dir, 'ws'),
        '--agent',
        'main',
      ],
      ['validate', '--help'],
    ];
    for (const args of commands) {
      const r = await runListed(dir, args);
      const name = args.slice(0, 2).join(' ');
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      const files = r.loaded.filter((m) => m.startsWith('file:') && !m.includes('/test/fixtures/cli/'));
      assert.deepEqual(
        files.map((m) => m.slice(m.indexOf('/packages/'))).sort(),
        ['/packages/cli/bin/scienceevolve.js', '/packages/cli/dist/entry.cjs', '/packages/cli/dist/light.bundle.cjs'],
        `${name} loaded: ${files.join(', ')}`,
      );
    }
  });

  test('the listing sees the heavy layers where a command loads them (run); services probe loads its one bundle', async (t) => {
    const dir = await tempDir(t);
    const workflow = join(dir, 'workflow.json');
    await writeFile(workflow, JSON.stringify(labWorkflow()));
    const script = join(dir, 'script.json');
    await writeFile(
      script,
      JSON.stringify({ agents: { main: [{ call: 'lab__echo', arguments: { text: 'x' } }, { final: 'done' }] } }),
    );
    const workspace = join(dir, 'ws');
    await mkdir(workspace);
    const dataDir = join(dir, 'data');
    const run = await runListed(dir, [
      'run',
      '--data-dir',
      dataDir,
      '--workflow',
      workflow,
      '--workspace',
      workspace,
      '--script',
      script,
      '--json',
      'r',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const forbidden = forbiddenAmong(run.loaded);
    assert.ok(
      forbidden.some((m) => m.includes('/node_modules/@modelcontextprotocol/')),
      `MCP code listed: ${forbidden.join(', ')}`,
    );
    assert.ok(forbidden.includes('builtin:child_process'), 'child_process listed');
    // services probe runs from its own bundle (docs/decisions/probe-bundle.md): the bin, its start and the
    // bundle are the only files it loads — no module of node_modules. That the bundle holds no SDK root and
    // no model library, and evaluates no MCP code before its service's spawn (nor at a usage error), is the
    // bundle's build check (scripts/build-probe.mjs, test/cli/probeBundle.test.ts).
    const files = (loaded: readonly string[]) =>
      loaded
        .filter((m) => m.startsWith('file:') && !m.includes('/test/fixtures/cli/'))
        .map((m) => m.slice(m.indexOf('/packages/')))
        .sort();
    const bundled = [
      '/packages/cli/bin/scienceevolve.js',
      '/packages/cli/dist/entry.cjs',
      '/packages/cli/dist/probe.bundle.cjs',
    ];
    const probe = await runListed(dir, [
      'services',
      'probe',
      '--data-dir',
      dataDir,
      '--workspace',
      workspace,
      '--agent',
      'main',
      '--json',
    ]);
    assert.equal(probe.code, 0, probe.stderr);
    assert.deepEqual(files(probe.loaded), bundled);
    assert.ok(probe.loaded.includes('builtin:child_process'), 'child_process listed');
    const usage = await runListed(dir, ['services', 'probe', '--data-dir', dataDir]);
    assert.equal(usage.code, 2, usage.stderr);
    assert.deepEqual(files(usage.loaded), bundled);
  });

  test('OpenTelemetry is loaded only when export is on: a probe and a run without it load none of its SDK', async (t) => {
    const dir = await tempDir(t);
    const workflow = join(dir, 'workflow.json');
    await writeFile(workflow, JSON.stringify(labWorkflow()));
    const script = join(dir, 'script.json');
    await writeFile(
      script,
      JSON.stringify({ agents: { main: [{ call: 'lab__echo', arguments: { text: 'x' } }, { final: 'done' }] } }),
    );
    const workspace = join(dir, 'ws');
    await mkdir(workspace);
    const dataDir = join(dir, 'data');
    const otel = (loaded: readonly string[]) => loaded.filter((m) => m.includes('/node_modules/@opentelemetry/'));
    const sdk = (loaded: readonly string[]) =>
      otel(loaded).filter((m) => !m.includes('/node_modules/@opentelemetry/api/'));

    // validate never exports, even with the variable set.
    const validate = await runListed(dir, ['validate', workflow, '--json'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/',
    });
    assert.equal(validate.code, 0, validate.stderr);
    assert.deepEqual(otel(validate.loaded), [], 'validate loads no OpenTelemetry package');

    const probe = await runListed(dir, [
      'services',
      'probe',
      '--data-dir',
      dataDir,
      '--workflow',
      workflow,
      '--workspace',
      workspace,
      '--agent',
      'main',
      '--json',
    ]);
    assert.equal(probe.code, 0, probe.stderr);
    // The probe runs from its bundle, whose inside the listing cannot see: that it reaches OpenTelemetry only
    // through the export module is the bundle's build check (scripts/build-probe.mjs, probeBundle.test.ts).
    assert.deepEqual(otel(probe.loaded), [], 'a probe without the variable loads no OpenTelemetry package');

    const runArgs = [
      'run',
      '--data-dir',
      dataDir,
      '--workflow',
      workflow,
      '--workspace',
      workspace,
      '--script',
      script,
      '--json',
      'r',
    ];
    const off = await runListed(dir, runArgs);
    assert.equal(off.code, 0, off.stderr);
    // The AI SDK (loaded by run for the model loops) imports @opentelemetry/api itself; nothing else is loaded.
    assert.deepEqual(sdk(off.loaded), [], 'a run without the variable loads no OpenTelemetry SDK or exporter');

    // With the variable (a collector that is down: the run is unaffected), the listing sees the SDK.
    const on = await runListed(dir, runArgs, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' });
    assert.equal(on.code, 0, on.stderr);
    assert.ok(
      sdk(on.loaded).some((m) => m.includes('/@opentelemetry/sdk-trace-base/')),
      'the tracer SDK listed',
    );
    assert.ok(
      sdk(on.loaded).some((m) => m.includes('/@opentelemetry/exporter-trace-otlp-proto/')),
      'the exporter listed',
    );
  });
});
