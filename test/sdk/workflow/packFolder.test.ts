/**
 * Workflow folders (`packFolder`, `packServiceFolder`, `unpackWorkflow`): both round trips over every
 * example and the test corpus, the demo built by pack, and a table of folders that must be refused, each
 * with the code and the folder's own file path it must name.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { packFolder, packServiceFolder, unpackWorkflow } from '../../../packages/sdk/src/index.js';
import { canonicalWorkflowJson, INIT_HARNESSES, initFolder, LIMITS } from '../../../packages/sdk/src/internal.js';
import { type Doc, fullWorkflow, minimalWorkflow } from '../../fixtures/workflows/documents.js';
import { tempDir } from '../../fixtures/store/tempDir.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DEMO = join(ROOT, 'examples/workflows/demo');

/** Every file under `dir`, relative path → bytes. */
async function snapshot(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (sub: string) => {
    for (const entry of await readdir(join(dir, sub), { withFileTypes: true })) {
      const rel = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) await walk(rel);
      else out.set(rel, await readFile(join(dir, rel)));
    }
  };
  await walk('');
  return out;
}

/** Writes `files` (relative path → text or bytes) under `dir`. */
async function writeTree(dir: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

/** Documents the round trip must carry unchanged: the corpus, and the awkward values YAML could bend. */
async function corpus(): Promise<Array<[string, string]>> {
  const docs: Array<[string, string]> = [];
  for (const file of ['examples/workflows/workspace-tools.json', 'examples/workflows/alias-and-remote.json']) {
    docs.push([file, await readFile(join(ROOT, file), 'utf8')]);
  }
  docs.push(['examples/workflows/demo/workflow.json', await readFile(join(DEMO, 'workflow.json'), 'utf8')]);
  docs.push([
    'test/fixtures/workflows/minimal.json',
    await readFile(join(ROOT, 'test/fixtures/workflows/minimal.json'), 'utf8'),
  ]);
  docs.push(['fullWorkflow', JSON.stringify(fullWorkflow())]);
  docs.push(['minimalWorkflow', JSON.stringify(minimalWorkflow())]);
  const awkward: Doc = {
    $schema: './workflow.schema.json',
    agents: {
      main: {
        instructions: 'yes\nno\n  indented: "quoted"\t# not a comment\n\u2028 line separator, 0x10, 1e3, ~, null, true',
        mcpServers: [
          { name: 'constructor', project: 'constructor' },
          { name: 'remote', url: 'https://example.com/mcp', tools: { exclude: ['drop_*'] } },
        ],
        harness: { type: 'openai', model: 'm', temperature: 0.5, maxTurns: 3 },
      },
      '0lead': { instructions: '' },
    },
    orchestration: { invocationRetries: 0 },
    mcpDefinitions: {
      constructor: {
        entrypoint: 'main.py',
        command: 'python3',
        args: ['--flag', '', ' spaced ', 'ünïcödé 🙂'],
        envFrom: { constructor: 'HOST_PROTO', KEY: 'TASK_KEY' },
        files: {
          'main.py': 'print("hi")\r\nwindows line\r\n',
          'service.json': '{"a service file": "named like the launch file"}',
          toString: 'a file named toString',
          'lib/__proto__': 'a file named __proto__, below a directory',
          'empty.txt': '',
          'no-final-newline': 'x',
          '.hidden/deep/a b/ç.txt': '\ufeffBOM first, kept\n',
        },
      },
      '123': { entrypoint: 's.cjs', files: { 's.cjs': 'x' } },
    },
  };
  // (`__proto__` as a name is refused by validation; below a directory it is an ordinary file name.)
  docs.push(['awkward', JSON.stringify(awkward)]);
  docs.push(['no definitions', JSON.stringify({ agents: { main: {} } })]);
  docs.push(['empty definitions', JSON.stringify({ agents: { main: {} }, mcpDefinitions: {} })]);
  return docs;
}

describe('round trips', () => {
  test('json → folder → json is the canonical JSON of the document, over every example and the corpus', async (t) => {
    const base = await tempDir(t, 'se-pack-');
    let n = 0;
    for (const [name, text] of await corpus()) {
      const dir = join(base, String(n++));
      await unpackWorkflow(text, dir);
      const packed = await packFolder(dir);
      assert.equal(packed.text, canonicalWorkflowJson(JSON.parse(text)), name);
      assert.deepEqual(JSON.parse(packed.text), JSON.parse(text), `${name}: same values`);
      // Canonical JSON is a fixed point.
      const again = join(base, String(n++));
      await unpackWorkflow(packed.text, again);
      assert.equal((await packFolder(again)).text, packed.text, name);
    }
    assert.ok(n >= 18);
  });

  test('folder → json → folder gives the same files, byte for byte (the demo, and init for every harness)', async (t) => {
    const base = await tempDir(t, 'se-pack-');
    const folders: string[] = [];
    for (const harness of INIT_HARNESSES) {
      const dir = join(base, `init-${harness}`);
      await initFolder({ dir, harness });
      folders.push(dir);
    }
    const demoCopy = join(base, 'demo');
    const demoFiles = await snapshot(DEMO);
    for (const [path, bytes] of demoFiles) {
      if (path.startsWith('services/') || path === 'workflow.yaml') await writeTree(demoCopy, { [path]: bytes });
    }
    folders.push(demoCopy);
    for (const dir of folders) {
      const packed = await packFolder(dir);
      const out = `${dir}-again`;
      await unpackWorkflow(packed.text, out);
      const before = await snapshot(dir);
      for (const extra of ['README.md', 'script.json', 'workflow.schema.json']) before.delete(extra);
      assert.deepEqual(await snapshot(out), before, dir);
    }
  });

  test('a root service file named service.json is written inside the launch file and comes back', async (t) => {
    const dir = join(await tempDir(t, 'se-pack-'), 'f');
    const doc = {
      agents: { main: {} },
      mcpDefinitions: {
        s: { entrypoint: 'service.json', files: { 'service.json': '{"x":1}', 'a/service.json': 'y' } },
      },
    };
    await unpackWorkflow(JSON.stringify(doc), dir);
    const launch = JSON.parse(await readFile(join(dir, 'services/s/service.json'), 'utf8'));
    assert.deepEqual(launch, { entrypoint: 'service.json', files: { 'service.json': '{"x":1}' } });
    assert.equal(await readFile(join(dir, 'services/s/a/service.json'), 'utf8'), 'y');
    assert.equal((await packFolder(dir)).text, canonicalWorkflowJson(doc));
  });

  test('workflow.base.json is read like workflow.yaml', async (t) => {
    const dir = await tempDir(t, 'se-pack-');
    await writeTree(dir, {
      'workflow.base.json': JSON.stringify({ agents: { main: { mcpServers: [{ name: 't', project: 't' }] } } }),
      'services/t/service.json': '{"entrypoint": "s.cjs"}',
      'services/t/s.cjs': 'x',
      'README.md': 'top-level files other than the base are not read',
    });
    const packed = await packFolder(dir);
    assert.deepEqual(packed.document, {
      agents: { main: { mcpServers: [{ name: 't', project: 't' }] } },
      mcpDefinitions: { t: { entrypoint: 's.cjs', files: { 's.cjs': 'x' } } },
    });
    assert.deepEqual(packed.files.sort(), ['services/t/s.cjs', 'services/t/service.json', 'workflow.base.json']);
  });
});

describe('the demo is built with pack', () => {
  test('pack of examples/workflows/demo equals its checked-in workflow.json, and script.json is current', async () => {
    const packed = await packFolder(DEMO);
    assert.equal(
      packed.text,
      await readFile(join(DEMO, 'workflow.json'), 'utf8'),
      'run node examples/workflows/demo/script.mjs',
    );
    const { demoFiles } = (await import(join(DEMO, 'script.mjs'))) as {
      demoFiles: () => Promise<{ workflow: string; script: string }>;
    };
    const files = await demoFiles();
    assert.equal(files.workflow, packed.text);
    // Compared as values: biome formats the checked-in script.json (`npx biome format --write`).
    assert.deepEqual(
      JSON.parse(files.script),
      JSON.parse(await readFile(join(DEMO, 'script.json'), 'utf8')),
      'run node examples/workflows/demo/script.mjs',
    );
    const charts = await packServiceFolder(join(DEMO, 'proposal/charts'));
    assert.deepEqual(Object.keys(charts.files as object), ['server.cjs']);
  });
});

interface BadCase {
  title: string;
  files: Record<string, string | Buffer>;
  /** Extra setup: symlinks, FIFOs. */
  setup?: (dir: string, outside: string) => Promise<void>;
  code: string;
  /** Every [code, path, at?] the error must list, in order. */
  errors: Array<[string, string, string?]>;
}

const BASE = 'agents:\n  main:\n    mcpServers:\n      - name: t\n        project: t\n';
const LAUNCH = '{"entrypoint": "s.cjs"}';

const BAD: BadCase[] = [
  {
    title: 'no workflow.yaml',
    files: { 'services/t/service.json': LAUNCH, 'services/t/s.cjs': 'x' },
    code: 'invalid_folder',
    errors: [['invalid_folder', 'workflow.yaml']],
  },
  {
    title: 'workflow.yaml and a launch file that are folders',
    files: { 'workflow.yaml/x': 'x', 'services/t/service.json/x': 'x', 'services/t/s.cjs': 'x' },
    code: 'invalid_folder',
    errors: [
      ['invalid_folder', 'workflow.yaml'],
      ['invalid_folder', 'services/t/service.json'],
    ],
  },
  {
    title: 'both base files',
    files: { 'workflow.yaml': BASE, 'workflow.base.json': '{}' },
    code: 'invalid_folder',
    errors: [['invalid_folder', 'workflow.base.json']],
  },
  {
    title: 'YAML syntax, with line and column',
    files: { 'workflow.yaml': 'agents:\n  main: [\n' },
    code: 'invalid_folder',
    errors: [['invalid_folder', 'workflow.yaml:3:1']],
  },
  {
    title: 'a duplicate YAML key',
    files: { 'workflow.yaml': 'agents: {}\nagents: {}\n' },
    code: 'invalid_folder',
    errors: [['invalid_folder', 'workflow.yaml:2:1']],
  },
  {
    title: 'mcpDefinitions in the base file',
    files: { 'workflow.yaml': `${BASE}mcpDefinitions: {}\n` },
    code: 'invalid_folder',
    errors: [['invalid_folder', 'workflow.yaml', 'mcpDefinitions']],
  },
  {
    title: 'a file directly in services/, a service without service.json, a launch file that is not JSON',
    files: {
      'workflow.yaml': BASE,
      'services/README.md': 'x',
      'services/t/s.cjs': 'x',
      'services/u/service.json': '{"entrypoint": ',
      'services/u/s.cjs': 'x',
    },
    code: 'invalid_folder',
    errors: [
      ['invalid_folder', 'services/README.md'],
      ['invalid_folder', 'services/t/service.json'],
      ['invalid_json', 'services/u/service.json'],
    ],
  },
  {
    title: 'inline files other than service.json',
    files: { 'workflow.yaml': BASE, 'services/t/service.json': '{"entrypoint": "s.cjs", "files": {"s.cjs": "x"}}' },
    code: 'invalid_folder',
    errors: [['invalid_folder', 'services/t/service.json', 'files']],
  },
  {
    title: 'a binary file and a file with NUL',
    files: {
      'workflow.yaml': BASE,
      'services/t/service.json': LAUNCH,
      'services/t/s.cjs': 'x',
      'services/t/lib/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe]),
      'services/t/lib/nul.txt': 'a\0b',
    },
    code: 'binary_file',
    errors: [
      ['binary_file', 'services/t/lib/logo.png'],
      ['binary_file', 'services/t/lib/nul.txt'],
    ],
  },
  {
    title: 'symbolic links (to a file outside the folder, to a folder inside) and a named pipe',
    files: { 'workflow.yaml': BASE, 'services/t/service.json': LAUNCH, 'services/t/s.cjs': 'x' },
    setup: async (dir, outside) => {
      await writeFile(join(outside, 'secret.txt'), 'not to be read');
      await symlink(join(outside, 'secret.txt'), join(dir, 'services/t/secret.txt'));
      await symlink('.', join(dir, 'services/t/loop'));
      execFileSync('mkfifo', [join(dir, 'services/t/pipe')]);
    },
    code: 'special_file',
    errors: [
      ['special_file', 'services/t/loop'],
      ['special_file', 'services/t/pipe'],
      ['special_file', 'services/t/secret.txt'],
    ],
  },
  {
    title: 'a symbolic link as workflow.yaml and as a service folder',
    files: { 'real/x': 'x' },
    setup: async (dir, outside) => {
      await writeFile(join(outside, 'w.yaml'), BASE);
      await symlink(join(outside, 'w.yaml'), join(dir, 'workflow.yaml'));
      await mkdir(join(dir, 'services'));
      await symlink(join(dir, 'real'), join(dir, 'services/t'));
    },
    code: 'special_file',
    errors: [
      ['special_file', 'workflow.yaml'],
      ['special_file', 'services/t'],
    ],
  },
  {
    title: 'more files than a definition may have',
    files: {
      'workflow.yaml': BASE,
      'services/t/service.json': LAUNCH,
      'services/t/s.cjs': 'x',
      ...Object.fromEntries(
        Array.from({ length: LIMITS.filesPerDefinition }, (_, i) => [`services/t/f/${i}.txt`, 'x']),
      ),
    },
    code: 'limit_exceeded',
    errors: [['limit_exceeded', 'services/t/']],
  },
  {
    title: 'a file far over the size of a workflow is refused before it is read',
    files: {
      'workflow.yaml': BASE,
      'services/t/service.json': LAUNCH,
      'services/t/s.cjs': 'x',
      'services/t/big.txt': 'x'.repeat(LIMITS.definitionsJsonBytes + 1),
    },
    code: 'limit_exceeded',
    errors: [['limit_exceeded', 'services/t/big.txt']],
  },
  {
    title: 'workflow rules, each at the folder file that breaks it',
    files: {
      'workflow.yaml':
        'agents:\n  main:\n    harness: {type: nope}\n    mcpServers:\n      - name: t\n        project: t\n      - name: v\n        project: missing\n',
      'services/t/service.json': '{"entrypoint": "gone.cjs", "command": "node --inspect", "typo": 1}',
      'services/t/s.cjs': 'x'.repeat(LIMITS.charsPerFile + 1),
      'services/t/back\\slash.js': 'x',
      'services/Bad_Name/service.json': LAUNCH,
      'services/Bad_Name/s.cjs': 'x',
    },
    code: 'invalid_workflow',
    errors: [
      ['invalid_workflow', 'services/Bad_Name/'],
      ['invalid_workflow', 'services/t/service.json', 'typo'],
      ['invalid_command', 'services/t/service.json', 'command'],
      ['unknown_reference', 'services/t/service.json', 'entrypoint'],
      ['unsafe_path', 'services/t/back\\slash.js'],
      ['limit_exceeded', 'services/t/s.cjs'],
      ['invalid_workflow', 'workflow.yaml', 'agents.main.harness.type'],
      ['unknown_reference', 'workflow.yaml', 'agents.main.mcpServers[1].project'],
    ],
  },
];

describe('refused folders: the code and the folder paths', () => {
  for (const c of BAD) {
    test(c.title, async (t) => {
      const base = await tempDir(t, 'se-pack-');
      const dir = join(base, 'flow');
      const outside = join(base, 'outside');
      await mkdir(dir);
      await mkdir(outside);
      await writeTree(dir, c.files);
      await c.setup?.(dir, outside);
      const error = await packFolder(dir).then(
        () => assert.fail('packed'),
        (e: unknown) =>
          e as { code: string; message: string; data: { errors: Array<{ code: string; path: string; at?: string }> } },
      );
      assert.equal(error.code, c.code, error.message);
      const got = error.data.errors.map((e) => (e.at === undefined ? [e.code, e.path] : [e.code, e.path, e.at]));
      const sortKey = (e: unknown[]) => e.join('\0');
      assert.deepEqual(
        [...got].sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
        [...c.errors].map((e) => e.filter((x) => x !== undefined)).sort((a, b) => sortKey(a).localeCompare(sortKey(b))),
        error.message,
      );
      for (const e of c.errors) assert.ok(error.message.includes(e[1]), `the message names ${e[1]}`);
      assert.doesNotMatch(error.message, /not to be read/);
    });
  }

  test('pack of a file, of a missing path; unpack into a non-empty folder and of an invalid workflow', async (t) => {
    const base = await tempDir(t, 'se-pack-');
    await writeFile(join(base, 'file'), 'x');
    await assert.rejects(packFolder(join(base, 'file')), { code: 'invalid_folder' });
    await assert.rejects(packFolder(join(base, 'missing')), { code: 'io_error' });
    await assert.rejects(unpackWorkflow(JSON.stringify(minimalWorkflow()), base), { code: 'folder_not_empty' });
    assert.deepEqual(await readdir(base), ['file']);
    await assert.rejects(unpackWorkflow('{"agents": {}}', join(base, 'new')), { code: 'invalid_workflow' });
    await assert.rejects(unpackWorkflow('{', join(base, 'new')), { code: 'invalid_workflow' });
  });
});
