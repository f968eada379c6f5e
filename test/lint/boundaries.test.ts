/**
 * The import-boundary check of `npm run lint` (dependency-cruiser, .dependency-cruiser.cjs): it fails on a
 * miniature monorepo with one import of every forbidden kind, naming the rule of each, passes on the same
 * tree without them, and passes on the real tree. The command is read from package.json's `lint:imports`
 * script, so this test runs exactly what lint runs.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertGone } from '../fixtures/store/children.js';
import { tempDir } from '../fixtures/store/tempDir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

/** The arguments `npm run lint:imports` passes to depcruise (after its `tsc --build &&`). */
function lintArgs(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const script = manifest.scripts['lint:imports'];
  assert.ok(script !== undefined, 'package.json has a lint:imports script');
  const command = script
    .split('&&')
    .map((part) => part.trim())
    .find((part) => part.startsWith('depcruise '));
  assert.ok(command !== undefined, `lint:imports runs depcruise: ${script}`);
  return command.split(/\s+/).slice(1);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs depcruise in `cwd` and proves its process gone. Timeout 60 s: one run parses every file with the
 * TypeScript compiler, a few seconds of CPU that a busy 2-core machine can stretch.
 */
async function depcruise(cwd: string, args: string[]): Promise<Run> {
  const child = spawn(process.execPath, [DEPCRUISE, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  clearTimeout(timer);
  assert.ok(child.pid !== undefined);
  await assertGone(child.pid);
  return { code, stdout, stderr };
}

/** Every import of this tree is allowed by the picture. */
const CLEAN: Record<string, string> = {
  'packages/supervisor/src/protocol.ts': 'export const PROTOCOL = 1;\n',
  'packages/sdk/src/errors.ts': 'export class SdkError extends Error {}\n',
  'packages/sdk/src/workflow/workflowSchema.ts': "import '../errors.js';\n",
  'packages/sdk/src/store/workflowVersions.ts':
    "import '../workflow/workflowSchema.js';\nimport '@scienceevolve/supervisor/protocol';\n",
  'packages/sdk/src/processes/processGroup.ts':
    "import '../workflow/workflowSchema.js';\nimport '../errors.js';\nimport '@scienceevolve/supervisor/protocol';\n",
  'packages/sdk/src/sessions/serviceSession.ts':
    "import '../processes/processGroup.js';\nimport '../workflow/workflowSchema.js';\nimport '../errors.js';\n",
  'packages/sdk/src/invocation/invocation.ts':
    "import '../sessions/serviceSession.js';\nimport '../store/workflowVersions.js';\n",
  'packages/sdk/src/surface/surface.ts':
    "import '../sessions/serviceSession.js';\nimport '../store/workflowVersions.js';\n",
  'packages/sdk/src/faces/stdioFace.ts': "import '../surface/surface.js';\n",
  'packages/sdk/src/gateway/gateway.ts':
    "import '../faces/stdioFace.js';\nimport '../sessions/serviceSession.js';\nimport '../processes/processGroup.js';\n",
  'packages/sdk/src/harness/harness.ts':
    "import type {} from '../surface/surface.js';\nimport '../faces/stdioFace.js';\nimport '../processes/processGroup.js';\n",
  'packages/sdk/src/reconfigure/applyWorkflow.ts': "import '../store/workflowVersions.js';\n",
  'packages/sdk/src/events/journal.ts': "import '../store/workflowVersions.js';\n",
  'packages/sdk/src/engine/runs.ts': [
    "import '../harness/harness.js';",
    "import '../invocation/invocation.js';",
    "import '../surface/surface.js';",
    "import '../reconfigure/applyWorkflow.js';",
    "import '../events/journal.js';",
    "import './runLoop.js';",
    '',
  ].join('\n'),
  // A cycle closed by a type-only import is allowed: it is gone at run time.
  'packages/sdk/src/engine/runLoop.ts': "import '../errors.js';\nimport type {} from './runs.js';\n",
  'packages/sdk/src/index.ts': "import './engine/runs.js';\nimport './gateway/gateway.js';\nimport './errors.js';\n",
  'packages/sdk/src/internal.ts': "import './store/workflowVersions.js';\nimport './gateway/gateway.js';\n",
  'packages/cli/src/args.ts': "import 'node:util';\n",
  'packages/cli/src/main.ts':
    "import '@scienceevolve/sdk';\nimport '@scienceevolve/sdk/internal';\nimport './args.js';\nimport 'node:path';\n",
  // Examples and scripts are written as a user would: the public root only.
  'examples/usesRoot.mjs': "import '@scienceevolve/sdk';\n",
  'scripts/usesRoot.mjs': "import '@scienceevolve/sdk';\n",
  'packages/cli/bin/scienceevolve.js': "import '../dist/main.js';\n",
  // The light table reaches the SDK only through its light entries.
  'packages/cli/src/light.ts': "export const load = () => import('./commands/validate.js');\n",
  'packages/cli/src/commands/validate.ts': "import '@scienceevolve/sdk/workflow';\nimport '../args.js';\n",
};

/** One import of every forbidden kind, each with the violations it must give (`rule from → to`). */
const FORBIDDEN: Array<{ file: string; source: string; expect: string[] }> = [
  {
    file: 'packages/sdk/src/workflow/upward.ts',
    source: "import '../engine/runs.js';\n",
    expect: ['layer-workflow packages/sdk/src/workflow/upward.ts → packages/sdk/src/engine/runs.ts'],
  },
  {
    file: 'packages/sdk/src/surface/wiresInvocation.ts',
    source: "import '../invocation/invocation.js';\n",
    expect: ['layer-surface packages/sdk/src/surface/wiresInvocation.ts → packages/sdk/src/invocation/invocation.ts'],
  },
  {
    file: 'packages/sdk/src/invocation/wiresSurface.ts',
    source: "import type {} from '../surface/surface.js';\n",
    expect: ['layer-invocation packages/sdk/src/invocation/wiresSurface.ts → packages/sdk/src/surface/surface.ts'],
  },
  {
    file: 'packages/sdk/src/surface/servesItself.ts',
    source: "import '../faces/stdioFace.js';\n",
    expect: ['layer-surface packages/sdk/src/surface/servesItself.ts → packages/sdk/src/faces/stdioFace.ts'],
  },
  {
    file: 'packages/sdk/src/faces/runsGateway.ts',
    source: "import '../gateway/gateway.js';\n",
    expect: ['layer-faces packages/sdk/src/faces/runsGateway.ts → packages/sdk/src/gateway/gateway.ts'],
  },
  {
    file: 'packages/sdk/src/processes/speaksMcp.ts',
    source: "import type {} from '../sessions/serviceSession.js';\n",
    expect: ['layer-processes packages/sdk/src/processes/speaksMcp.ts → packages/sdk/src/sessions/serviceSession.ts'],
  },
  {
    file: 'packages/sdk/src/harness/journals.ts',
    source: "import '../events/journal.js';\n",
    expect: ['layer-harness packages/sdk/src/harness/journals.ts → packages/sdk/src/events/journal.ts'],
  },
  {
    file: 'packages/sdk/src/sessions/readsStore.ts',
    source: "import '../store/workflowVersions.js';\n",
    expect: ['layer-sessions packages/sdk/src/sessions/readsStore.ts → packages/sdk/src/store/workflowVersions.ts'],
  },
  {
    file: 'packages/sdk/src/store/startsServices.ts',
    source: "import '../sessions/serviceSession.js';\n",
    expect: ['layer-store packages/sdk/src/store/startsServices.ts → packages/sdk/src/sessions/serviceSession.ts'],
  },
  {
    file: 'packages/sdk/src/reconfigure/probes.ts',
    source: "import '../invocation/invocation.js';\n",
    expect: ['layer-reconfigure packages/sdk/src/reconfigure/probes.ts → packages/sdk/src/invocation/invocation.ts'],
  },
  {
    // errors.ts is the bottom: any import from it is upward, and here it closes a cycle as well.
    file: 'packages/sdk/src/errors.ts',
    source: "import './workflow/workflowSchema.js';\nexport class SdkError extends Error {}\n",
    expect: [
      'layer-errors packages/sdk/src/errors.ts → packages/sdk/src/workflow/workflowSchema.ts',
      'no-circular packages/sdk/src/errors.ts → packages/sdk/src/workflow/workflowSchema.ts',
    ],
  },
  {
    file: 'packages/sdk/src/cluster/worker.ts',
    source: "import '../errors.js';\n",
    expect: ['sdk-folder-has-a-layer packages/sdk/src/cluster/worker.ts → packages/sdk/src/errors.ts'],
  },
  {
    file: 'packages/sdk/src/engine/usesIndex.ts',
    source: "import '../index.js';\n",
    expect: ['sdk-index-is-the-top packages/sdk/src/engine/usesIndex.ts → packages/sdk/src/index.ts'],
  },
  {
    file: 'packages/sdk/src/engine/usesInternal.ts',
    source: "import '../internal.js';\n",
    expect: [
      'internal-for-the-cli-only packages/sdk/src/engine/usesInternal.ts → packages/sdk/src/internal.ts',
      'sdk-index-is-the-top packages/sdk/src/engine/usesInternal.ts → packages/sdk/src/internal.ts',
    ],
  },
  {
    file: 'scripts/usesInternal.mjs',
    source: "import '@scienceevolve/sdk/internal';\n",
    expect: ['internal-for-the-cli-only scripts/usesInternal.mjs → packages/sdk/dist/internal.d.ts'],
  },
  {
    file: 'examples/usesInternal.mjs',
    source: "import '../packages/sdk/src/internal.js';\n",
    expect: ['internal-for-the-cli-only examples/usesInternal.mjs → packages/sdk/src/internal.ts'],
  },
  {
    file: 'packages/sdk/src/processes/supervisorRoot.ts',
    source: "import '@scienceevolve/supervisor';\n",
    expect: [
      'supervisor-sub-paths-only packages/sdk/src/processes/supervisorRoot.ts → packages/supervisor/dist/index.d.ts',
    ],
  },
  {
    file: 'packages/sdk/src/processes/supervisorInternals.ts',
    source: "import '../../../supervisor/src/protocol.js';\n",
    expect: [
      'supervisor-sub-paths-only packages/sdk/src/processes/supervisorInternals.ts → packages/supervisor/src/protocol.ts',
    ],
  },
  {
    file: 'packages/supervisor/src/usesSdk.ts',
    source: "import '../../sdk/src/errors.js';\n",
    expect: ['supervisor-stands-alone packages/supervisor/src/usesSdk.ts → packages/sdk/src/errors.ts'],
  },
  {
    file: 'packages/cli/src/deepImport.ts',
    source: "import '../../sdk/src/errors.js';\n",
    expect: ['cli-only-through-sdk packages/cli/src/deepImport.ts → packages/sdk/src/errors.ts'],
  },
  {
    file: 'packages/cli/src/reachesSupervisor.ts',
    source: "import '@scienceevolve/supervisor/protocol';\n",
    expect: ['cli-only-through-sdk packages/cli/src/reachesSupervisor.ts → packages/supervisor/dist/protocol.d.ts'],
  },
  {
    // A light command reaching the SDK root: the light bundle would hold the whole SDK.
    file: 'packages/cli/src/commands/validate.ts',
    source: "import '@scienceevolve/sdk';\n",
    expect: ['cli-light-path-stays-light packages/cli/src/light.ts → packages/sdk/dist/index.d.ts'],
  },
  {
    file: 'packages/sdk/src/store/cycleA.ts',
    source: "import './cycleB.js';\n",
    expect: ['no-circular packages/sdk/src/store/cycleA.ts → packages/sdk/src/store/cycleB.ts'],
  },
  {
    file: 'packages/sdk/src/store/cycleB.ts',
    source: "import './cycleA.js';\n",
    expect: [], // a cycle is reported once, at its first edge
  },
  {
    file: 'packages/sdk/src/workflow/missing.ts',
    source: "import './notThere.js';\n",
    expect: ['no-unresolvable packages/sdk/src/workflow/missing.ts → ./notThere.js'],
  },
];

/**
 * Writes a miniature of the repository into a temporary directory: the real package.json files (so the
 * exports maps the rules read are the real ones), a stub for every file those exports name, workspace
 * links in node_modules, and `files`.
 */
async function miniature(t: TestContext, files: Record<string, string>): Promise<string> {
  const dir = await tempDir(t, 'se-lint-');
  const put = async (path: string, text: string) => {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  };
  await put(
    'tsconfig.base.json',
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
  );
  for (const pkg of ['supervisor', 'sdk', 'cli']) {
    const text = readFileSync(join(ROOT, 'packages', pkg, 'package.json'), 'utf8');
    await put(`packages/${pkg}/package.json`, text);
    const manifest = JSON.parse(text) as { exports?: Record<string, string | Record<string, string>> };
    for (const target of Object.values(manifest.exports ?? {})) {
      for (const file of typeof target === 'string' ? [target] : Object.values(target)) {
        if (file.startsWith('./dist/')) await put(`packages/${pkg}/${file.slice(2)}`, 'export {};\n');
      }
    }
    await mkdir(join(dir, 'node_modules/@scienceevolve'), { recursive: true });
    await symlink(`../../packages/${pkg}`, join(dir, 'node_modules/@scienceevolve', pkg));
  }
  await put('packages/cli/dist/main.js', 'export {};\n');
  for (const [path, text] of Object.entries(files)) await put(path, text);
  return dir;
}

/** The check's violations as `rule from → to`, sorted. */
function violations(run: Run): string[] {
  const report = JSON.parse(run.stdout) as {
    summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
  };
  return report.summary.violations.map((v) => `${v.rule.name} ${v.from} → ${v.to}`).sort();
}

/** The lint command's arguments without its --config (the miniature is given the real config by path). */
function fixtureArgs(): string[] {
  return lintArgs().filter((a) => a !== '--config' && a !== '.dependency-cruiser.cjs');
}

test('the boundary check passes on a miniature tree that follows the picture', async (t) => {
  const dir = await miniature(t, CLEAN);
  const run = await depcruise(dir, [...fixtureArgs(), '--config', CONFIG, '--output-type', 'json']);
  assert.deepEqual(violations(run), []);
  // Not passing by seeing nothing: every file of the tree was read.
  const report = JSON.parse(run.stdout) as { modules: Array<{ source: string }> };
  const read = new Set(report.modules.map((m) => m.source));
  for (const file of Object.keys(CLEAN)) assert.ok(read.has(file), `the check read ${file}`);
});

test('the boundary check fails on every forbidden import of a miniature tree, naming its rule', async (t) => {
  const files = { ...CLEAN };
  for (const entry of FORBIDDEN) files[entry.file] = entry.source;
  const dir = await miniature(t, files);

  const json = await depcruise(dir, [...fixtureArgs(), '--config', CONFIG, '--output-type', 'json']);
  assert.deepEqual(violations(json), FORBIDDEN.flatMap((entry) => entry.expect).sort());

  // What a developer sees in `npm run lint` (the JSON reporter exits 0 whatever it finds; this one does
  // not): a non-zero exit, the rule, the importing file and the imported one.
  const text = await depcruise(dir, [...fixtureArgs(), '--config', CONFIG, '--output-type', 'err']);
  assert.notEqual(text.code, 0);
  assert.match(
    text.stdout,
    /error layer-workflow: packages\/sdk\/src\/workflow\/upward\.ts → packages\/sdk\/src\/engine\/runs\.ts/,
  );
});

test('the boundary check passes on the real tree, as npm run lint runs it', async () => {
  const run = await depcruise(ROOT, lintArgs());
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /no dependency violations found/);
});
