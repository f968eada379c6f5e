/**
 * validateWorkflow / validateWorkflowText, rule by rule (SPEC §3): a table of invalid documents, each
 * with the exact `{code, path}` list it must give, and the valid edge cases exactly at each limit.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseWorkflow } from '../../../packages/sdk/src/index.js';
import {
  LIMITS,
  type ValidationIssue,
  validateWorkflow,
  validateWorkflowText,
} from '../../../packages/sdk/src/internal.js';
import {
  type Doc,
  SERVER,
  changed,
  definition,
  fullWorkflow,
  jsonBytes,
  minimalWorkflow,
  nameOf,
  padTo,
} from '../../fixtures/workflows/documents.js';

type Expected = Array<[code: ValidationIssue['code'], path: string]>;

interface Case {
  title: string;
  doc: () => unknown;
  errors: Expected;
}

const TOOLS = '$.mcpDefinitions.tools';
const ENTRY0 = '$.agents.main.mcpServers[0]';

/** A workflow whose `tools` definition has `files` (entrypoint: the first key). */
function withFiles(files: Record<string, string>): Doc {
  return changed((d) => {
    d.mcpDefinitions.tools = definition(files);
  });
}

/** A workflow with one more file of `tools` at `path`. */
function withPath(path: string): Doc {
  return changed((d) => {
    d.mcpDefinitions.tools.files[path] = 'x';
  });
}

/** `count` definitions d0…, each used by main once; `servers` entries on main. */
function manyDefinitions(count: number): Doc {
  return changed((d) => {
    d.mcpDefinitions = {};
    for (let i = 0; i < count; i++) d.mcpDefinitions[`d${i}`] = definition();
    d.agents.main.mcpServers = [{ name: 'tools', project: 'd0' }];
  });
}

function manyServers(count: number): Doc {
  return changed((d) => {
    d.agents.main.mcpServers = Array.from({ length: count }, (_, i) =>
      i % 2 === 0 ? { name: `s${i}`, project: 'tools' } : { name: `s${i}`, url: `http://127.0.0.1:${8000 + i}/mcp` },
    );
  });
}

function manyFiles(count: number): Doc {
  const files: Record<string, string> = { 'server.cjs': SERVER };
  for (let i = 1; i < count; i++) files[`lib/f${i}.cjs`] = `module.exports = ${i};\n`;
  return withFiles(files);
}

/** A workflow whose `mcpDefinitions` is exactly `bytes` as JSON, every default written out, no file over its limit. */
function definitionsOfBytes(bytes: number): Doc {
  const doc = withFiles({
    'server.cjs': SERVER,
    'a.txt': 'x'.repeat(400_000),
    'b.txt': 'x'.repeat(400_000),
    'c.txt': '',
  });
  const files = doc.mcpDefinitions.tools.files;
  padTo(
    bytes,
    () => jsonBytes(doc.mcpDefinitions),
    () => files['c.txt'],
    (v) => {
      files['c.txt'] = v;
    },
  );
  return doc;
}

/** A workflow that is exactly `bytes` as JSON, every default written out, grown through main's instructions. */
function workflowOfBytes(bytes: number): Doc {
  const doc = fullWorkflow();
  padTo(
    bytes,
    () => jsonBytes(doc),
    () => doc.agents.main.instructions,
    (v) => {
      doc.agents.main.instructions = v;
    },
  );
  return doc;
}

/** A path of exactly `chars` characters in segments of at most 200. */
function longPath(chars: number): string {
  const segments: string[] = [];
  let left = chars;
  while (left > 201) {
    segments.push('d'.repeat(200));
    left -= 201;
  }
  segments.push('f'.repeat(left));
  return segments.join('/');
}

const INVALID: Case[] = [
  // §3.4 limits, each one just over.
  { title: '33 definitions', doc: () => manyDefinitions(33), errors: [['limit_exceeded', '$.mcpDefinitions']] },
  { title: '101 files in a definition', doc: () => manyFiles(101), errors: [['limit_exceeded', `${TOOLS}.files`]] },
  {
    title: 'a file of 500,001 characters',
    doc: () => withFiles({ 'server.cjs': 'x'.repeat(500_001) }),
    errors: [['limit_exceeded', `${TOOLS}.files["server.cjs"]`]],
  },
  {
    title: 'mcpDefinitions of 1 MiB + 1 byte as JSON',
    doc: () => definitionsOfBytes(LIMITS.definitionsJsonBytes + 1),
    errors: [['limit_exceeded', '$.mcpDefinitions']],
  },
  {
    title: '33 mcpServers entries on one agent (project and remote together)',
    doc: () => manyServers(33),
    errors: [['limit_exceeded', '$.agents.main.mcpServers']],
  },
  {
    title: 'a workflow of 2 MiB + 1 byte as JSON',
    doc: () => workflowOfBytes(LIMITS.workflowJsonBytes + 1),
    errors: [['limit_exceeded', '$']],
  },
  {
    title: '65 args',
    doc: () => changed((d) => (d.mcpDefinitions.tools.args = Array(65).fill('a'))),
    errors: [['limit_exceeded', `${TOOLS}.args`]],
  },
  {
    title: 'an argument of 4,097 characters',
    doc: () => changed((d) => (d.mcpDefinitions.tools.args = ['a', 'b', 'c', 'x'.repeat(4097)])),
    errors: [['limit_exceeded', `${TOOLS}.args[3]`]],
  },
  {
    title: 'an agent name of 65 characters',
    doc: () => changed((d) => (d.agents[nameOf(65)] = {})),
    errors: [['invalid_workflow', `$.agents.${nameOf(65)}`]],
  },
  {
    title: 'a definition name of 65 characters',
    doc: () => changed((d) => (d.mcpDefinitions[nameOf(65)] = definition())),
    errors: [['invalid_workflow', `$.mcpDefinitions.${nameOf(65)}`]],
  },
  {
    title: 'a service name of 65 characters',
    doc: () => changed((d) => (d.agents.main.mcpServers[0].name = nameOf(65))),
    errors: [['invalid_workflow', `${ENTRY0}.name`]],
  },
  {
    title: 'a name with an upper-case letter',
    doc: () => changed((d) => (d.agents.main.mcpServers[0].name = 'Tools')),
    errors: [['invalid_workflow', `${ENTRY0}.name`]],
  },
  {
    title: 'a name starting with "-"',
    doc: () => changed((d) => (d.agents['-worker'] = {})),
    errors: [['invalid_workflow', '$.agents["-worker"]']],
  },
  {
    title: 'an empty service name',
    doc: () => changed((d) => (d.agents.main.mcpServers[0].name = '')),
    errors: [['invalid_workflow', `${ENTRY0}.name`]],
  },
  {
    title: 'invocationRetries 11 (not in SPEC: at most 10)',
    doc: () => changed((d) => (d.orchestration.invocationRetries = 11)),
    errors: [['limit_exceeded', '$.orchestration.invocationRetries']],
  },
  {
    title: 'invocationRetries -1',
    doc: () => changed((d) => (d.orchestration.invocationRetries = -1)),
    errors: [['invalid_workflow', '$.orchestration.invocationRetries']],
  },
  {
    title: 'invocationRetries 1.5',
    doc: () => changed((d) => (d.orchestration.invocationRetries = 1.5)),
    errors: [['invalid_workflow', '$.orchestration.invocationRetries']],
  },

  // §3.1 safe paths.
  {
    title: 'a ".." segment',
    doc: () => withPath('lib/../x.cjs'),
    errors: [['unsafe_path', `${TOOLS}.files["lib/../x.cjs"]`]],
  },
  { title: 'a leading ".."', doc: () => withPath('../x.cjs'), errors: [['unsafe_path', `${TOOLS}.files["../x.cjs"]`]] },
  {
    title: 'a backslash',
    doc: () => withPath('lib\\x.cjs'),
    errors: [['unsafe_path', `${TOOLS}.files["lib\\\\x.cjs"]`]],
  },
  {
    title: 'an absolute path',
    doc: () => withPath('/etc/x.cjs'),
    errors: [['unsafe_path', `${TOOLS}.files["/etc/x.cjs"]`]],
  },
  {
    title: 'an empty segment',
    doc: () => withPath('lib//x.cjs'),
    errors: [['unsafe_path', `${TOOLS}.files["lib//x.cjs"]`]],
  },
  { title: 'a trailing "/"', doc: () => withPath('lib/'), errors: [['unsafe_path', `${TOOLS}.files["lib/"]`]] },
  { title: 'an empty path', doc: () => withPath(''), errors: [['unsafe_path', `${TOOLS}.files[""]`]] },
  {
    title: 'a leading "." segment',
    doc: () => withPath('./x.cjs'),
    errors: [['unsafe_path', `${TOOLS}.files["./x.cjs"]`]],
  },
  {
    title: 'an inner "." segment',
    doc: () => withPath('lib/./x.cjs'),
    errors: [['unsafe_path', `${TOOLS}.files["lib/./x.cjs"]`]],
  },
  {
    title: 'a NUL character',
    doc: () => withPath('x\u0000.cjs'),
    errors: [['unsafe_path', `${TOOLS}.files["x\\u0000.cjs"]`]],
  },
  {
    title: 'a path that is both a file and a directory',
    doc: () => withFiles({ 'server.cjs': SERVER, lib: 'x', 'lib/x.cjs': 'y' }),
    errors: [['unsafe_path', `${TOOLS}.files.lib`]],
  },
  {
    title: 'a path of 1,025 characters (not in SPEC: at most 1,024)',
    doc: () => withPath(longPath(1025)),
    errors: [['unsafe_path', `${TOOLS}.files["${longPath(1025)}"]`]],
  },
  {
    title: 'a segment of 256 bytes (not in SPEC: at most 255)',
    doc: () => withPath(`lib/${'é'.repeat(128)}`),
    errors: [['unsafe_path', `${TOOLS}.files["lib/${'é'.repeat(128)}"]`]],
  },
  {
    title: 'a file content that is not a string',
    doc: () => changed((d) => (d.mcpDefinitions.tools.files['data.json'] = { a: 1 })),
    errors: [['invalid_workflow', `${TOOLS}.files["data.json"]`]],
  },
  {
    title: 'no files at all',
    doc: () => withFiles({}),
    errors: [
      ['unknown_reference', `${TOOLS}.entrypoint`],
      ['invalid_workflow', `${TOOLS}.files`],
    ],
  },
  {
    title: 'files missing',
    doc: () => changed((d) => delete d.mcpDefinitions.tools.files),
    errors: [['invalid_workflow', `${TOOLS}.files`]],
  },

  // §3.1 entrypoint.
  {
    title: 'an entrypoint that is not a key of files',
    doc: () => changed((d) => (d.mcpDefinitions.tools.entrypoint = 'main.cjs')),
    errors: [['unknown_reference', `${TOOLS}.entrypoint`]],
  },
  {
    title: 'an entrypoint whose content is empty',
    doc: () => changed((d) => (d.mcpDefinitions.tools.files['server.cjs'] = '')),
    errors: [['invalid_workflow', `${TOOLS}.entrypoint`]],
  },
  {
    title: 'an empty entrypoint name',
    doc: () => changed((d) => (d.mcpDefinitions.tools.entrypoint = '')),
    errors: [['invalid_workflow', `${TOOLS}.entrypoint`]],
  },
  {
    title: 'no entrypoint',
    doc: () => changed((d) => delete d.mcpDefinitions.tools.entrypoint),
    errors: [['invalid_workflow', `${TOOLS}.entrypoint`]],
  },

  // §3.1 command: never a shell string.
  ...[
    'node server.cjs',
    'node\t',
    ' node',
    'node;rm',
    'a|b',
    'a&b',
    'a>b',
    'a<b',
    '$(x)',
    '`x`',
    "it's",
    'a"b',
    'py*',
    'x?',
    '~/bin/x',
    'a\nb',
  ].map(
    (command): Case => ({
      title: `command ${JSON.stringify(command)}`,
      doc: () => changed((d) => (d.mcpDefinitions.tools.command = command)),
      errors: [['invalid_command', `${TOOLS}.command`]],
    }),
  ),
  {
    title: 'an empty command',
    doc: () => changed((d) => (d.mcpDefinitions.tools.command = '')),
    errors: [['invalid_command', `${TOOLS}.command`]],
  },

  // §3.1 envFrom.
  ...['SCIENCEEVOLVE_WORKSPACE', 'SCIENCEEVOLVE_MCP_SOURCE_DIR', 'SCIENCEEVOLVE_ANYTHING', 'NODE_PATH'].map(
    (key): Case => ({
      title: `envFrom key ${key}`,
      doc: () => changed((d) => (d.mcpDefinitions.tools.envFrom = { [key]: 'HOST_VALUE' })),
      errors: [['reserved_name', `${TOOLS}.envFrom.${key}`]],
    }),
  ),
  {
    title: 'an envFrom host variable that is not a variable name',
    doc: () => changed((d) => (d.mcpDefinitions.tools.envFrom = { API_KEY: 'MY-KEY' })),
    errors: [['invalid_workflow', `${TOOLS}.envFrom.API_KEY`]],
  },

  // §3.2 mcpServers.
  {
    title: 'the fixed catalog name "scienceevolve" (project entry)',
    doc: () => changed((d) => (d.agents.main.mcpServers[0].name = 'scienceevolve')),
    errors: [['reserved_name', `${ENTRY0}.name`]],
  },
  {
    title: 'the fixed catalog name "scienceevolve" (remote entry)',
    doc: () =>
      changed((d) => (d.agents.main.mcpServers = [{ name: 'scienceevolve', url: 'http://127.0.0.1:8000/mcp' }])),
    errors: [['reserved_name', `${ENTRY0}.name`]],
  },
  {
    title: 'both project and url',
    doc: () => changed((d) => (d.agents.main.mcpServers[0].url = 'http://127.0.0.1:8000/mcp')),
    errors: [['invalid_workflow', ENTRY0]],
  },
  {
    title: 'neither project nor url',
    doc: () => changed((d) => delete d.agents.main.mcpServers[0].project),
    errors: [['invalid_workflow', ENTRY0]],
  },
  {
    title: 'a project that names no definition',
    doc: () => changed((d) => (d.agents.main.mcpServers[0].project = 'search')),
    errors: [['unknown_reference', `${ENTRY0}.project`]],
  },
  {
    title: 'a duplicate name in one agent',
    doc: () => changed((d) => d.agents.main.mcpServers.push({ name: 'tools', url: 'http://127.0.0.1:8000/mcp' })),
    errors: [['duplicate_name', '$.agents.main.mcpServers[1].name']],
  },
  {
    title: 'a url that is not http(s)',
    doc: () => changed((d) => (d.agents.main.mcpServers = [{ name: 'remote', url: 'ftp://example.org/mcp' }])),
    errors: [['invalid_workflow', `${ENTRY0}.url`]],
  },
  {
    title: 'a url with a user name and password (fetch would refuse it, repeating the password)',
    doc: () =>
      changed((d) => (d.agents.main.mcpServers = [{ name: 'remote', url: 'https://me:s3cret@example.org/mcp' }])),
    errors: [['invalid_workflow', `${ENTRY0}.url`]],
  },
  {
    title: 'an unknown harness type',
    doc: () => changed((d) => (d.agents.main.harness = { type: 'telepathy' })),
    errors: [['invalid_workflow', '$.agents.main.harness.type']],
  },
  {
    title: 'an allowedRemoteUrls entry that is not a URL',
    doc: () => changed((d) => (d.orchestration.allowedRemoteUrls = ['not a url'])),
    errors: [['invalid_workflow', '$.orchestration.allowedRemoteUrls[0]']],
  },

  // Unknown keys at every level (strict objects everywhere).
  {
    title: 'an unknown top-level key',
    doc: () => changed((d) => (d.agent = {})),
    errors: [['invalid_workflow', '$.agent']],
  },
  {
    title: 'an unknown orchestration key',
    doc: () => changed((d) => (d.orchestration.retries = 2)),
    errors: [['invalid_workflow', '$.orchestration.retries']],
  },
  {
    title: 'an unknown agent key',
    doc: () => changed((d) => (d.agents.main.model = 'x')),
    errors: [['invalid_workflow', '$.agents.main.model']],
  },
  {
    title: 'a command harness with neither preset nor command',
    doc: () => changed((d) => (d.agents.main.harness = { type: 'command' })),
    errors: [['invalid_workflow', '$.agents.main.harness']],
  },
  {
    title: 'a harness timeout past the timer ceiling',
    doc: () => changed((d) => (d.agents.main.harness = { type: 'command', preset: 'pi', timeoutMs: 2 ** 31 })),
    errors: [['limit_exceeded', '$.agents.main.harness.timeoutMs']],
  },
  {
    title: 'an unknown harness key',
    doc: () => changed((d) => (d.agents.main.harness.script = 'x')),
    errors: [['invalid_workflow', '$.agents.main.harness.script']],
  },
  {
    title: 'an unknown mcpServers entry key',
    doc: () => changed((d) => (d.agents.main.mcpServers[0].env = {})),
    errors: [['invalid_workflow', `${ENTRY0}.env`]],
  },
  {
    title: 'an unknown definition key',
    doc: () => changed((d) => (d.mcpDefinitions.tools.cwd = '/tmp')),
    errors: [['invalid_workflow', `${TOOLS}.cwd`]],
  },

  // The document as a whole.
  { title: 'an array', doc: () => [fullWorkflow()], errors: [['invalid_workflow', '$']] },
  { title: 'null', doc: () => null, errors: [['invalid_workflow', '$']] },
  { title: 'a string', doc: () => 'workflow.json', errors: [['invalid_workflow', '$']] },
  { title: 'a number', doc: () => 42, errors: [['invalid_workflow', '$']] },
  { title: 'no agents', doc: () => changed((d) => delete d.agents), errors: [['invalid_workflow', '$.agents']] },
  {
    title: 'no agent named main',
    doc: () =>
      changed((d) => {
        d.agents.worker = d.agents.main;
        delete d.agents.main;
      }),
    errors: [['invalid_workflow', '$.agents']],
  },
  {
    title: 'agents that is an array',
    doc: () => changed((d) => (d.agents = [d.agents.main])),
    errors: [['invalid_workflow', '$.agents']],
  },
];

/** Valid documents exactly at each limit, and the near misses of each rule. */
const VALID: Array<{ title: string; doc: () => unknown }> = [
  { title: '32 definitions', doc: () => manyDefinitions(32) },
  { title: '100 files in a definition', doc: () => manyFiles(100) },
  { title: 'a file of 500,000 characters', doc: () => withFiles({ 'server.cjs': 'x'.repeat(500_000) }) },
  { title: 'mcpDefinitions of exactly 1 MiB as JSON', doc: () => definitionsOfBytes(LIMITS.definitionsJsonBytes) },
  { title: '32 mcpServers entries on one agent', doc: () => manyServers(32) },
  { title: 'a workflow of exactly 2 MiB as JSON', doc: () => workflowOfBytes(LIMITS.workflowJsonBytes) },
  {
    title: '64 args of 4,096 characters each',
    doc: () => changed((d) => (d.mcpDefinitions.tools.args = Array(64).fill('x'.repeat(4096)))),
  },
  {
    title: '64-character agent, definition and service names',
    doc: () =>
      changed((d) => {
        d.agents[nameOf(64, 'w')] = { mcpServers: [{ name: nameOf(64, 's'), project: nameOf(64, 'd') }] };
        d.mcpDefinitions[nameOf(64, 'd')] = definition();
      }),
  },
  {
    title: 'one-character names, starting with a digit, with "-" and "_"',
    doc: () =>
      changed((d) => {
        d.agents['7'] = { mcpServers: [{ name: 'x', project: '0-a_b' }] };
        d.mcpDefinitions['0-a_b'] = definition();
      }),
  },
  { title: 'invocationRetries 10', doc: () => changed((d) => (d.orchestration.invocationRetries = 10)) },
  { title: 'invocationRetries 0', doc: () => changed((d) => (d.orchestration.invocationRetries = 0)) },
  { title: 'a path of 1,024 characters', doc: () => withPath(longPath(1024)) },
  { title: 'a segment of 255 bytes', doc: () => withPath(`lib/${'é'.repeat(127)}x`) },
  {
    title: 'an entrypoint in a directory, beside other directories',
    doc: () => withFiles({ 'src/server.cjs': SERVER, 'src/lib/a.cjs': 'a', 'data/b.json': '{}', '.env.example': '' }),
  },
  {
    title: 'names that only look like path rules ("..." and "a..b")',
    doc: () => withFiles({ 'server.cjs': SERVER, '...': 'x', 'a..b': 'y', '.hidden/x': 'z' }),
  },
  ...['node', 'python3', 'python3.12', '/usr/bin/python3', './bin/tool', 'uv', 'my-tool_v2+x@1,2'].map((command) => ({
    title: `command ${JSON.stringify(command)}`,
    doc: () => changed((d) => (d.mcpDefinitions.tools.command = command)),
  })),
  {
    title: 'envFrom keys near the reserved ones, and a host variable named SCIENCEEVOLVE_*',
    doc: () =>
      changed(
        (d) =>
          (d.mcpDefinitions.tools.envFrom = {
            SCIENCEEVOLVE: 'A',
            MY_SCIENCEEVOLVE_X: 'B',
            NODE_PATHS: 'C',
            API_KEY: 'SCIENCEEVOLVE_TOKEN',
          }),
      ),
  },
  {
    title: 'aliases: two names for one definition',
    doc: () => changed((d) => d.agents.main.mcpServers.push({ name: 'tools-again', project: 'tools' })),
  },
  {
    title: 'the same service name in two agents',
    doc: () => changed((d) => (d.agents.worker = { mcpServers: [{ name: 'tools', url: 'https://example.org/mcp' }] })),
  },
  {
    title: 'a definition named like the fixed catalog (only service names are reserved)',
    doc: () =>
      changed((d) => {
        d.mcpDefinitions.scienceevolve = definition();
        d.agents.main.mcpServers.push({ name: 'science', project: 'scienceevolve' });
      }),
  },
  { title: 'no mcpDefinitions and no orchestration', doc: () => ({ agents: { main: {} } }) },
  { title: 'every default left out', doc: minimalWorkflow },
  {
    title: 'every harness type',
    doc: () =>
      changed((d) => {
        d.agents.a = {
          harness: { type: 'openai', model: 'gpt-x', baseUrl: 'http://127.0.0.1:1/v1', apiKeyEnv: 'KEY' },
        };
        d.agents.b = { harness: { type: 'anthropic', model: 'claude-x' } };
        d.agents.c = { harness: { type: 'command', command: 'claude', args: ['-p'] } };
        d.agents.d = { harness: { type: 'gemini', model: 'gemini-x', maxTurns: 3, requestTimeoutMs: 1000 } };
        d.agents.e = { harness: { type: 'openai', model: 'gpt-x', api: 'responses', temperature: 0.2 } };
        d.agents.f = { harness: { type: 'command', preset: 'codex', model: 'm', baseUrl: 'http://127.0.0.1:1/v1' } };
      }),
  },
];

function pairs(errors: ValidationIssue[]): Expected {
  return errors.map((e) => [e.code, e.path]);
}

describe('validateWorkflow refuses each rule of SPEC §3 with its code and path', () => {
  for (const c of INVALID) {
    test(c.title, () => {
      const result = validateWorkflow(c.doc());
      assert.equal(result.ok, false);
      assert.deepEqual(pairs(result.errors), c.errors);
      for (const e of result.errors) {
        assert.equal(typeof e.message, 'string');
        assert.ok(e.message.length > 10, `a message that names the fix, got ${JSON.stringify(e.message)}`);
        assert.deepEqual(Object.keys(e).sort(), ['code', 'message', 'path']);
      }
    });
  }
});

describe('validateWorkflow accepts the edge cases', () => {
  for (const c of VALID) {
    test(c.title, () => {
      const result = validateWorkflow(c.doc());
      assert.deepEqual(result.errors, []);
      assert.equal(result.ok, true);
    });
  }
});

describe('validateWorkflowText', () => {
  for (const [title, text] of [
    ['truncated JSON', '{"agents": {'],
    ['empty text', ''],
    ['JSON with a trailing comma', '{"agents": {"main": {}},}'],
    ['a comment', '// workflow\n{"agents": {"main": {}}}'],
  ] as const) {
    test(`not JSON: ${title}`, () => {
      const result = validateWorkflowText(text);
      assert.equal(result.ok, false);
      assert.deepEqual(pairs(result.errors), [['invalid_json', '$']]);
      assert.match(result.errors[0]!.message, /fix the syntax/);
    });
  }

  test('JSON that is not an object', () => {
    assert.deepEqual(pairs(validateWorkflowText('[]').errors), [['invalid_workflow', '$']]);
    assert.deepEqual(pairs(validateWorkflowText('"x"').errors), [['invalid_workflow', '$']]);
  });

  test('a valid text gives the workflow with defaults filled', () => {
    const result = validateWorkflowText(JSON.stringify(minimalWorkflow()));
    assert.equal(result.ok, true);
    assert.deepEqual(result.ok && result.workflow, fullWorkflow());
  });
});

describe('validateWorkflow as an API', () => {
  test('reports every fault of a document with several, sorted by path', () => {
    const doc = changed((d) => {
      d.extra = true;
      d.orchestration.invocationRetries = 99;
      d.agents.main.mcpServers = [
        { name: 'scienceevolve', project: 'tools' },
        { name: 'a', project: 'missing' },
        { name: 'a', url: 'http://127.0.0.1:8000/mcp', project: 'tools' },
      ];
      d.agents.worker = { mcpServers: Array.from({ length: 33 }, (_, i) => ({ name: `s${i}`, project: 'tools' })) };
      d.mcpDefinitions.tools.command = 'node --inspect';
      d.mcpDefinitions.tools.envFrom = { NODE_PATH: 'X' };
      d.mcpDefinitions.tools.files['../escape.cjs'] = 'x';
      d.mcpDefinitions.other = { entrypoint: 'gone.cjs', files: { 'main.cjs': 'x' }, args: Array(65).fill('') };
    });
    const result = validateWorkflow(doc);
    assert.equal(result.ok, false);
    assert.deepEqual(pairs(result.errors), [
      ['reserved_name', '$.agents.main.mcpServers[0].name'],
      ['unknown_reference', '$.agents.main.mcpServers[1].project'],
      ['invalid_workflow', '$.agents.main.mcpServers[2]'],
      ['duplicate_name', '$.agents.main.mcpServers[2].name'],
      ['limit_exceeded', '$.agents.worker.mcpServers'],
      ['invalid_workflow', '$.extra'],
      ['limit_exceeded', '$.mcpDefinitions.other.args'],
      ['unknown_reference', '$.mcpDefinitions.other.entrypoint'],
      ['invalid_command', '$.mcpDefinitions.tools.command'],
      ['reserved_name', '$.mcpDefinitions.tools.envFrom.NODE_PATH'],
      ['unsafe_path', '$.mcpDefinitions.tools.files["../escape.cjs"]'],
      ['limit_exceeded', '$.orchestration.invocationRetries'],
    ]);
  });

  test('never throws: a cyclic object, a BigInt, undefined, a function', () => {
    const cyclic: Doc = fullWorkflow();
    cyclic.agents.main.self = cyclic;
    for (const doc of [cyclic, changed((d) => (d.agents.main.instructions = 10n)), undefined, () => ({})]) {
      const result = validateWorkflow(doc);
      assert.equal(result.ok, false);
      assert.ok(result.errors.length > 0);
      assert.ok(result.errors.every((e) => e.path.startsWith('$')));
    }
  });

  test('fills every default', () => {
    const result = validateWorkflow(minimalWorkflow());
    assert.equal(result.ok, true);
    assert.deepEqual(result.ok && result.workflow, fullWorkflow());
  });

  test('does not change the document it is given', () => {
    const doc = minimalWorkflow();
    const before = JSON.stringify(doc);
    validateWorkflow(doc);
    assert.equal(JSON.stringify(doc), before);
  });

  test('sizes count the stored form (defaults filled): what validates also validates again once stored', () => {
    // Exactly 2 MiB as written, but every default left out: the stored form is larger.
    const doc = minimalWorkflow();
    doc.agents.main.instructions = '';
    padTo(
      LIMITS.workflowJsonBytes,
      () => jsonBytes(doc),
      () => doc.agents.main.instructions,
      (v) => {
        doc.agents.main.instructions = v;
      },
    );
    const result = validateWorkflow(doc);
    assert.deepEqual(pairs(result.errors), [['limit_exceeded', '$']]);
    assert.match(result.errors[0]!.message, /defaults filled/);

    const fits = workflowOfBytes(LIMITS.workflowJsonBytes);
    const stored = parseWorkflow(fits);
    assert.equal(jsonBytes(stored), LIMITS.workflowJsonBytes);
    assert.deepEqual(parseWorkflow(stored), stored);
  });

  test('parseWorkflow throws one invalid_workflow SdkError carrying every issue', () => {
    const doc = changed((d) => {
      d.extra = 1;
      d.agents.main.mcpServers[0].project = 'nope';
    });
    assert.throws(
      () => parseWorkflow(doc),
      (error: unknown) => {
        const e = error as { code: string; remedy: string; data: { errors: ValidationIssue[] } };
        assert.equal(e.code, 'invalid_workflow');
        assert.ok(e.remedy.length > 0);
        assert.deepEqual(pairs(e.data.errors), [
          ['unknown_reference', `${ENTRY0}.project`],
          ['invalid_workflow', '$.extra'],
        ]);
        return true;
      },
    );
  });
});
